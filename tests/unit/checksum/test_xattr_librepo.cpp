// The checksum cache writes librepo 1.14's entries too, as librepo itself does, so dnf trusts
// files rpmirror verified.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <string>

#include "fs/beneath.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "support/temp_dir.hpp"
#include "unit/checksum/checksum_test_support.hpp"

namespace rpmirror {
namespace {

std::int64_t mtime_ns_of(const std::filesystem::path& path) {
    return rpmirror::fs::timespec_ns(stat_of(path).st_mtim);
}

std::optional<std::string> attribute(const std::filesystem::path& path, const std::string& name) {
    char value[512];
    const ssize_t length = ::getxattr(path.c_str(), name.c_str(), value, sizeof(value));
    if (length < 0) {
        return std::nullopt;
    }
    return std::string(value, static_cast<std::size_t>(length));
}

TEST(ChecksumCacheLibrepo, HashingWritesLibreposEntryKeyedByMtimeInNanoseconds) {
    test::TempDir dir;
    const auto file = dir.write("pkg.rpm", "abc");
    age(file);
    const auto digest = hash_file(file, ChecksumType::Sha256);
    ASSERT_TRUE(digest);
    EXPECT_EQ(attribute(file, "user.Librepo.checksum.mtime"), std::to_string(mtime_ns_of(file)));
    EXPECT_EQ(attribute(file, "user.Librepo.checksum.sha256"), kAbcSha256);
}

TEST(ChecksumCacheLibrepo, StaleEntriesOfOtherTypesAreClearedAsLibrepoDoes) {
    test::TempDir dir;
    const auto file = dir.write("pkg.rpm", "abc");
    age(file);
    // Recorded for older content (another mtime): its sha512 must not survive under the new one.
    set_attribute(file, "user.Librepo.checksum.mtime", std::to_string(mtime_ns_of(file) - 5));
    set_attribute(file, "user.Librepo.checksum.sha512", std::string(128, 'a'));
    const auto digest = hash_file(file, ChecksumType::Sha256);
    ASSERT_TRUE(digest);
    EXPECT_FALSE(digest->from_cache);
    EXPECT_EQ(attribute(file, "user.Librepo.checksum.mtime"), std::to_string(mtime_ns_of(file)));
    EXPECT_EQ(attribute(file, "user.Librepo.checksum.sha256"), kAbcSha256);
    EXPECT_EQ(attribute(file, "user.Librepo.checksum.sha512"), std::nullopt);
}

TEST(ChecksumCacheLibrepo, EntriesOfOtherTypesForTheSameMtimeAreKept) {
    test::TempDir dir;
    const auto file = dir.write("pkg.rpm", "abc");
    age(file);
    ASSERT_TRUE(hash_file(file, ChecksumType::Sha256));
    ASSERT_TRUE(hash_file(file, ChecksumType::Sha1));
    EXPECT_EQ(attribute(file, "user.Librepo.checksum.sha256"), kAbcSha256);
    EXPECT_EQ(attribute(file, "user.Librepo.checksum.sha1"),
              "a9993e364706816aba3e25717850c26c9cd0d89d");
}

}  // namespace
}  // namespace rpmirror
