// The spool of an s3:// destination: in /dev/shm by default, on disk with a warning otherwise,
// and the spools of killed runs removed by the next one.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "store/spool.hpp"
#include "support/child_process.hpp"
#include "support/temp_dir.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror::store {
namespace {

using test::dead_pid;

TEST(S3Spool, RemovesOnlyTheSpoolsWhoseOwnerLockNobodyHolds) {
    test::TempDir dir;
    const std::string dead = std::to_string(dead_pid());
    // A killed run's spool: its owner file, locked by nobody now.
    const auto stale = dir.path() / ("rpmirror-s3-spool-" + dead + "-a1B2c3");
    std::filesystem::create_directories(stale / "Packages");
    dir.write("rpmirror-s3-spool-" + dead + "-a1B2c3/Packages/foo.rpm", "x");
    dir.write("rpmirror-s3-spool-" + dead + "-a1B2c3/.owner", "");
    // A live run in another PID namespace: its pid means nothing here (dead_pid()), but it holds
    // its lock.
    const std::string foreign = "rpmirror-s3-spool-" + dead + "-Zz9yY8";
    std::filesystem::create_directories(dir.path() / foreign);
    dir.write(foreign + "/.owner", "");
    const UniqueFd held(::open((dir.path() / foreign / ".owner").c_str(), O_RDONLY | O_CLOEXEC));
    ASSERT_GE(held.get(), 0);
    ASSERT_EQ(::flock(held.get(), LOCK_EX | LOCK_NB), 0);
    const std::string kept[] = {
        foreign,
        "rpmirror-s3-spool-" + dead + "-nOwnEr",   // no owner file (an older rpmirror's)
        "rpmirror-s3-spool-AbCdEf",                // no pid: not this pattern
        "rpmirror-s3-spool-" + dead + "-abc",      // suffix too short
        "rpmirror-s3-spool-" + dead + "x-abcdef",  // not digits
        "other-" + dead + "-abcdef",
    };
    for (const std::string& name : kept) {
        std::filesystem::create_directories(dir.path() / name);
        if (name != foreign && name.find("nOwnEr") == std::string::npos) {
            dir.write(name + "/.owner", "");
        }
    }
    dir.write("rpmirror-s3-spool-" + dead + "-fIlE00", "a file, not a spool");

    const auto removed = remove_stale_spools(dir.path());
    ASSERT_EQ(removed.size(), 1U);
    EXPECT_EQ(removed.front(), stale);
    EXPECT_FALSE(std::filesystem::exists(stale));
    for (const std::string& name : kept) {
        EXPECT_TRUE(std::filesystem::is_directory(dir.path() / name)) << name;
    }
    EXPECT_TRUE(std::filesystem::exists(dir.path() / ("rpmirror-s3-spool-" + dead + "-fIlE00")));
}

TEST(S3Spool, ASpoolInUseIsNeverRemovedAndOneReleasedIs) {
    test::TempDir dir;
    auto spool = create_s3_spool(dir.path(), 1);
    ASSERT_TRUE(spool) << spool.error().to_string();
    EXPECT_TRUE(remove_stale_spools(dir.path()).empty());
    EXPECT_TRUE(std::filesystem::is_directory(spool->dir));
    const std::filesystem::path made = spool->dir;
    spool->owner = UniqueFd();  // the run ends without cleaning up (killed)
    const auto removed = remove_stale_spools(dir.path());
    ASSERT_EQ(removed.size(), 1U);
    EXPECT_EQ(removed.front(), made);
}

TEST(S3Spool, DefaultIsAPrivateDirectoryInDevShm) {
    ASSERT_TRUE(is_memory_backed(kDefaultSpoolParent))
        << "/dev/shm is not a tmpfs on this machine: the default spool would be on disk";
    auto spool = create_s3_spool({}, 512ULL << 20);
    ASSERT_TRUE(spool) << spool.error().to_string();
    EXPECT_EQ(spool->dir.parent_path(), kDefaultSpoolParent);
    EXPECT_TRUE(spool->dir.filename().string().starts_with("rpmirror-s3-spool-" +
                                                           std::to_string(::getpid()) + "-"))
        << spool->dir;
    EXPECT_TRUE(spool->in_memory);
    EXPECT_FALSE(spool->warning);
    EXPECT_EQ(std::filesystem::status(spool->dir).permissions() & std::filesystem::perms::all,
              std::filesystem::perms::owner_all);
    std::filesystem::remove_all(spool->dir);
}

// create_s3_spool({}, needed, memory_parent) with $TMPDIR set to `tmpdir` for the call.
Result<S3Spool> create_spool_with_tmpdir(
    const std::filesystem::path& tmpdir, std::uint64_t needed,
    const std::filesystem::path& memory_parent = kDefaultSpoolParent) {
    const char* saved = std::getenv("TMPDIR");
    const std::string saved_value = saved != nullptr ? saved : "";
    ::setenv("TMPDIR", tmpdir.c_str(), 1);
    auto spool = create_s3_spool({}, needed, memory_parent);
    if (saved != nullptr) {
        ::setenv("TMPDIR", saved_value.c_str(), 1);
    } else {
        ::unsetenv("TMPDIR");
    }
    return spool;
}

TEST(S3Spool, WithoutAMemoryFilesystemTheSpoolIsInTmpdirWithAWarning) {
    test::TempDir disk;  // stands for a /dev/shm that is not a tmpfs
    test::TempDir tmpdir;
    auto spool = create_spool_with_tmpdir(tmpdir.path(), 512ULL << 20, disk.path());
    ASSERT_TRUE(spool) << spool.error().to_string();
    EXPECT_EQ(spool->dir.parent_path(), tmpdir.path());
    EXPECT_EQ(spool->in_memory, is_memory_backed(tmpdir.path()));
    if (!spool->in_memory) {
        ASSERT_TRUE(spool->warning);
        EXPECT_NE(spool->warning->find(spool->dir.string() + " is on disk"), std::string::npos)
            << *spool->warning;
    }
}

TEST(S3Spool, AMemoryFilesystemWithLessFreeSpaceThanTheSpoolSizeIsNotUsed) {
    ASSERT_TRUE(is_memory_backed(kDefaultSpoolParent)) << "/dev/shm is not a tmpfs here";
    test::TempDir tmpdir;
    // More than any /dev/shm has free: as a container's 64 MiB /dev/shm is for 512M.
    auto spool = create_spool_with_tmpdir(tmpdir.path(), std::uint64_t{1} << 60);
    ASSERT_TRUE(spool) << spool.error().to_string();
    EXPECT_EQ(spool->dir.parent_path(), tmpdir.path());
    ASSERT_TRUE(spool->warning);
    EXPECT_NE(spool->warning->find("/dev/shm has "), std::string::npos) << *spool->warning;
    EXPECT_NE(spool->warning->find(" MiB free, less than the "), std::string::npos)
        << *spool->warning;
    std::filesystem::remove_all(spool->dir);
}

TEST(S3Spool, ChosenDirectoryIsCreatedAndNeverWarns) {
    test::TempDir dir;
    auto spool = create_s3_spool(dir.path() / "spool" / "here", 512ULL << 20);
    ASSERT_TRUE(spool) << spool.error().to_string();
    EXPECT_EQ(spool->dir.parent_path(), dir.path() / "spool" / "here");
    EXPECT_FALSE(spool->warning);
    EXPECT_EQ(spool->in_memory, is_memory_backed(dir.path()));

    dir.write("file", "not a directory");
    auto refused = create_s3_spool(dir.path() / "file" / "spool", 512ULL << 20);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().subject, (dir.path() / "file" / "spool").string());
}

}  // namespace
}  // namespace rpmirror::store
