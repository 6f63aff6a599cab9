// The contract every ObjectStore keeps (store/object_store.hpp), written once and run against
// each store: memory and disk (tests/unit/store/test_object_store.cpp) and a bucket of the test
// suite's Ceph RADOS Gateway (tests/integration/s3/test_object_store_s3.cpp). Include it in one
// file per test binary, then INSTANTIATE_TEST_SUITE_P(Name, ObjectStoreContract, ...).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "checksum/hasher.hpp"
#include "fs/durable.hpp"
#include "fs/tree.hpp"
#include "s3/mirror_state.hpp"
#include "store/object_store.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror::test {

// One store under test and whatever keeps it alive (a temporary directory, a bucket).
struct StoreUnderTest {
    virtual ~StoreUnderTest() = default;
    virtual store::ObjectStore& store() = 0;
    // Another store of the same kind (another directory; another bucket of the endpoint; for a
    // wrapper, another store of its inner store's kind), for TreeBuild::copy_from.
    virtual store::ObjectStore* other() = 0;
};

struct StoreFactory {
    std::string name;
    std::function<std::unique_ptr<StoreUnderTest>()> make;
};

// gtest prints a parameter by its name.
inline void PrintTo(const StoreFactory& factory, std::ostream* out) {
    *out << factory.name;
}

inline std::string store_name(const ::testing::TestParamInfo<StoreFactory>& info) {
    return info.param.name;
}

class ObjectStoreContract : public ::testing::TestWithParam<StoreFactory> {
  protected:
    void SetUp() override {
        under_test_ = GetParam().make();
        ASSERT_NE(under_test_, nullptr);
    }

    store::ObjectStore& store() { return under_test_->store(); }
    store::ObjectStore* other() { return under_test_->other(); }

    void put(const std::string& key, const std::string& bytes) {
        auto put = store().put(key, bytes);
        ASSERT_TRUE(put) << key << ": " << put.error().to_string();
    }

    std::string read(const std::string& key) {
        auto read = store().read(key);
        EXPECT_TRUE(read) << key << ": " << read.error().to_string();
        return read ? *read : std::string();
    }

    std::set<std::string> keys(const std::string& prefix) {
        auto listed = store().list(prefix);
        EXPECT_TRUE(listed) << prefix << ": " << listed.error().to_string();
        std::set<std::string> keys;
        if (listed) {
            for (const auto& [key, info] : *listed) {
                keys.insert(key);
            }
        }
        return keys;
    }

    // A committed tree at `key` holding `files` (relative key -> content), copied from "live/".
    void make_tree(const std::string& key, const std::map<std::string, std::string>& files) {
        std::vector<store::CopyRequest> copies;
        for (const auto& [relative, bytes] : files) {
            put("live/" + relative, bytes);
            copies.push_back({"live/" + relative, relative, store::CopyMode::LinkOrCopy, {}});
        }
        auto build = store().build_tree(key, "snapshot");
        ASSERT_TRUE(build) << build.error().to_string();
        auto copied = (*build)->copy(copies, {});
        ASSERT_TRUE(copied) << copied.error().to_string();
        auto committed = (*build)->commit(nullptr);
        ASSERT_TRUE(committed) << committed.error().to_string();
    }

  private:
    std::unique_ptr<StoreUnderTest> under_test_;
};

TEST_P(ObjectStoreContract, PutThenReadAndStatGiveItBackAndAMissingKeyIsNone) {
    put("a/b/c.txt", "hello");
    EXPECT_EQ(read("a/b/c.txt"), "hello");
    auto stat = store().stat("a/b/c.txt");
    ASSERT_TRUE(stat) << stat.error().to_string();
    ASSERT_TRUE(stat->has_value());
    EXPECT_EQ((*stat)->size, 5U);
    EXPECT_FALSE((*stat)->version.empty());
    auto missing = store().stat("a/b/none.txt");
    ASSERT_TRUE(missing) << missing.error().to_string();
    EXPECT_FALSE(missing->has_value());
    auto unread = store().read("a/b/none.txt");
    ASSERT_FALSE(unread);
    EXPECT_EQ(unread.error().code, ErrorCode::NotFound);
}

