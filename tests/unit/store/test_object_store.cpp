// The ObjectStore contract (object_store_contract.hpp) against the memory and disk stores; the
// disk store's own guarantees (hard links, no symlink followed, the staging directory); the
// fault-injecting wrapper.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <filesystem>

#include "store/fault_objects.hpp"
#include "support/temp_dir.hpp"
#include "unit/store/object_store_contract.hpp"

namespace rpmirror::test {
namespace {

namespace stdfs = std::filesystem;

struct MemoryUnderTest final : StoreUnderTest {
    std::unique_ptr<store::ObjectStore> memory = store::memory_object_store();
    std::unique_ptr<store::ObjectStore> elsewhere = store::memory_object_store();
    store::ObjectStore& store() override { return *memory; }
    store::ObjectStore* other() override { return elsewhere.get(); }
};

struct DiskUnderTest final : StoreUnderTest {
    TempDir dir;
    std::unique_ptr<store::ObjectStore> disk = store::disk_object_store(dir / "root");
    std::unique_ptr<store::ObjectStore> elsewhere = store::disk_object_store(dir / "elsewhere");
    store::ObjectStore& store() override { return *disk; }
    store::ObjectStore* other() override { return elsewhere.get(); }
};

// The wrapper with no rule forwards everything: the contract holds through it.
struct WrappedUnderTest final : StoreUnderTest {
    std::unique_ptr<store::ObjectStore> memory = store::memory_object_store();
    std::unique_ptr<store::ObjectStore> elsewhere = store::memory_object_store();
    store::FaultInjectingStore faults{*memory};
    store::ObjectStore& store() override { return faults; }
    store::ObjectStore* other() override { return elsewhere.get(); }
};

INSTANTIATE_TEST_SUITE_P(
    Stores, ObjectStoreContract,
    ::testing::Values(StoreFactory{"memory", [] { return std::make_unique<MemoryUnderTest>(); }},
                      StoreFactory{"disk", [] { return std::make_unique<DiskUnderTest>(); }},
                      StoreFactory{"faults_without_rules",
                                   [] { return std::make_unique<WrappedUnderTest>(); }}),
    store_name);

TEST(DiskObjectStore, LinkSharesTheFileAndCopyMakesOneOfItsOwn) {
    TempDir dir;
    auto disk = store::disk_object_store(dir.path());
    ASSERT_TRUE(disk->put("live/p.rpm", "package"));
    const std::vector<store::CopyRequest> copies{
        {"live/p.rpm", "linked/p.rpm", store::CopyMode::Link, {}},
        {"live/p.rpm", "copied/p.rpm", store::CopyMode::Copy, {}}};
    ASSERT_TRUE(disk->copy(copies, {}));
    struct stat live {};
    struct stat linked {};
    struct stat copied {};
    ASSERT_EQ(::lstat((dir / "live/p.rpm").c_str(), &live), 0);
    ASSERT_EQ(::lstat((dir / "linked/p.rpm").c_str(), &linked), 0);
    ASSERT_EQ(::lstat((dir / "copied/p.rpm").c_str(), &copied), 0);
    EXPECT_EQ(live.st_ino, linked.st_ino);
    EXPECT_NE(live.st_ino, copied.st_ino);
    auto listed = disk->list("");
    ASSERT_TRUE(listed);
    EXPECT_EQ(listed->at("live/p.rpm").links, 2U);
    EXPECT_EQ(listed->at("copied/p.rpm").links, 1U);
}

TEST(DiskObjectStore, NoSymlinkIsFollowedOrListed) {
    TempDir dir;
    dir.write("outside/secret.txt", "secret");
    dir.write("root/inside.txt", "inside");
    stdfs::create_symlink(dir / "outside/secret.txt", dir / "root/link.txt");
    stdfs::create_directory_symlink(dir / "outside", dir / "root/linkdir");
    auto disk = store::disk_object_store(dir / "root");
    auto listed = disk->list("");
    ASSERT_TRUE(listed) << listed.error().to_string();
    ASSERT_EQ(listed->size(), 1U);
    EXPECT_TRUE(listed->contains("inside.txt"));
    auto read = disk->read("link.txt");
    ASSERT_FALSE(read);
    EXPECT_EQ(read.error().code, ErrorCode::Unsafe) << read.error().to_string();
    auto stat = disk->stat("link.txt");
    ASSERT_TRUE(stat);
    EXPECT_FALSE(stat->has_value());
    auto dirs = disk->list_dirs("");
    ASSERT_TRUE(dirs);
    EXPECT_TRUE(dirs->empty()) << "a symlinked directory is no directory";
}

TEST(DiskObjectStore, ATreeIsBuiltInATemporarySiblingAndAnAliasIsARelativeSymlink) {
    TempDir dir;
    auto disk = store::disk_object_store(dir.path());
    ASSERT_TRUE(disk->put("live/p.rpm", "package"));
    auto build = disk->build_tree("snaps/repo/one", "snapshot");
    ASSERT_TRUE(build) << build.error().to_string();
    EXPECT_TRUE((*build)->staging().starts_with("snaps/repo/.one.creating-"))
        << (*build)->staging();
    EXPECT_TRUE(stdfs::is_directory(dir / (*build)->staging()));
    ASSERT_TRUE((*build)->commit(nullptr));
    EXPECT_TRUE(stdfs::is_directory(dir / "snaps/repo/one"));
    ASSERT_TRUE(disk->point_alias("pub/prod/repo", "snaps/repo/one", nullptr));
    EXPECT_EQ(stdfs::read_symlink(dir / "pub/prod/repo"), stdfs::path("../../snaps/repo/one"));
    // A leftover of an interrupted build beside the next one is removed.
    stdfs::create_directories(dir / "snaps/repo/.two.creating-abc/x");
    auto next = disk->build_tree("snaps/repo/two", "snapshot");
    ASSERT_TRUE(next);
    EXPECT_FALSE(stdfs::exists(dir / "snaps/repo/.two.creating-abc"));
}

TEST(FaultInjectingStore, FailsTheNthOperationOfAKindAndOnlyThatOne) {
    auto memory = store::memory_object_store();
    store::FaultInjectingStore faults(*memory);
    faults.fail_nth(store::StoreOp::Put, 2, Error{ErrorCode::Io, "injected", "disk", 5});
    EXPECT_TRUE(faults.put("a", "1"));
    auto second = faults.put("b", "2");
    ASSERT_FALSE(second);
    EXPECT_EQ(second.error().message, "injected");
    EXPECT_TRUE(faults.put("c", "3"));
    EXPECT_EQ(faults.count(store::StoreOp::Put), 3U);
    auto b = memory->stat("b");
    ASSERT_TRUE(b);
    EXPECT_FALSE(b->has_value()) << "a failed operation is not forwarded";
}

TEST(FaultInjectingStore, FailsEveryOperationOnAMatchingKey) {
    auto memory = store::memory_object_store();
    store::FaultInjectingStore faults(*memory);
    ASSERT_TRUE(faults.put("live/a.rpm", "a"));
    ASSERT_TRUE(faults.put("live/b.xml", "b"));
    faults.fail_matching(store::StoreOp::Copy, "\\.rpm$",
                         Error{ErrorCode::Network, "injected", "bucket", 0});
    const std::vector<store::CopyRequest> copies{
        {"live/b.xml", "to/b.xml", store::CopyMode::Copy, {}},
        {"live/a.rpm", "to/a.rpm", store::CopyMode::Copy, {}}};
    auto copied = faults.copy(copies, {});
    ASSERT_FALSE(copied);
    EXPECT_EQ(copied.error().code, ErrorCode::Network);
    EXPECT_TRUE(memory->stat("to/b.xml")->has_value()) << "copies before the fault are made";
    EXPECT_FALSE(memory->stat("to/a.rpm")->has_value());

    // A tree whose commit fails never appears, and leaves nothing once abandoned.
    faults.fail_nth(store::StoreOp::Commit, 1, Error{ErrorCode::Io, "injected", "tree", 5});
    {
        auto build = faults.build_tree("snaps/one", "snapshot");
        ASSERT_TRUE(build);
        ASSERT_TRUE((*build)->put("x", "x"));
        EXPECT_FALSE((*build)->commit(nullptr));
    }
    auto tree = faults.tree("snaps/one");
    ASSERT_TRUE(tree);
    EXPECT_FALSE(tree->has_value());
    EXPECT_TRUE(memory->list("snaps")->empty());
}

TEST(FaultInjectingStore, FailsAStagingAreaOrACommitOfAMatchingKey) {
    auto memory = store::memory_object_store();
    store::FaultInjectingStore faults(*memory);
    faults.fail_nth(store::StoreOp::Stage, 1, Error{ErrorCode::Io, "injected", "spool", 28});
    auto refused = faults.stage({});
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, ErrorCode::Io);
    faults.fail_matching(store::StoreOp::Put, "bad", Error{ErrorCode::Io, "injected", "bad", 5});
    auto staging = faults.stage({});
    ASSERT_TRUE(staging) << staging.error().to_string();
    make_staged(**staging, "good.rpm", "good");
    make_staged(**staging, "bad.rpm", "bad");
    (*staging)->commit(1, {"good.rpm", ChecksumType::Sha256, {}, nullptr, false});
    (*staging)->commit(2, {"bad.rpm", ChecksumType::Sha256, {}, nullptr, false});
    std::map<std::size_t, bool> committed;
    for (const store::Committed& done : (*staging)->wait()) {
        committed[done.ticket] = !done.error && done.stored;
    }
    EXPECT_EQ(committed, (std::map<std::size_t, bool>{{1, true}, {2, false}}));
    EXPECT_EQ(memory->read("good.rpm").value_or(""), "good");
    EXPECT_FALSE(memory->stat("bad.rpm").value_or(std::nullopt));
    EXPECT_FALSE(stdfs::exists((*staging)->directory() / "bad.rpm"));
}

}  // namespace
}  // namespace rpmirror::test
