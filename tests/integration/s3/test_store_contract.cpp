// The destination contract (store/mirror_store.hpp): the same assertions against both stores, a
// local directory (LocalStore) and a prefix in a real Ceph RADOS Gateway bucket (S3Store).
// --delete, verify --extra, the no-op's check, the audit and its repair are written once over
// this interface; what holds here holds for them on either destination.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "integration/s3/ceph_fixture.hpp"
#include "rpmirror/checksum.hpp"
#include "store/local_store.hpp"
#include "store/s3_store.hpp"
#include "support/source_tree.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror::test {
namespace {

enum class Kind { Local, S3 };

class StoreContractTest : public CephS3Test, public ::testing::WithParamInterface<Kind> {
  protected:
    // Puts `body` at `key` of the mirror, as another run (or another program) would have.
    void put(const std::string& key, const std::string& body) {
        if (GetParam() == Kind::Local) {
            TempDir::write_at(tmp_ / "mirror" / key, body);
        } else {
            auto stored = client().put_object(bucket(), prefix() + key, body);
            ASSERT_TRUE(stored) << stored.error().to_string();
        }
    }

    // A store of the mirror, as one run opens it (an S3 store lists the prefix once).
    std::unique_ptr<store::MirrorStore> open() {
        if (GetParam() == Kind::Local) {
            return std::make_unique<store::LocalStore>(tmp_ / "mirror", tmp_ / "state");
        }
        return std::make_unique<store::S3Store>(client(), s3::S3Location{bucket(), prefix()});
    }

    static std::string prefix() { return "mirror/repo/"; }

    // The mirror every test starts from: three packages and what is not a package.
    void put_mirror() {
        put("Packages/a.rpm", "aaa");
        put("Packages/sub/b.rpm", "bbbbb");
        put("top.rpm", "t");
        put("Packages/notes.txt", "not a package");
        put("Packages/a.rpm.part", "a partial download");
        put("repodata/repomd.xml", "<repomd/>");
        put("repodata/inside.rpm", "metadata");
        put(".repodata.staging-1/staged.rpm", "a staging directory");
        put(".rpmirror/kept.rpm", "rpmirror's own");
    }

    static std::set<std::string> keys_of(const store::Listing& listing) {
        std::set<std::string> keys;
        for (const auto& [key, file] : listing) {
            keys.insert(key);
        }
        return keys;
    }