TEST_P(ObjectStoreContract, ALocalCopyHoldsTheContentAndAMissingKeyIsNotFound) {
    put("repodata/repomd.xml", "<repomd/>");
    const TempDir scratch;
    auto copy = store().local_copy("repodata/repomd.xml", scratch.path());
    ASSERT_TRUE(copy) << copy.error().to_string();
    auto bytes = fs::read_file(*copy);
    ASSERT_TRUE(bytes) << bytes.error().to_string();
    EXPECT_EQ(*bytes, "<repomd/>");
    auto missing = store().local_copy("repodata/none.xml", scratch.path());
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().code, ErrorCode::NotFound) << missing.error().to_string();
    EXPECT_FALSE(store().local_copy("../escape.xml", scratch.path()));
}

TEST_P(ObjectStoreContract, PutReplacesTheContentAndChangesTheVersion) {
    put("doc.txt", "one");
    auto before = store().stat("doc.txt");
    ASSERT_TRUE(before && before->has_value());
    put("doc.txt", "two!");
    EXPECT_EQ(read("doc.txt"), "two!");
    auto after = store().stat("doc.txt");
    ASSERT_TRUE(after && after->has_value());
    EXPECT_EQ((*after)->size, 4U);
    EXPECT_NE((*after)->version, (*before)->version);
}

TEST_P(ObjectStoreContract, ListIsRecursiveAndKeepsToItsPrefix) {
    put("a/1", "1");
    put("a/b/2", "22");
    put("ab/3", "333");
    put("c", "4444");
    EXPECT_EQ(keys("a"), (std::set<std::string>{"a/1", "a/b/2"}));
    EXPECT_EQ(keys(""), (std::set<std::string>{"a/1", "a/b/2", "ab/3", "c"}));
    EXPECT_TRUE(keys("nothing").empty());
    auto listed = store().list("ab");
    ASSERT_TRUE(listed);
    EXPECT_EQ(listed->at("ab/3").size, 3U);

    auto dirs = store().list_dirs("");
    ASSERT_TRUE(dirs) << dirs.error().to_string();
    EXPECT_EQ(*dirs, (std::vector<std::string>{"a", "ab"}));
    auto below = store().list_dirs("a");
    ASSERT_TRUE(below);
    EXPECT_EQ(*below, std::vector<std::string>{"b"});
    auto none = store().list_dirs("nothing");
    ASSERT_TRUE(none);
    EXPECT_TRUE(none->empty());
}

TEST_P(ObjectStoreContract, WhatIsNoKeyIsRefused) {
    for (const std::string bad : {"../x", "/x", "a//b", "a/./b", "a/", ""}) {
        auto put = store().put(bad, "x");
        ASSERT_FALSE(put) << bad;
        EXPECT_EQ(put.error().code, ErrorCode::BadInput) << bad;
    }
    auto read = store().read("a/../../etc/passwd");
    ASSERT_FALSE(read);
    EXPECT_EQ(read.error().code, ErrorCode::BadInput);
}

TEST_P(ObjectStoreContract, CopyMakesTheSameContentAndRefusesASourceThatIsNotItsPin) {
    put("src/p.rpm", "package bytes");
    const std::vector<store::CopyRequest> plain{
        {"src/p.rpm", "dst/p.rpm", store::CopyMode::LinkOrCopy, {}},
        {"src/p.rpm", "dst/own.rpm", store::CopyMode::Copy, {}}};
    auto copied = store().copy(plain, {});
    ASSERT_TRUE(copied) << copied.error().to_string();
    EXPECT_EQ(read("dst/p.rpm"), "package bytes");
    EXPECT_EQ(read("dst/own.rpm"), "package bytes");

    auto stat = store().stat("src/p.rpm");
    ASSERT_TRUE(stat && stat->has_value());
    store::Pin pin;
    pin.size = (*stat)->size;
    pin.version = (*stat)->version;
    const std::vector<store::CopyRequest> pinned{
        {"src/p.rpm", "pinned/p.rpm", store::CopyMode::LinkOrCopy, pin}};
    ASSERT_TRUE(store().copy(pinned, {}));
    EXPECT_EQ(read("pinned/p.rpm"), "package bytes");

    put("src/p.rpm", "other bytes!!");  // replaced: no longer the pinned one
    const std::vector<store::CopyRequest> stale{
        {"src/p.rpm", "stale/p.rpm", store::CopyMode::LinkOrCopy, pin}};
    auto refused = store().copy(stale, {});
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, ErrorCode::Corrupt) << refused.error().to_string();
    auto left = store().stat("stale/p.rpm");
    ASSERT_TRUE(left);
    EXPECT_FALSE(left->has_value()) << "a refused copy leaves nothing";

    const std::vector<store::CopyRequest> missing{
        {"src/none.rpm", "dst/none.rpm", store::CopyMode::LinkOrCopy, {}}};
    auto from_nothing = store().copy(missing, {});
    ASSERT_FALSE(from_nothing);
    EXPECT_EQ(from_nothing.error().code, ErrorCode::NotFound) << from_nothing.error().to_string();
}

