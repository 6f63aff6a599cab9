// The record of what rpmirror stored beneath a root (sync/stored_record.hpp): kept in the state
// directory for a directory, and --delete's collection over any ObjectStore (here in memory).
#include <sys/stat.h>

#include <gtest/gtest.h>

#include "plan/plan.hpp"

#include "store/local_store.hpp"
#include "store/object_store.hpp"
#include "support/temp_dir.hpp"
#include "sync/stored_record.hpp"

namespace rpmirror::test {
namespace {

// The record of `store`'s file `key` as it is now.
StoredEntry entry_of(store::ObjectStore& store, const std::string& key) {
    auto now = store.stat(key);
    EXPECT_TRUE(now && *now) << key;
    return now && *now ? StoredEntry{(*now)->size, (*now)->version, ChecksumType::Sha256, "ab"}
                       : StoredEntry{};
}

// --delete removes what the record holds, nothing lists and is unchanged; a changed file stays
// with a warning; a listed one, and a file never recorded, stay; what is gone is forgotten.
TEST(StoredRecord, CollectRemovesOnlyUnlistedFilesStillAsStored) {
    const TempDir dir;
    store::LocalStore local(dir.path() / "tree", dir.path() / "state");
    auto record = StoredRecord::load(local, {".images", ".rpmirror/images.json"});
    ASSERT_TRUE(record) << record.error().to_string();
    EXPECT_TRUE(record->files().empty());

    auto objects = store::memory_object_store();
    for (const char* key : {"images/old.img", "images/changed.img", "images/listed.img",
                            "images/admin.img", "images/gone.img"}) {
        ASSERT_TRUE(objects->put(key, key));
    }
    for (const char* key :
         {"images/old.img", "images/changed.img", "images/listed.img", "images/gone.img"}) {
        record->files()[key] = entry_of(*objects, key);
    }
    ASSERT_TRUE(objects->put("images/changed.img", "someone else's"));
    const std::string gone = "images/gone.img";
    ASSERT_TRUE(objects->remove(std::span(&gone, 1)));

    std::vector<std::string> warnings;
    auto removed = collect_unlisted(*objects, *record, {"images/listed.img"}, warnings);
    ASSERT_TRUE(removed) << removed.error().to_string();
    EXPECT_EQ(*removed, std::vector<std::string>{"images/old.img"});
    ASSERT_EQ(warnings.size(), 1U);
    EXPECT_NE(warnings[0].find("images/changed.img"), std::string::npos) << warnings[0];
    auto left = objects->list("images");
    ASSERT_TRUE(left);
    std::vector<std::string> keys;
    for (const auto& [key, info] : *left) {
        keys.push_back(key);
    }
    EXPECT_EQ(keys, (std::vector<std::string>{"images/admin.img", "images/changed.img",
                                              "images/listed.img"}));
    ASSERT_EQ(record->files().size(), 1U);
    EXPECT_TRUE(record->files().contains("images/listed.img"));
}

// On disk the record is a catalogue in the state directory: what is saved is read back with the
// local versions it recorded (checksums are not kept there), and no ACL is recorded.
TEST(StoredRecord, ADirectorysRecordIsKeptInTheStateDirectory) {
    const TempDir dir;
    auto objects = store::disk_object_store(dir.path() / "tree");
    ASSERT_TRUE(objects->put("images/a.img", "a"));
    store::LocalStore local(dir.path() / "tree", dir.path() / "state");
    {
        auto record = StoredRecord::load(local, {".images", ".rpmirror/images.json"});
        ASSERT_TRUE(record);
        EXPECT_FALSE(record->acl());
        record->files()["images/a.img"] = entry_of(*objects, "images/a.img");
        auto saved = record->save(nullptr);
        ASSERT_TRUE(saved) << saved.error().to_string();
    }
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "tree" / ".images"));
    auto again = StoredRecord::load(local, {".images", ".rpmirror/images.json"});
    ASSERT_TRUE(again);
    ASSERT_EQ(again->files().size(), 1U);
    auto now = objects->stat("images/a.img");
    ASSERT_TRUE(now && *now);
    EXPECT_TRUE(again->files().at("images/a.img").still(**now));
    EXPECT_TRUE(again->files().at("images/a.img").digest.empty());
}

// A directory's record written where and as earlier versions wrote it (a sync state at
// sync_state_path(state_dir, root/<catalogue>), through the plan's own writer) is read with the
// versions it recorded: an upgraded mirror keeps what its record vouches for, nothing re-fetched.
TEST(StoredRecord, ARecordAnEarlierVersionWroteIsRead) {
    const TempDir dir;
    auto objects = store::disk_object_store(dir.path() / "tree");
    ASSERT_TRUE(objects->put("images/a.img", "a"));
    struct ::stat st {};
    ASSERT_EQ(::lstat((dir.path() / "tree/images/a.img").c_str(), &st), 0);
    SyncState old;
    old.files.push_back(state_file_of("images/a.img", st));
    ASSERT_TRUE(write_sync_state(
        sync_state_path(dir.path() / "state", dir.path() / "tree" / ".images"), old));

    store::LocalStore local(dir.path() / "tree", dir.path() / "state");
    auto record = StoredRecord::load(local, {".images", ".rpmirror/images.json"});
    ASSERT_TRUE(record) << record.error().to_string();
    ASSERT_EQ(record->files().size(), 1U);
    auto now = objects->stat("images/a.img");
    ASSERT_TRUE(now && *now);
    EXPECT_TRUE(record->files().at("images/a.img").still(**now));
    EXPECT_EQ(record->files().at("images/a.img").size, 1U);
}

}  // namespace
}  // namespace rpmirror::test
