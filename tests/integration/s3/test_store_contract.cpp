// The destination contract (store/mirror_store.hpp): the same assertions against both stores, a
// local directory (LocalStore) and a prefix in a real Ceph RADOS Gateway bucket (S3Store).
// --delete, verify --extra, the no-op, a sync's publication, the audit and its repair are written
// once over this interface; what holds here holds for them on either destination.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "checksum/hasher.hpp"
#include "fs/state.hpp"
#include "integration/s3/ceph_fixture.hpp"
#include "publish/publish.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "s3/config.hpp"
#include "s3/mirror_state.hpp"
#include "store/local_store.hpp"
#include "store/s3_store.hpp"
#include "store/source_record.hpp"
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

    // A store opened as a sync opens it: a LocalStore, or an S3Store over the sync's own listing
    // and state (store::SyncStore's in a sync).
    struct ForSync {
        std::map<std::string, s3::ListedObject> listing;
        s3::MirrorState state;
        std::set<std::string> uploaded;
        std::unique_ptr<store::MirrorStore> store;
    };
    std::unique_ptr<ForSync> open_for_sync() {
        auto opened = std::make_unique<ForSync>();
        if (GetParam() == Kind::Local) {
            opened->store = std::make_unique<store::LocalStore>(tmp_ / "mirror", tmp_ / "state");
            return opened;
        }
        const s3::S3Location repo{bucket(), prefix()};
        auto listing = s3::list_mirror(client(), repo);
        auto state = s3::load_state(client(), repo);
        EXPECT_TRUE(listing && state);
        if (listing) {
            opened->listing = std::move(*listing);
        }
        if (state && *state) {
            opened->state = std::move(**state);
        }
        // What the sync's placement stage does for each package it uploads or keeps: the state
        // records it with its ETag and checksum (record_sync records no package it does not).
        for (const auto& [key, object] : opened->listing) {
            if (store::is_package_key(key) && !opened->state.objects.contains(key)) {
                opened->state.objects[key] = {object.size, object.etag, ChecksumType::Sha256,
                                              std::string(64, '0')};
            }
        }
        store::S3SyncView view;
        view.listing = &opened->listing;
        view.state = &opened->state;
        view.stored_now = &opened->uploaded;
        view.part_size = std::uint64_t{5} << 20;  // S3's smallest part
        view.confirm_lease = [] { return Result<void>{}; };
        opened->store = std::make_unique<store::S3Store>(client(), repo, std::move(view));
        return opened;
    }

    // Publishes, with `store`, a repomd.xml listing one record holding `record` (staged where a
    // sync stages: beside repodata/ on disk, in a spool for a bucket), then records the sync.
    // Returns the record's key.
    std::string publish(store::MirrorStore& store, const std::string& record,
                        std::optional<std::string> signature) {
        auto stage =
            MetadataStage::create(GetParam() == Kind::Local ? tmp_ / "mirror" : tmp_ / "spool");
        EXPECT_TRUE(stage);
        const std::string digest = hash_bytes(ChecksumType::Sha256, record);
        const std::string name = digest + "-primary.xml.gz";
        TempDir::write_at(stage->dir() / name, record);
        store::MetadataRelease release;
        release.stage = &*stage;
        release.repomd_xml =
            "<repomd xmlns=\"http://linux.duke.edu/metadata/repo\">\n"
            "  <data type=\"primary\">\n"
            "    <checksum type=\"sha256\">" +
            digest +
            "</checksum>\n"
            "    <location href=\"repodata/" +
            name +
            "\"/>\n"
            "    <size>" +
            std::to_string(record.size()) +
            "</size>\n"
            "  </data>\n"
            "</repomd>\n";
        release.signature = std::move(signature);
        EXPECT_TRUE(store.ready_packages());
        const auto published = store.publish_metadata(release);
        EXPECT_TRUE(published) << published.error().to_string();
        store::SyncRecord sync;
        sync.repomd_sha256 = hash_bytes(ChecksumType::Sha256, release.repomd_xml);
        sync.fingerprint = "options";
        sync.packages = {"Packages/a.rpm"};
        sync.metadata = {"comps.xml", "repodata/repomd.xml", "repodata/" + name};
        if (release.signature) {
            sync.metadata.emplace_back("repodata/repomd.xml.asc");
        }
        std::vector<std::string> warnings;
        const auto recorded = store.record_sync(sync, warnings);
        EXPECT_TRUE(recorded) << recorded.error().to_string();
        EXPECT_TRUE(warnings.empty());
        return "repodata/" + name;
    }

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
    // Another mirror of packages only (dnf reposync's default: no repodata/), synced into a
    // directory below by another command line: its state says so (a bucket mirror's own object,
    // a local mirror's entry in the state directory).
    put("pkgs/Packages/p.rpm", "p");
    if (GetParam() == Kind::Local) {
        SyncState state;
        state.files.push_back(*stat_for_state(tmp_ / "mirror" / "pkgs", "Packages/p.rpm"));
        ASSERT_TRUE(
            write_sync_state(sync_state_path(tmp_ / "state", tmp_ / "mirror" / "pkgs"), state));
    } else {
        put("pkgs/.rpmirror/state.json", "{}");
    }
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
                             "snapshots/r/.s2.creating-x1/Packages/a.rpm", "pkgs/Packages/p.rpm"}) {
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
    // An intact file's version is the one checked: what a copy pins (a snapshot's).
    const auto now = store->stat("Packages/a.rpm");
    ASSERT_TRUE(now && *now);
    EXPECT_EQ(checked[0].version, (*now)->version);
    EXPECT_FALSE(checked[0].version.empty());
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

TEST_P(StoreContractTest, AReadersLockExcludesASyncAndIsExcludedByOne) {
    // lock_present is the lock a snapshot takes: the same lock as a sync's, both ways.
    put_mirror();
    const auto busy = [](const Result<std::unique_ptr<RepoLock>>& taken) {
        return !taken && taken.error().code == ErrorCode::Busy;
    };
    auto reader = open();
    auto sync = open();
    auto snapshot = reader->lock_present(std::nullopt);
    ASSERT_TRUE(snapshot) << snapshot.error().to_string();
    EXPECT_TRUE((*snapshot)->confirm());
    EXPECT_TRUE(busy(sync->lock(std::nullopt, {})));
    snapshot->reset();
    auto synced = sync->lock(std::nullopt, {});
    ASSERT_TRUE(synced) << synced.error().to_string();
    EXPECT_TRUE(busy(reader->lock_present(std::nullopt)));
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

// record_of: one place per named record of the files beneath a key, read and written through
// the store it names; where earlier versions kept the source record and the release clock (so an
// upgraded mirror finds them), never a package, and apart from the mirror's tree iff on disk.
TEST_P(StoreContractTest, ARecordIsKeptWhereTheStoreSaysAndIsNoPackage) {
    put_mirror();
    auto store = open();
    const auto before = store->list_packages();
    ASSERT_TRUE(before) << before.error().to_string();
    store::RecordPlace clock = store->record_of("guids/G1/x86_64", "release");
    ASSERT_TRUE(clock.objects->put(clock.key, "100\n"));
    const store::RecordPlace again = open()->record_of("guids/G1/x86_64", "release");
    EXPECT_EQ(again.key, clock.key);
    const auto text = again.objects->read(again.key);
    ASSERT_TRUE(text) << text.error().to_string();
    EXPECT_EQ(*text, "100\n");
    const store::RecordPlace other = store->record_of("guids/G2/x86_64", "release");
    EXPECT_NE(other.objects->describe(other.key), clock.objects->describe(clock.key));
    const store::RecordPlace source = store->record_of("", "source.repo");
    if (GetParam() == Kind::Local) {
        EXPECT_TRUE(clock.apart);
        const std::string entry =
            rpmirror::fs::state_entry(tmp_ / "state", tmp_ / "mirror" / "guids/G1/x86_64").string();
        EXPECT_EQ(clock.objects->describe(clock.key), entry + ".release");
        EXPECT_EQ(
            source.objects->describe(source.key),
            rpmirror::fs::state_entry(tmp_ / "state", tmp_ / "mirror").string() + ".source.repo");
        EXPECT_FALSE(std::filesystem::exists(tmp_ / "mirror" / "guids"));
    } else {
        EXPECT_FALSE(clock.apart);
        EXPECT_EQ(clock.key, "guids/G1/x86_64/.rpmirror/release");
        EXPECT_EQ(source.key, std::string(store::kSourceRecordKey));
        const auto stored = client().get_object(bucket(), prefix() + clock.key);
        ASSERT_TRUE(stored) << stored.error().to_string();
        EXPECT_EQ(*stored, "100\n");
    }
    const auto after = open()->list_packages();
    ASSERT_TRUE(after) << after.error().to_string();
    EXPECT_EQ(*after, *before);
}

TEST_P(StoreContractTest, ASyncsPublicationIsReadBackAndRecordedWithEveryVersion) {
    put("Packages/a.rpm", "aaa");
    const auto sync = open_for_sync();
    ASSERT_TRUE(sync->store->write_document("comps.xml", "<comps/>"));
    const std::string record = publish(*sync->store, "records", "SIGNED");
    auto store = open();
    for (const auto& [key, body] :
         std::map<std::string, std::string>{{"comps.xml", "<comps/>"},
                                            {record, "records"},
                                            {"repodata/repomd.xml.asc", "SIGNED"}}) {
        const auto read = store->read(key);
        ASSERT_TRUE(read) << key << ": " << read.error().to_string();
        EXPECT_EQ(*read, body) << key;
    }
    const auto index = store->read("repodata/repomd.xml");
    ASSERT_TRUE(index);
    EXPECT_NE(index->find(record), std::string::npos);
    const auto recorded = open()->recorded();
    ASSERT_TRUE(recorded) << recorded.error().to_string();
    EXPECT_EQ(recorded->repomd_sha256, hash_bytes(ChecksumType::Sha256, *index));
    EXPECT_EQ(recorded->fingerprint, "options");
    EXPECT_EQ(recorded->packages, std::vector<std::string>{"Packages/a.rpm"});
    ASSERT_TRUE(recorded->versions);
    EXPECT_EQ(keys_of(*recorded->versions),
              (std::set<std::string>{"Packages/a.rpm", "comps.xml", "repodata/repomd.xml",
                                     "repodata/repomd.xml.asc", record}));
    EXPECT_TRUE(store::files_unchanged(*open(), *recorded->versions));
    // Any file it recorded, rewritten with the same size, is a change: metadata as packages.
    put("repodata/repomd.xml.asc", "SIGNEE");
    EXPECT_FALSE(store::files_unchanged(*open(), *recorded->versions));
}

TEST_P(StoreContractTest, ANewIndexWithoutASignatureRemovesTheOldSignature) {
    put("Packages/a.rpm", "aaa");
    publish(*open_for_sync()->store, "first", "SIGNED");
    const std::string second = publish(*open_for_sync()->store, "second", std::nullopt);
    auto store = open();
    const auto index = store->read("repodata/repomd.xml");
    ASSERT_TRUE(index);
    EXPECT_NE(index->find(second), std::string::npos);
    const auto signature = store->stat("repodata/repomd.xml.asc");
    ASSERT_TRUE(signature);
    EXPECT_FALSE(*signature) << "a signature of another index is left beside it";
    const auto record = store->read(second);
    ASSERT_TRUE(record);
    EXPECT_EQ(*record, "second");
}

INSTANTIATE_TEST_SUITE_P(BothStores, StoreContractTest, ::testing::Values(Kind::Local, Kind::S3),
                         [](const ::testing::TestParamInfo<Kind>& info) {
                             return std::string(info.param == Kind::Local ? "local" : "s3");
                         });

// Only a bucket's store needs the sync's state to publish (a directory holds everything it needs).
class S3StoreOpenedToAuditTest : public CephS3Test {};

TEST_F(S3StoreOpenedToAuditTest, PublishesNothing) {
    store::S3Store store(client(), s3::S3Location{bucket(), "mirror/repo/"});
    const auto refused = store.write_document("comps.xml", "<comps/>");
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, ErrorCode::Unsupported) << refused.error().to_string();
    EXPECT_FALSE(store.ready_packages());
    std::vector<std::string> warnings;
    EXPECT_FALSE(store.record_sync({}, warnings));
    const auto absent = store.stat("comps.xml");
    ASSERT_TRUE(absent);
    EXPECT_FALSE(*absent);
}

}  // namespace
}  // namespace rpmirror::test