// A clone is a file of its own with the same content (a reflink, a server-side copy), or refused
// as Unsupported (a filesystem without reflinks), leaving nothing.
TEST_P(ObjectStoreContract, ACloneIsAFileOfItsOwnOrUnsupported) {
    put("src/p.rpm", "package bytes");
    const std::vector<store::CopyRequest> clone{
        {"src/p.rpm", "dst/p.rpm", store::CopyMode::Clone, {}}};
    auto cloned = store().copy(clone, {});
    if (!cloned) {
        EXPECT_EQ(cloned.error().code, ErrorCode::Unsupported) << cloned.error().to_string();
        auto left = store().stat("dst/p.rpm");
        ASSERT_TRUE(left);
        EXPECT_FALSE(left->has_value()) << "a refused clone leaves nothing";
        return;
    }
    EXPECT_EQ(read("dst/p.rpm"), "package bytes");
    auto stat = store().stat("dst/p.rpm");
    ASSERT_TRUE(stat && stat->has_value());
    EXPECT_EQ((*stat)->links, 1U);
    put("src/p.rpm", "other bytes!!");
    EXPECT_EQ(read("dst/p.rpm"), "package bytes") << "a clone shares no later change";
}

TEST_P(ObjectStoreContract, ATreeCopiesFromAnotherStoreOfItsKindAndRefusesAStalePin) {
    store::ObjectStore* other = this->other();
    ASSERT_NE(other, nullptr) << "every store under test has another of its kind";
    ASSERT_TRUE(other->put("live/Packages/p.rpm", "package bytes"));
    ASSERT_TRUE(other->put("live/repodata/repomd.xml", "<repomd/>"));
    auto stat = other->stat("live/Packages/p.rpm");
    ASSERT_TRUE(stat && stat->has_value());
    store::Pin pin;
    pin.size = (*stat)->size;
    pin.version = (*stat)->version;

    auto build = store().build_tree("snapshots/one", "snapshot");
    ASSERT_TRUE(build) << build.error().to_string();
    const std::vector<store::CopyRequest> copies{
        {"live/Packages/p.rpm", "Packages/p.rpm", store::CopyMode::LinkOrCopy, pin},
        {"live/repodata/repomd.xml", "repodata/repomd.xml", store::CopyMode::Copy, {}}};
    auto copied = (*build)->copy_from(*other, copies, {});
    ASSERT_TRUE(copied) << copied.error().to_string();
    ASSERT_TRUE((*build)->commit(nullptr));
    EXPECT_EQ(read("snapshots/one/Packages/p.rpm"), "package bytes");
    EXPECT_EQ(read("snapshots/one/repodata/repomd.xml"), "<repomd/>");
    EXPECT_EQ(keys("live"), (std::set<std::string>{})) << "nothing copied into the tree's store";

    ASSERT_TRUE(other->put("live/Packages/p.rpm", "other bytes!!"));
    auto second = store().build_tree("snapshots/two", "snapshot");
    ASSERT_TRUE(second) << second.error().to_string();
    auto refused = (*second)->copy_from(*other, {copies.data(), 1}, {});
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, ErrorCode::Corrupt) << refused.error().to_string();
}

