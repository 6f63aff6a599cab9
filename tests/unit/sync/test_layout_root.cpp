// An --upstream-layout root's releases and blobs (sync/layout_root.hpp), collected over a store in
// memory: --keep-releases removes the releases synced longest ago (their mirror lists first) and
// finishes what a killed run began; --delete removes the blobs rpmirror stored that no repository
// lists any more, and nothing while a repository cannot be read.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "fs/state.hpp"
#include "store/local_store.hpp"
#include "store/object_store.hpp"
#include "support/temp_dir.hpp"
#include "sync/layout_root.hpp"

namespace rpmirror::test {
namespace {

class Held final : public RepoLock {};

class LayoutRootCollection : public ::testing::Test {
  protected:
    LayoutRootCollection()
        : local_(dir_.path() / "root", dir_.path() / "state"),
          objects_(store::memory_object_store()),
          clock_(ReleaseClock::in_objects(*objects_)) {
        for (const char* guid : {"G1", "G2", "G3", "G9"}) {
            const std::string tree = std::string("guids/") + guid + "/x86_64";
            put(tree + "/repodata/repomd.xml", "<repomd/>");
            put(tree + "/repodata/primary.xml.gz", "primary");
            put(tree + "/Packages/own.rpm", guid);
        }
        put("mirrors/1.0/x86_64/mirror.list", "http://m/guids/G1/x86_64/\n");
        put("mirrors/2.0/x86_64/mirror.list", "http://m/guids/G2/x86_64/\n");
        // Synced by rpmirror: G1 longest ago; G9 is an admin's.
        put("guids/G1/x86_64/.rpmirror/release", "100\n");
        put("guids/G2/x86_64/.rpmirror/release", "200\n");
        put("guids/G3/x86_64/.rpmirror/release", "300\n");
        for (const char* blob : {"blobstore/aa/a.rpm", "blobstore/bb/b.rpm", "blobstore/cc/c.rpm",
                                 "blobstore/dd/admin.rpm"}) {
            put(blob, blob);
        }
        listed_ = {{"guids/G1/x86_64", {"blobstore/aa/a.rpm", "blobstore/bb/b.rpm"}},
                   {"guids/G2/x86_64", {"blobstore/bb/b.rpm"}},
                   {"guids/G3/x86_64", {"blobstore/bb/b.rpm", "blobstore/cc/c.rpm"}},
                   {"guids/G9/x86_64", {"blobstore/cc/c.rpm"}}};
    }

    void put(const std::string& key, const std::string& bytes) {
        ASSERT_TRUE(objects_->put(key, bytes)) << key;
    }

    // The catalogue, holding every blob but the admin's as stored now.
    StoredRecord catalogue() {
        auto record = StoredRecord::load(local_, layout_catalogue_name());
        EXPECT_TRUE(record);
        for (const char* blob :
             {"blobstore/aa/a.rpm", "blobstore/bb/b.rpm", "blobstore/cc/c.rpm"}) {
            auto now = objects_->stat(blob);
            EXPECT_TRUE(now && *now) << blob;
            record->files()[blob] =
                StoredEntry{(*now)->size, (*now)->version, ChecksumType::Sha256, {}};
        }
        return std::move(*record);
    }

    Result<LayoutRemovals> collect(StoredRecord& record, unsigned keep) {
        const ListedBy listed_by =
            [this](const std::string& tree) -> Result<std::vector<std::string>> {
            if (unreadable_.contains(tree)) {
                return make_error(ErrorCode::Corrupt, "damaged primary.xml", tree);
            }
            return listed_[tree];
        };
        const LockRelease lock =
            [this](const std::string& tree) -> Result<std::unique_ptr<RepoLock>> {
            if (busy_.contains(tree)) {
                return make_error(ErrorCode::Busy, "locked by another run", tree);
            }
            return std::unique_ptr<RepoLock>(std::make_unique<Held>());
        };
        return collect_layout(*objects_, record, *clock_, {"guids/G3/x86_64", keep, "http://m/"},
                              listed_by, lock, warnings_);
    }

    std::set<std::string> keys(const std::string& prefix) {
        auto listed = objects_->list(prefix);
        EXPECT_TRUE(listed);
        std::set<std::string> keys;
        for (const auto& [key, info] : *listed) {
            keys.insert(key);
        }
        return keys;
    }