    TempDir tmp_;
};

TEST_P(StoreContractTest, ListsThePackagesAndNothingElse) {
    put_mirror();
    auto store = open();
    const auto listed = store->list_packages();
    ASSERT_TRUE(listed) << listed.error().to_string();
    EXPECT_EQ(keys_of(*listed),
              (std::set<std::string>{"Packages/a.rpm", "Packages/sub/b.rpm", "top.rpm"}));
    EXPECT_EQ(listed->at("Packages/a.rpm").size, 3U);
    EXPECT_EQ(listed->at("Packages/sub/b.rpm").size, 5U);
    EXPECT_FALSE(listed->at("top.rpm").version.empty());
}

TEST_P(StoreContractTest, AnEmptyMirrorHoldsNothing) {
    auto store = open();
    const auto listed = store->list_packages();
    ASSERT_TRUE(listed) << listed.error().to_string();
    EXPECT_TRUE(listed->empty());
    const auto absent = store->stat("repodata/repomd.xml");
    ASSERT_TRUE(absent) << absent.error().to_string();
    EXPECT_FALSE(*absent);
}

TEST_P(StoreContractTest, StatGivesTheSizeAndAVersionThatChangesWithTheContent) {
    put_mirror();
    const auto before = open()->stat("repodata/repomd.xml");
    ASSERT_TRUE(before && *before);
    EXPECT_EQ((*before)->size, 9U);
    const auto absent = open()->stat("Packages/none.rpm");
    ASSERT_TRUE(absent);
    EXPECT_FALSE(*absent);
    put("repodata/repomd.xml", "<other/>!");  // same size, other content
    const auto after = open()->stat("repodata/repomd.xml");
    ASSERT_TRUE(after && *after);
    EXPECT_EQ((*after)->size, 9U);
    EXPECT_NE((*after)->version, (*before)->version);
}

TEST_P(StoreContractTest, FilesUnchangedSeesARewriteAndARemoval) {
    put_mirror();
    const auto recorded = open()->list_packages();
    ASSERT_TRUE(recorded);
    EXPECT_TRUE(store::files_unchanged(*open(), *recorded));
    put("Packages/a.rpm", "AAA");
    EXPECT_FALSE(store::files_unchanged(*open(), *recorded));
    const auto rewritten = open()->list_packages();
    ASSERT_TRUE(rewritten);
    EXPECT_TRUE(store::files_unchanged(*open(), *rewritten));
    auto store = open();
    const std::vector<std::string> gone{"top.rpm"};
    ASSERT_TRUE(store->remove_packages(gone));
    EXPECT_FALSE(store::files_unchanged(*open(), *rewritten));
}

TEST_P(StoreContractTest, DeleteRemovesExactlyTheUnlistedPackages) {
    put_mirror();
    auto store = open();
    const auto unlisted = store::unlisted_packages(*store, {"Packages/a.rpm"});
    ASSERT_TRUE(unlisted) << unlisted.error().to_string();
    EXPECT_EQ(keys_of(*unlisted), (std::set<std::string>{"Packages/sub/b.rpm", "top.rpm"}));
    const auto deleted = store::delete_unlisted(*store, {"Packages/a.rpm"});
    ASSERT_TRUE(deleted) << deleted.error().to_string();
    EXPECT_EQ(*deleted, (std::vector<std::string>{"Packages/sub/b.rpm", "top.rpm"}));
    auto reopened = open();
    const auto left = reopened->list_packages();
    ASSERT_TRUE(left);
    EXPECT_EQ(keys_of(*left), (std::set<std::string>{"Packages/a.rpm"}));
    for (const char* kept :
         {"Packages/notes.txt", "Packages/a.rpm.part", "repodata/repomd.xml", "repodata/inside.rpm",
          ".repodata.staging-1/staged.rpm", ".rpmirror/kept.rpm"}) {
        const auto found = reopened->stat(kept);
        ASSERT_TRUE(found) << kept;
        EXPECT_TRUE(*found) << kept << " was removed";
    }
}

TEST_P(StoreContractTest, AnotherTreeNestedInTheMirrorIsNotListedNorDeleted) {
    put_mirror();
    // A repository (or a snapshot) below the mirror's root, and a snapshot being built.
    put("updates/repodata/repomd.xml", "<repomd/>");
    put("updates/Packages/u.rpm", "u");
    put("snapshots/r/s1/repodata/repomd.xml", "<repomd/>");
    put("snapshots/r/s1/Packages/a.rpm", "aaa");
    put("snapshots/r/.s2.creating-x1/Packages/a.rpm", "aaa");
    put("Packages/repodata-like/c.rpm", "c");  // a plain subdirectory stays the mirror's
    auto store = open();
    const auto listed = store->list_packages();
    ASSERT_TRUE(listed) << listed.error().to_string();
    EXPECT_EQ(keys_of(*listed),
              (std::set<std::string>{"Packages/a.rpm", "Packages/repodata-like/c.rpm",
                                     "Packages/sub/b.rpm", "top.rpm"}));
    const auto deleted = store::delete_unlisted(*store, {});
    ASSERT_TRUE(deleted) << deleted.error().to_string();
    auto reopened = open();
    for (const char* kept : {"updates/Packages/u.rpm", "snapshots/r/s1/Packages/a.rpm",
                             "snapshots/r/.s2.creating-x1/Packages/a.rpm"}) {
        const auto found = reopened->stat(kept);
        ASSERT_TRUE(found) << kept;
        EXPECT_TRUE(*found) << kept << " was removed";
    }
}

TEST_P(StoreContractTest, OnlyPackagesCanBeRemovedAndAbsentOnesAreLeftAlone) {
    put_mirror();
    auto store = open();
    const std::vector<std::string> metadata{"repodata/repomd.xml"};
    const auto refused = store->remove_packages(metadata);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, ErrorCode::BadInput);
    EXPECT_EQ(refused.error().subject, store->describe("repodata/repomd.xml"));
    const auto still = open()->stat("repodata/repomd.xml");
    ASSERT_TRUE(still && *still);

    const std::vector<std::string> absent{"Packages/gone.rpm"};
    const auto nothing = store->remove_packages(absent);
    ASSERT_TRUE(nothing) << nothing.error().to_string();
    EXPECT_TRUE(nothing->empty());
}

TEST_P(StoreContractTest, ReadGivesAFileWholeAndNotFoundForNone) {
    put_mirror();
    auto store = open();
    const auto repomd = store->read("repodata/repomd.xml");
    ASSERT_TRUE(repomd) << repomd.error().to_string();
    EXPECT_EQ(*repomd, "<repomd/>");
    const auto absent = store->read("repodata/none.xml");
    ASSERT_FALSE(absent);
    EXPECT_EQ(absent.error().code, ErrorCode::NotFound);
    TempDir scratch;
    const auto copy = store->local_copy("Packages/sub/b.rpm", scratch.path());
    ASSERT_TRUE(copy) << copy.error().to_string();
    EXPECT_EQ(read_file(*copy), "bbbbb");
}