TEST_P(ObjectStoreContract, RemoveRemovesTheKeysAndIgnoresTheAbsent) {
    put("r/a", "a");
    put("r/b", "b");
    const std::vector<std::string> doomed{"r/a", "r/none"};
    auto removed = store().remove(doomed);
    ASSERT_TRUE(removed) << removed.error().to_string();
    EXPECT_EQ(keys("r"), std::set<std::string>{"r/b"});
}

TEST_P(ObjectStoreContract, ATreeAppearsWholeOnlyWhenCommitted) {
    put("live/Packages/p.rpm", "package");
    auto build = store().build_tree("snaps/one", "snapshot");
    ASSERT_TRUE(build) << build.error().to_string();
    const std::vector<store::CopyRequest> copies{
        {"live/Packages/p.rpm", "Packages/p.rpm", store::CopyMode::LinkOrCopy, {}}};
    ASSERT_TRUE((*build)->copy(copies, {}));
    ASSERT_TRUE((*build)->put("repodata/repomd.xml", "<repomd/>"));
    EXPECT_EQ(read((*build)->staging() + "/repodata/repomd.xml"), "<repomd/>");
    auto before = store().tree("snaps/one");
    ASSERT_TRUE(before) << before.error().to_string();
    EXPECT_FALSE(before->has_value());
    auto none = store().trees("snaps");
    ASSERT_TRUE(none);
    EXPECT_TRUE(none->empty());

    auto committed = (*build)->commit(nullptr);
    ASSERT_TRUE(committed) << committed.error().to_string();
    auto after = store().tree("snaps/one");
    ASSERT_TRUE(after) << after.error().to_string();
    ASSERT_TRUE(after->has_value());
    EXPECT_GT(**after, 0);
    auto names = store().trees("snaps");
    ASSERT_TRUE(names);
    EXPECT_EQ(*names, std::vector<std::string>{"one"});
    EXPECT_EQ(keys("snaps/one"),
              (std::set<std::string>{"snaps/one/Packages/p.rpm", "snaps/one/repodata/repomd.xml"}));
    EXPECT_EQ(read("snaps/one/Packages/p.rpm"), "package");

    auto again = store().build_tree("snaps/one", "snapshot");
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error().code, ErrorCode::BadInput);
    EXPECT_NE(again.error().message.find("exists already"), std::string::npos);
}

TEST_P(ObjectStoreContract, AnAbandonedTreeLeavesNothing) {
    put("live/p.rpm", "package");
    {
        auto build = store().build_tree("snaps/gone", "snapshot");
        ASSERT_TRUE(build) << build.error().to_string();
        const std::vector<store::CopyRequest> copies{
            {"live/p.rpm", "p.rpm", store::CopyMode::LinkOrCopy, {}}};
        ASSERT_TRUE((*build)->copy(copies, {}));
    }
    auto tree = store().tree("snaps/gone");
    ASSERT_TRUE(tree);
    EXPECT_FALSE(tree->has_value());
    EXPECT_TRUE(keys("snaps").empty());
    auto names = store().trees("snaps");
    ASSERT_TRUE(names);
    EXPECT_TRUE(names->empty());
}

// What remove leaves of a file's directories goes with remove_empty_dirs, up to the first that
// still holds something; the root stays.
TEST_P(ObjectStoreContract, RemoveEmptyDirsRemovesTheEmptiedDirectoriesUpToOneInUse) {
    put("e/kept/k", "k");
    put("e/gone/deep/a", "a");
    const std::vector<std::string> doomed{"e/gone/deep/a"};
    ASSERT_TRUE(store().remove(doomed));
    store().remove_empty_dirs("e/gone/deep");
    auto dirs = store().list_dirs("e");
    ASSERT_TRUE(dirs) << dirs.error().to_string();
    EXPECT_EQ(*dirs, std::vector<std::string>{"kept"});
    store().remove_empty_dirs("e/kept");  // not empty: stays
    EXPECT_EQ(keys("e"), std::set<std::string>{"e/kept/k"});
    store().remove_empty_dirs("e/none");  // nothing there is nothing to do
    auto top = store().list_dirs("");
    ASSERT_TRUE(top);
    EXPECT_NE(std::find(top->begin(), top->end(), "e"), top->end());
}

