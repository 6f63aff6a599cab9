#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "checksum/hasher.hpp"
#include "fs/beneath.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "support/child_process.hpp"
#include "support/temp_dir.hpp"
#include "unit/checksum/checksum_test_support.hpp"

namespace rpmirror {
namespace {

const std::string kClaimedSha256 = std::string(64, 'a');  // what a (lying) cache entry claims

std::optional<std::string> get_attribute(const std::filesystem::path& path,
                                         const std::string& name) {
    char value[512];
    const ssize_t length = ::getxattr(path.c_str(), name.c_str(), value, sizeof(value));
    if (length < 0) {
        return std::nullopt;
    }
    return std::string(value, static_cast<std::size_t>(length));
}

void set_mtime(const std::filesystem::path& path, struct timespec mtime) {
    struct timespec times[2] = {{0, UTIME_OMIT}, mtime};
    ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
}

// Writes an rpmirror entry claiming `hex` for the file as it is now.
void plant_own_entry(const std::filesystem::path& path, const std::string& hex) {
    const struct stat st = stat_of(path);
    set_attribute(path, "user.rpmirror.checksum.sha256",
                  "v1 " + std::to_string(st.st_size) + " " +
                      std::to_string(rpmirror::fs::timespec_ns(st.st_mtim)) + " " +
                      std::to_string(st.st_ino) + " " + hex);
}

// Hash options whose CacheTrust vouches for `path` as it is now (as a sync state records a file
// rpmirror wrote or verified).
HashOptions trusting(const std::filesystem::path& path) {
    const struct stat st = stat_of(path);
    auto trust = std::make_shared<CacheTrust>();
    trust->vouch(st.st_ino, static_cast<std::uint64_t>(st.st_size),
                 rpmirror::fs::timespec_ns(st.st_mtim), rpmirror::fs::timespec_ns(st.st_ctim));
    HashOptions options;
    options.trust = std::move(trust);
    return options;
}

VerifyRequest request_for(const std::filesystem::path& path, const std::string& hex) {
    return VerifyRequest{path, ChecksumType::Sha256, hex, std::nullopt};
}

TEST(ChecksumCache, HitIsTrustedWithoutHashing) {
    test::TempDir dir;
    const auto file = dir.write("pkg.rpm", "abc");
    age(file);
    plant_own_entry(file, kClaimedSha256);

    FileHasher hasher(trusting(file));
    const auto digest = hasher.hash(file, ChecksumType::Sha256);
    ASSERT_TRUE(digest);
    // The content hashes to kAbcSha256; getting the claim back proves nothing was hashed.
    EXPECT_EQ(digest->hex, kClaimedSha256);
    EXPECT_TRUE(digest->from_cache);
    EXPECT_EQ(hasher.verify(request_for(file, kClaimedSha256)).status, VerifyStatus::Ok);
    EXPECT_EQ(hasher.verify(request_for(file, kAbcSha256)).status, VerifyStatus::DigestMismatch);
}

// The one rule: an entry is believed only for a file rpmirror's record vouches for. Without a
// record, or after a write in place with the mtime put back and the entry forged to match (the
// ctime moved), the file is hashed.
TEST(ChecksumCache, AnEntryIsBelievedOnlyWhereTheRecordVouchesForTheFile) {
    test::TempDir dir;
    const auto file = dir.write("pkg.rpm", "abc");
    age(file);
    plant_own_entry(file, kAbcSha256);
    const HashOptions recorded = trusting(file);  // as a sync recorded it
    ASSERT_TRUE(hash_file(file, ChecksumType::Sha256, recorded)->from_cache);

    const auto unrecorded = hash_file(file, ChecksumType::Sha256, HashOptions{});
    ASSERT_TRUE(unrecorded);
    EXPECT_FALSE(unrecorded->from_cache);

    // Overwritten in place with other bytes of the same size, mtime put back, entry re-planted.
    const struct timespec mtime = stat_of(file).st_mtim;
    {
        std::ofstream out(file, std::ios::binary | std::ios::in | std::ios::out);
        out.write("\0\0\0", 3);
    }
    set_mtime(file, mtime);
    plant_own_entry(file, kAbcSha256);
    set_attribute(file, "user.Librepo.checksum.mtime",
                  std::to_string(rpmirror::fs::timespec_ns(mtime)));
    set_attribute(file, "user.Librepo.checksum.sha256", kAbcSha256);
    FileHasher hasher(recorded);
    const auto forged = hasher.hash(file, ChecksumType::Sha256);
    ASSERT_TRUE(forged);
    EXPECT_FALSE(forged->from_cache);
    EXPECT_EQ(forged->hex, hash_bytes(ChecksumType::Sha256, std::string(3, '\0')));
    EXPECT_EQ(hasher.verify(request_for(file, kAbcSha256)).status, VerifyStatus::DigestMismatch);
}

TEST(ChecksumCache, NoCacheOptionIgnoresEntries) {
    test::TempDir dir;
    const auto file = dir.write("pkg.rpm", "abc");
    age(file);
    plant_own_entry(file, kClaimedSha256);
    HashOptions options;
    options.use_cache = false;
    const auto digest = hash_file(file, ChecksumType::Sha256, options);
    ASSERT_TRUE(digest);
    EXPECT_EQ(digest->hex, kAbcSha256);
    EXPECT_FALSE(digest->from_cache);
}

TEST(ChecksumCache, MtimeChangeInvalidatesTheEntry) {
    test::TempDir dir;
    const auto file = dir.write("pkg.rpm", "abc");
    age(file);
    plant_own_entry(file, kClaimedSha256);
    struct timespec later = stat_of(file).st_mtim;
    later.tv_nsec = (later.tv_nsec + 1) % 1'000'000'000;
    set_mtime(file, later);
    const auto digest = hash_file(file, ChecksumType::Sha256);
    ASSERT_TRUE(digest);
    EXPECT_EQ(digest->hex, kAbcSha256);
    EXPECT_FALSE(digest->from_cache);
}

TEST(ChecksumCache, SizeChangeWithRestoredMtimeInvalidatesTheEntry) {
    test::TempDir dir;
    const auto file = dir.write("pkg.rpm", "abc");
    age(file);
    plant_own_entry(file, kClaimedSha256);
    const struct timespec original_mtime = stat_of(file).st_mtim;
    std::filesystem::resize_file(file, 2);  // same inode, same mtime once restored
    set_mtime(file, original_mtime);
    const auto digest = hash_file(file, ChecksumType::Sha256);
    ASSERT_TRUE(digest);
    EXPECT_FALSE(digest->from_cache);
    EXPECT_EQ(digest->hex, hash_bytes(ChecksumType::Sha256, "ab"));
}

TEST(ChecksumCache, OtherInodeWithSameSizeAndMtimeInvalidatesTheEntry) {
    test::TempDir dir;
    const auto file = dir.write("pkg.rpm", "abc");
    age(file);
    plant_own_entry(file, kClaimedSha256);
    // Replace by a copy that keeps the xattrs, size and mtime but not the inode.
    const auto copy = dir / "copy.rpm";
    ASSERT_EQ(std::system(("cp -a " + file.string() + " " + copy.string()).c_str()), 0);
    ASSERT_EQ(get_attribute(copy, "user.rpmirror.checksum.sha256"),
              get_attribute(file, "user.rpmirror.checksum.sha256"));
    const auto digest = hash_file(copy, ChecksumType::Sha256);
    ASSERT_TRUE(digest);
    EXPECT_FALSE(digest->from_cache);
    EXPECT_EQ(digest->hex, kAbcSha256);
}

// librepo's entries are written for dnf's sake, never believed by rpmirror: not even for a file
// its record vouches for.
TEST(ChecksumCache, LibrepoEntriesAreNeverBelievedInEitherSpelling) {
    for (const std::string prefix : {"user.librepo.checksum.", "user.Librepo.checksum."}) {
        SCOPED_TRACE(prefix);
        test::TempDir dir;
        const auto file = dir.write("pkg.rpm", "abc");
        age(file);
        set_attribute(file, prefix + "mtime",
                      std::to_string(rpmirror::fs::timespec_ns(stat_of(file).st_mtim)));
        set_attribute(file, prefix + "sha256", kClaimedSha256);
        const auto digest = hash_file(file, ChecksumType::Sha256, trusting(file));
        ASSERT_TRUE(digest);
        EXPECT_EQ(digest->hex, kAbcSha256);
        EXPECT_FALSE(digest->from_cache);
    }
}

TEST(ChecksumCache, LibrepoEntryWithOtherMtimeIsIgnored) {
    test::TempDir dir;
    const auto file = dir.write("pkg.rpm", "abc");
    age(file);
    set_attribute(file, "user.librepo.checksum.mtime",
                  std::to_string(rpmirror::fs::timespec_ns(stat_of(file).st_mtim) - 1));
    set_attribute(file, "user.librepo.checksum.sha256", kClaimedSha256);
    const auto digest = hash_file(file, ChecksumType::Sha256);
    ASSERT_TRUE(digest);
    EXPECT_EQ(digest->hex, kAbcSha256);
}

TEST(ChecksumCache, MalformedEntriesAreIgnored) {
    test::TempDir dir;
    const auto file = dir.write("pkg.rpm", "abc");
    age(file);
    const struct stat st = stat_of(file);
    const std::string identity = std::to_string(st.st_size) + " " +
                                 std::to_string(rpmirror::fs::timespec_ns(st.st_mtim)) + " " +
                                 std::to_string(st.st_ino);
    for (const std::string& bad : std::vector<std::string>{
             "v1 " + identity, "v2 " + identity + " " + kClaimedSha256,
             "v1 " + identity + " " + kClaimedSha256.substr(1),
             "v1 " + identity + " " + kClaimedSha256 + " extra", "v1 x y z w", std::string()}) {
        SCOPED_TRACE(bad);
        set_attribute(file, "user.rpmirror.checksum.sha256", bad);
        // The previous round's hash also wrote librepo's entry, which would be a valid hit.
        ::removexattr(file.c_str(), "user.Librepo.checksum.mtime");
        HashOptions options;
        const auto digest = hash_file(file, ChecksumType::Sha256, options);
        ASSERT_TRUE(digest);
        EXPECT_EQ(digest->hex, kAbcSha256);
        EXPECT_FALSE(digest->from_cache);
    }
}

TEST(ChecksumCache, HashingAnOldFileWritesAnEntryThatTheNextRunHits) {
    test::TempDir dir;
    const auto file = dir.write("pkg.rpm", "abc");
    age(file);
    const auto first = hash_file(file, ChecksumType::Sha256);
    ASSERT_TRUE(first);
    EXPECT_FALSE(first->from_cache);
    const struct stat st = stat_of(file);
    EXPECT_EQ(get_attribute(file, "user.rpmirror.checksum.sha256"),
              "v1 3 " + std::to_string(rpmirror::fs::timespec_ns(st.st_mtim)) + " " +
                  std::to_string(st.st_ino) + " " + kAbcSha256);
    const auto second = hash_file(file, ChecksumType::Sha256, trusting(file));
    ASSERT_TRUE(second);
    EXPECT_TRUE(second->from_cache);
    EXPECT_EQ(second->hex, kAbcSha256);
}

TEST(ChecksumCache, RacyFileIsNotCachedUnlessTheWriterTrustsIt) {
    test::TempDir dir;
    const auto file = dir.write("fresh.rpm", "abc");  // mtime is now
    const auto digest = hash_file(file, ChecksumType::Sha256);
    ASSERT_TRUE(digest);
    EXPECT_FALSE(get_attribute(file, "user.rpmirror.checksum.sha256"));

    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    struct stat st {};
    ASSERT_EQ(::fstat(fd, &st), 0);
    EXPECT_FALSE(write_cached_digest(fd, st, ChecksumType::Sha256, kAbcSha256));
    EXPECT_TRUE(write_cached_digest(fd, st, ChecksumType::Sha256, kAbcSha256, true));
    EXPECT_EQ(read_cached_digest(fd, st, ChecksumType::Sha256), kAbcSha256);
    ::close(fd);
}

TEST(ChecksumCache, FilesystemWithoutUserXattrsWorksWithoutTheCache) {
    if (::geteuid() != 0) {
        GTEST_SKIP() << "needs root to mount a ramfs (no xattr support) in a private namespace";
    }
    test::TempDir dir;
    const auto mount_point = dir / "ramfs";
    std::filesystem::create_directory(mount_point);
    const int outcome = test::run_in_child([&] {
        if (::unshare(CLONE_NEWNS) != 0 ||
            ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
            ::mount("ramfs", mount_point.c_str(), "ramfs", 0, nullptr) != 0) {
            return 30;
        }
        const auto file = mount_point / "pkg.rpm";
        { std::ofstream(file, std::ios::binary) << "abc"; }
        age(file);
        if (::setxattr(file.c_str(), "user.probe", "x", 1, 0) == 0 || errno != ENOTSUP) {
            return 31;  // the premise: this filesystem refuses user xattrs
        }
        for (int run = 0; run < 2; ++run) {
            const auto digest = hash_file(file, ChecksumType::Sha256);
            if (!digest || digest->hex != kAbcSha256 || digest->from_cache) {
                return 32;
            }
        }
        return 0;
    });
    if (outcome == 30) {
        GTEST_SKIP() << "this machine does not allow a private mount namespace";
    }
    EXPECT_EQ(outcome, 0);
}

}  // namespace
}  // namespace rpmirror