TEST_P(StoreContractTest, HoldsBelowSaysWhetherADirectoryHasFiles) {
    put_mirror();
    auto store = open();
    const auto repodata = store->holds_below("repodata");
    ASSERT_TRUE(repodata) << repodata.error().to_string();
    EXPECT_TRUE(*repodata);
    const auto none = store->holds_below("nothing");
    ASSERT_TRUE(none) << none.error().to_string();
    EXPECT_FALSE(*none);
    const auto prefix_only = store->holds_below("Packages/a");  // a file name's prefix, no dir
    ASSERT_TRUE(prefix_only);
    EXPECT_FALSE(*prefix_only);
}

TEST_P(StoreContractTest, CheckFilesJudgesPresenceSizeAndDigestInOrder) {
    put_mirror();
    auto store = open();
    const std::string a_digest = hash_bytes(ChecksumType::Sha256, "aaa");
    const std::string other = hash_bytes(ChecksumType::Sha256, "other");
    const std::vector<store::ExpectedFile> files{
        {"Packages/a.rpm", ChecksumType::Sha256, a_digest, 3},
        {"Packages/gone.rpm", ChecksumType::Sha256, a_digest, 3},
        {"Packages/sub/b.rpm", ChecksumType::Sha256, other, 4},
        {"top.rpm", ChecksumType::Sha256, other, std::nullopt},
        {"Packages/a.rpm", ChecksumType::Sha256, a_digest, std::nullopt},
    };
    const auto checked = store->check_files(files, {2, /*use_cache=*/false});
    ASSERT_EQ(checked.size(), files.size());
    EXPECT_EQ(checked[0].finding, store::Finding::Intact);
    EXPECT_EQ(checked[0].bytes_read, 3U);
    EXPECT_FALSE(checked[0].from_cache);
    EXPECT_EQ(checked[1].finding, store::Finding::Missing);
    EXPECT_EQ(checked[2].finding, store::Finding::SizeMismatch);
    EXPECT_EQ(checked[2].actual_size, 5U);
    EXPECT_EQ(checked[3].finding, store::Finding::DigestMismatch);
    EXPECT_EQ(checked[3].actual_digest, hash_bytes(ChecksumType::Sha256, "t"));
    EXPECT_EQ(checked[3].actual_size, 1U);
    EXPECT_EQ(checked[4].finding, store::Finding::Intact);
}

TEST_P(StoreContractTest, RemoveFilesRemovesAnyKeyAndSkipsAbsentOnes) {
    put_mirror();
    auto store = open();
    const std::vector<std::string> keys{"repodata/inside.rpm", "Packages/gone.rpm", "top.rpm"};
    const auto removed = store->remove_files(keys);
    ASSERT_TRUE(removed) << removed.error().to_string();
    EXPECT_EQ(*removed, (std::vector<std::string>{"repodata/inside.rpm", "top.rpm"}));
    auto reopened = open();
    for (const char* key : {"repodata/inside.rpm", "top.rpm"}) {
        const auto found = reopened->stat(key);
        ASSERT_TRUE(found);
        EXPECT_FALSE(*found) << key << " is still there";
    }
    const auto kept = reopened->stat("Packages/a.rpm");
    ASSERT_TRUE(kept && *kept);
}

TEST_P(StoreContractTest, ANewMirrorRecordsNothingAndForgettingIsHarmless) {
    auto store = open();
    const auto recorded = store->recorded();
    ASSERT_TRUE(recorded) << recorded.error().to_string();
    EXPECT_FALSE(recorded->exists);
    EXPECT_FALSE(recorded->selection);
    EXPECT_TRUE(recorded->files.empty());
    EXPECT_TRUE(store->forget({"Packages/a.rpm"}));
    const auto still = open()->recorded();
    ASSERT_TRUE(still);
    EXPECT_FALSE(still->exists);
}

TEST_P(StoreContractTest, TheLockIsHeldByOneRunAtATime) {
    auto first = open();
    auto held = first->lock(std::nullopt, {});
    ASSERT_TRUE(held) << held.error().to_string();
    EXPECT_TRUE((*held)->confirm());
    auto second = open();
    const auto refused = second->lock(std::nullopt, {});
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, ErrorCode::Busy) << refused.error().to_string();
    held->reset();  // released
    const auto again = second->lock(std::nullopt, {});
    EXPECT_TRUE(again) << again.error().to_string();
}

TEST_P(StoreContractTest, DescribeNamesTheFileWhereItLives) {
    auto store = open();
    const std::string named = store->describe("Packages/a.rpm");
    if (GetParam() == Kind::Local) {
        EXPECT_EQ(named, (tmp_ / "mirror" / "Packages/a.rpm").string());
    } else {
        EXPECT_EQ(named, "s3://" + bucket() + "/" + prefix() + "Packages/a.rpm");
    }
}

INSTANTIATE_TEST_SUITE_P(BothStores, StoreContractTest, ::testing::Values(Kind::Local, Kind::S3),
                         [](const ::testing::TestParamInfo<Kind>& info) {
                             return std::string(info.param == Kind::Local ? "local" : "s3");
                         });

}  // namespace
}  // namespace rpmirror::test