TEST_P(ObjectStoreContract, RemoveTreeRemovesAllOfIt) {
    make_tree("snaps/one", {{"p.rpm", "package"}, {"repodata/repomd.xml", "<repomd/>"}});
    make_tree("snaps/two", {{"q.rpm", "other"}});
    ASSERT_TRUE(store().remove_tree("snaps/one"));
    auto tree = store().tree("snaps/one");
    ASSERT_TRUE(tree);
    EXPECT_FALSE(tree->has_value());
    EXPECT_EQ(keys("snaps"), std::set<std::string>{"snaps/two/q.rpm"});
    auto names = store().trees("snaps");
    ASSERT_TRUE(names);
    EXPECT_EQ(*names, std::vector<std::string>{"two"});
    EXPECT_TRUE(store().remove_tree("snaps/none")) << "nothing there is no error";
}

TEST_P(ObjectStoreContract, AnAliasShowsOneTreeAndSwitchesToAnother) {
    make_tree("snaps/one", {{"repodata/repomd.xml", "<one/>"}, {"p.rpm", "p"}});
    make_tree("snaps/two", {{"repodata/repomd.xml", "<two/>"}, {"q.rpm", "q"}});
    auto none = store().alias_target("pub/prod/repo");
    ASSERT_TRUE(none) << none.error().to_string();
    EXPECT_FALSE(none->has_value());

    auto pointed = store().point_alias("pub/prod/repo", "snaps/one", nullptr);
    ASSERT_TRUE(pointed) << pointed.error().to_string();
    auto one = store().alias_target("pub/prod/repo");
    ASSERT_TRUE(one) << one.error().to_string();
    EXPECT_EQ(one->value_or(""), "snaps/one");
    auto switched = store().point_alias("pub/prod/repo", "snaps/two", nullptr);
    ASSERT_TRUE(switched) << switched.error().to_string();
    auto two = store().alias_target("pub/prod/repo");
    ASSERT_TRUE(two);
    EXPECT_EQ(two->value_or(""), "snaps/two");
    auto dirs = store().list_dirs("pub");
    ASSERT_TRUE(dirs);
    EXPECT_EQ(*dirs, std::vector<std::string>{"prod"});
}

TEST_P(ObjectStoreContract, AnAliasNeverReplacesWhatIsNoAlias) {
    make_tree("snaps/one", {{"p.rpm", "p"}});
    put("pub/test/repo/own.txt", "not a published name's");
    auto refused = store().point_alias("pub/test/repo", "snaps/one", nullptr);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, ErrorCode::Unsafe) << refused.error().to_string();
    EXPECT_EQ(read("pub/test/repo/own.txt"), "not a published name's");
    auto target = store().alias_target("pub/test/repo");
    ASSERT_TRUE(target);
    EXPECT_FALSE(target->has_value());
}

// A writer's file for `key` in `staging`: a temporary name in the key's own directory, renamed
// into place (as the Downloader makes one).
inline void make_staged(store::Staging& staging, const std::string& key, const std::string& bytes) {
    const std::filesystem::path path = staging.directory() / key;
    ASSERT_TRUE(fs::make_directories(path.parent_path(), "test"));
    std::filesystem::path temporary = path;
    temporary += ".part";
    ASSERT_TRUE(fs::write_file(temporary, bytes));
    std::filesystem::rename(temporary, path);
}