    std::vector<std::string> dirs(const std::string& prefix) {
        auto listed = objects_->list_dirs(prefix);
        EXPECT_TRUE(listed);
        return listed ? *listed : std::vector<std::string>{};
    }

    bool warned(const std::string& text) const {
        for (const std::string& warning : warnings_) {
            if (warning.find(text) != std::string::npos) {
                return true;
            }
        }
        return false;
    }

    const TempDir dir_;
    store::LocalStore local_;
    std::unique_ptr<store::ObjectStore> objects_;
    std::unique_ptr<ReleaseClock> clock_;
    std::map<std::string, std::vector<std::string>> listed_;
    std::set<std::string> unreadable_;
    std::set<std::string> busy_;
    std::vector<std::string> warnings_;
};

// --keep-releases 2: of the other releases rpmirror synced, the one synced longest ago goes
// (its mirror list, all of it, its directories), the admin's stays with a warning; then the blob
// only it listed goes, and its directory; the admin's blob and those still listed stay.
TEST_F(LayoutRootCollection, TheReleaseSyncedLongestAgoGoesThenTheBlobsOnlyItListed) {
    StoredRecord record = catalogue();
    auto removed = collect(record, 2);
    ASSERT_TRUE(removed) << removed.error().to_string();
    EXPECT_EQ(removed->releases, std::vector<std::string>{"guids/G1/x86_64"});
    EXPECT_EQ(removed->files,
              (std::vector<std::string>{"mirrors/1.0/x86_64/mirror.list", "blobstore/aa/a.rpm"}));
    EXPECT_TRUE(keys("guids/G1").empty());
    EXPECT_EQ(dirs("guids"), (std::vector<std::string>{"G2", "G3", "G9"}));
    EXPECT_EQ(dirs("mirrors"), std::vector<std::string>{"2.0"});
    EXPECT_EQ(dirs("blobstore"), (std::vector<std::string>{"bb", "cc", "dd"}));
    EXPECT_TRUE(keys(".rpmirror").empty()) << "the record of the removal is gone";
    EXPECT_TRUE(warned("memory:guids/G9/x86_64/ was not synced by rpmirror: left in place"));
    EXPECT_EQ(record.files().size(), 2U);
    EXPECT_FALSE(record.files().contains("blobstore/aa/a.rpm"));
    for (const char* kept :
         {"guids/G2/x86_64/repodata/repomd.xml", "guids/G3/x86_64/Packages/own.rpm",
          "blobstore/dd/admin.rpm", "mirrors/2.0/x86_64/mirror.list"}) {
        EXPECT_TRUE(keys("").contains(kept)) << kept;
    }
}

// A removal a killed run began (its record there, its index already gone, so no repository
// any more) is finished by the next, ranked or not; a release locked by another run stays.
TEST_F(LayoutRootCollection, ARemovalAKilledRunBeganIsFinishedAndALockedReleaseStays) {
    put(".rpmirror/removing/guids/G9/x86_64", "guids/G9/x86_64\n");
    // Its index gone, and a directory it emptied before its rmdir.
    put("guids/G9/x86_64/emptied/deeper/x", "x");
    const std::vector<std::string> gone{"guids/G9/x86_64/repodata/repomd.xml",
                                        "guids/G9/x86_64/emptied/deeper/x"};
    ASSERT_TRUE(objects_->remove(gone));
    busy_.insert("guids/G1/x86_64");
    StoredRecord record = catalogue();
    auto removed = collect(record, 1);
    ASSERT_TRUE(removed) << removed.error().to_string();
    EXPECT_EQ(removed->releases, (std::vector<std::string>{"guids/G9/x86_64", "guids/G2/x86_64"}));
    EXPECT_EQ(dirs("guids"), (std::vector<std::string>{"G1", "G3"}));
    EXPECT_TRUE(warned("--keep-releases: memory:guids/G1/x86_64/ not removed: "));
    EXPECT_TRUE(keys(".rpmirror").empty());
    // G1 stays and lists a and b; G3 lists b and c: no blob goes.
    EXPECT_EQ(dirs("blobstore"), (std::vector<std::string>{"aa", "bb", "cc", "dd"}));
    EXPECT_EQ(record.files().size(), 3U);
}

// A repository that cannot be read removes no blob (a warning), and a blob that changed since
// rpmirror stored it is left in place.
TEST_F(LayoutRootCollection, NoBlobGoesWhileARepositoryCannotBeReadNorOneThatChanged) {
    listed_.erase("guids/G1/x86_64");
    listed_["guids/G1/x86_64"] = {};
    unreadable_.insert("guids/G9/x86_64");
    StoredRecord record = catalogue();
    auto removed = collect(record, 0);
    ASSERT_TRUE(removed) << removed.error().to_string();
    EXPECT_TRUE(removed->files.empty());
    EXPECT_TRUE(warned("no blob deleted: the repositories beneath memory: cannot all be read"));
    EXPECT_EQ(record.files().size(), 3U);

    unreadable_.clear();
    put("blobstore/aa/a.rpm", "someone else's");
    auto again = collect(record, 0);
    ASSERT_TRUE(again) << again.error().to_string();
    EXPECT_TRUE(again->files.empty());
    EXPECT_TRUE(warned("memory:blobstore/aa/a.rpm: nothing lists it any more, but it changed"));
    EXPECT_TRUE(keys("blobstore/aa").contains("blobstore/aa/a.rpm"));
    EXPECT_EQ(record.files().size(), 2U) << "forgotten";
}

// A directory's clock, one clock over the store's record place: each release's record lies in
// the state directory beside its state entry, where earlier versions kept it (read after an
// upgrade), nothing written in the tree; a release is named by its path, an unrecorded one
// "with this state directory", and forgetting it removes its record.
TEST(ReleaseClock, ADirectorysClockIsKeptBesideTheReleasesStateEntry) {
    const TempDir dir;
    const std::filesystem::path root = dir.path() / "root";
    const std::filesystem::path state = dir.path() / "state";
    store::LocalStore local(root, state);
    auto objects = store::disk_object_store(root);
    const auto entry = [&](const std::string& tree) {
        return std::filesystem::path(rpmirror::fs::state_entry(state, root / tree).string() +
                                     ".release");
    };
    TempDir::write_at(entry("guids/G1/x86_64"), "100\n");  // as an earlier version wrote it
    TempDir::write_at(entry("guids/G4/x86_64"), "not a time\n");
    auto clock = ReleaseClock::open(local, *objects);

    const auto old = clock->last_synced("guids/G1/x86_64");
    ASSERT_TRUE(old) << old.error().to_string();
    EXPECT_EQ(*old, std::optional<std::int64_t>(100));
    const auto none = clock->last_synced("guids/G2/x86_64");
    ASSERT_TRUE(none) << none.error().to_string();
    EXPECT_FALSE(*none);
    const auto corrupt = clock->last_synced("guids/G4/x86_64");
    ASSERT_FALSE(corrupt);
    EXPECT_EQ(corrupt.error().code, ErrorCode::Corrupt);

    ASSERT_TRUE(clock->mark("guids/G2/x86_64"));
    const auto marked = clock->last_synced("guids/G2/x86_64");
    ASSERT_TRUE(marked && *marked);
    EXPECT_GT(**marked, 100);
    EXPECT_TRUE(std::filesystem::is_regular_file(entry("guids/G2/x86_64")));
    EXPECT_FALSE(std::filesystem::exists(root)) << "nothing written in the tree";

    EXPECT_EQ(clock->shown("guids/G2/x86_64"), (root / "guids/G2/x86_64").string());
    EXPECT_EQ(clock->kept_by(), " with this state directory");
    clock->forget("guids/G1/x86_64");
    EXPECT_FALSE(std::filesystem::exists(entry("guids/G1/x86_64")));

    // The same clock over records beside the releases: named as prefixes, gone with them.
    auto memory = store::memory_object_store();
    auto beside = ReleaseClock::in_objects(*memory);
    ASSERT_TRUE(beside->mark("guids/G2/x86_64"));
    const auto stat = memory->stat("guids/G2/x86_64/.rpmirror/release");
    ASSERT_TRUE(stat && *stat);
    EXPECT_EQ(beside->shown("guids/G2/x86_64"), "memory:guids/G2/x86_64/");
    EXPECT_EQ(beside->kept_by(), "");
}

}  // namespace
}  // namespace rpmirror::test