TEST_P(ObjectStoreContract, StagedFilesAreCommittedUnderTheirKeys) {
    put("Packages/old.rpm", "old");
    store::StageOptions options;
    options.capacity = 64ULL << 20;
    options.parallel = 2;
    auto staging = store().stage(options);
    ASSERT_TRUE(staging) << staging.error().to_string();
    EXPECT_GT((*staging)->capacity(), 0U);
    const std::filesystem::path directory = (*staging)->directory();
    make_staged(**staging, "Packages/a/a.rpm", "aaaa");
    make_staged(**staging, "Packages/old.rpm", "new!!");
    (*staging)->commit(7, {"Packages/a/a.rpm", ChecksumType::Sha256, {}, nullptr, false});
    (*staging)->commit(8, {"Packages/old.rpm", ChecksumType::Sha256, {}, nullptr, false});
    std::map<std::size_t, store::Committed> by_ticket;
    for (store::Committed& done : (*staging)->wait()) {
        by_ticket.emplace(done.ticket, std::move(done));
    }
    ASSERT_EQ(by_ticket.size(), 2U);
    ASSERT_FALSE(by_ticket.at(7).error) << by_ticket.at(7).error->to_string();
    ASSERT_TRUE(by_ticket.at(7).stored);
    EXPECT_EQ(by_ticket.at(7).stored->size, 4U);
    EXPECT_FALSE(by_ticket.at(7).refused);
    ASSERT_FALSE(by_ticket.at(8).error);
    ASSERT_TRUE(by_ticket.at(8).stored);
    EXPECT_EQ(read("Packages/a/a.rpm"), "aaaa");
    EXPECT_EQ(read("Packages/old.rpm"), "new!!");
    auto info = store().stat("Packages/a/a.rpm");
    ASSERT_TRUE(info && *info);
    EXPECT_EQ((*info)->version, by_ticket.at(7).stored->version);
    if (!(*staging)->in_place()) {
        // Unlinked once committed; the spool goes with the staging area.
        EXPECT_FALSE(std::filesystem::exists(directory / "Packages/a/a.rpm"));
        staging->reset();
        EXPECT_FALSE(std::filesystem::exists(directory));
    }
}

TEST_P(ObjectStoreContract, AStagedFileTheJudgeRefusesIsNeverStored) {
    put("Packages/kept.rpm", "kept");
    auto staging = store().stage({});
    ASSERT_TRUE(staging) << staging.error().to_string();
    make_staged(**staging, "Packages/bad.rpm", "bad");
    std::atomic<int> judged{0};
    (*staging)->commit(1, {"Packages/bad.rpm",
                           ChecksumType::Sha256,
                           {},
                           [&](const std::filesystem::path& file) {
                               ++judged;
                               EXPECT_EQ(fs::read_file(file).value_or(""), "bad");
                               return false;
                           },
                           false});
    if (!(*staging)->in_place()) {
        // Already held: judged, not stored again.
        make_staged(**staging, "Packages/kept.rpm", "other");
        (*staging)->commit(2, {"Packages/kept.rpm",
                               ChecksumType::Sha256,
                               {},
                               [&](const std::filesystem::path&) {
                                   ++judged;
                                   return true;
                               },
                               true});
    }
    const std::vector<store::Committed> done = (*staging)->wait();
    ASSERT_EQ(done.size(), (*staging)->in_place() ? 1U : 2U);
    for (const store::Committed& one : done) {
        if (one.ticket == 1) {
            EXPECT_TRUE(one.refused);
            ASSERT_TRUE(one.error);
            EXPECT_EQ(one.error->code, ErrorCode::Unsafe);
            EXPECT_FALSE(one.stored);
        } else {
            EXPECT_FALSE(one.refused);
            ASSERT_FALSE(one.error) << one.error->to_string();
            EXPECT_FALSE(one.stored);
        }
    }
    EXPECT_EQ(judged.load(), static_cast<int>(done.size()));
    auto bad = store().stat("Packages/bad.rpm");
    ASSERT_TRUE(bad);
    EXPECT_FALSE(*bad);
    EXPECT_EQ(read("Packages/kept.rpm"), "kept");
    EXPECT_FALSE(std::filesystem::exists((*staging)->directory() / "Packages/bad.rpm"));
}

TEST_P(ObjectStoreContract, PutFileStoresALocalFile) {
    TempDir dir;
    std::string bytes(300000, 'x');
    bytes += "end";
    ASSERT_TRUE(fs::write_file(dir.path() / "big", bytes));
    auto put = store().put_file("files/big", dir.path() / "big");
    ASSERT_TRUE(put) << put.error().to_string();
    EXPECT_EQ(read("files/big"), bytes);
}

// A durable staging area commits as any other (on disk its files and directories are flushed
// before wait() reports them), replacing what was at the key; a spool keeps nothing after.
TEST_P(ObjectStoreContract, ADurableStagingCommitsReplacingWhatWasThere) {
    put("images/boot.iso", "old");
    store::StageOptions options;
    options.durable = true;
    auto staging = store().stage(options);
    ASSERT_TRUE(staging) << staging.error().to_string();
    make_staged(**staging, "images/boot.iso", "new bytes");
    make_staged(**staging, "new/dir/file.img", "x");
    (*staging)->commit(1, {"images/boot.iso", ChecksumType::Sha256, {}, nullptr, false});
    (*staging)->commit(2, {"new/dir/file.img", ChecksumType::Sha256, {}, nullptr, false});
    const std::vector<store::Committed> done = (*staging)->wait();
    ASSERT_EQ(done.size(), 2U);
    for (const store::Committed& one : done) {
        ASSERT_FALSE(one.error) << one.error->to_string();
        EXPECT_TRUE(one.stored);
    }
    EXPECT_EQ(read("images/boot.iso"), "new bytes");
    EXPECT_EQ(read("new/dir/file.img"), "x");
    if (!(*staging)->in_place()) {
        EXPECT_FALSE(std::filesystem::exists((*staging)->directory() / "images/boot.iso"));
    }
}

// find_content: a package a tree holds and records (the state object a bucket and memory answer
// from; a directory hashes the file itself) is found with the pin a copy takes; other bytes of
// the same size, an absent tree, a content of unknown size or found nowhere, and an excluded tree
// are not.
TEST_P(ObjectStoreContract, FindContentFindsARecordedPackageWithThePinACopyTakes) {
    const std::string bytes = std::string(4096, 'p') + "package";
    std::string other = bytes;
    other.back() = 'X';  // the same size, another digest
    const auto hold = [&](const std::string& tree, const std::string& key,
                          const std::string& content) {
        put(store::join_key(tree, key), content);
        auto info = store().stat(store::join_key(tree, key));
        ASSERT_TRUE(info && info->has_value());
        s3::MirrorState state;
        state.objects[key] = {(*info)->size, (*info)->version, ChecksumType::Sha256,
                              hash_bytes(ChecksumType::Sha256, content)};
        put(store::join_key(tree, s3::kStateKey), s3::to_json(state));
    };
    hold("pub/other", "Packages/p.rpm", other);
    hold("pub/base", "Packages/p.rpm", bytes);
    const std::vector<store::WantedContent> wanted{
        {ChecksumType::Sha256, hash_bytes(ChecksumType::Sha256, bytes), bytes.size()},
        {ChecksumType::Sha256, hash_bytes(ChecksumType::Sha256, "nowhere"), 7},
        {ChecksumType::Sha256, hash_bytes(ChecksumType::Sha256, bytes), kUnknownSize}};
    store::FindOptions options;
    options.trees = {"pub/missing", "pub/other", "pub/base"};
    options.near = "pub/updates";
    auto found = store().find_content(wanted, options);
    ASSERT_TRUE(found) << found.error().to_string();
    ASSERT_EQ(found->found.size(), wanted.size());
    ASSERT_TRUE(found->found[0]);
    EXPECT_EQ(found->found[0]->key, "pub/base/Packages/p.rpm");
    EXPECT_EQ(found->found[0]->pin.size, bytes.size());
    EXPECT_FALSE(found->found[1]);
    EXPECT_FALSE(found->found[2]);
    const std::vector<store::CopyRequest> copies{
        {found->found[0]->key, "pub/updates/Packages/p.rpm", store::CopyMode::LinkOrCopy,
         found->found[0]->pin}};
    auto copied = store().copy(copies, {});
    ASSERT_TRUE(copied) << copied.error().to_string();
    EXPECT_EQ(read("pub/updates/Packages/p.rpm"), bytes);

    options.excluded = {"pub/base", "pub/updates"};
    auto excluded = store().find_content(wanted, options);
    ASSERT_TRUE(excluded) << excluded.error().to_string();
    EXPECT_FALSE(excluded->found[0]) << excluded->found[0]->key;
}

}  // namespace rpmirror::test
