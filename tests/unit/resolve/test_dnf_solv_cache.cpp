// dnf's solver caches (resolve/dnf_solv_cache.hpp) over hand-written metadata: the files and the
// stamp libdnf checks, and metadata libsolv cannot read (ExecPrefetch compares the files with
// dnf's own and checks dnf loads them).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "fs/durable.hpp"
#include "resolve/dnf_solv_cache.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror {
namespace {

constexpr const char* kRepomd =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<repomd xmlns=\"http://linux.duke.edu/metadata/repo\"><revision>7</revision></repomd>\n";

constexpr const char* kPrimary =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<metadata xmlns=\"http://linux.duke.edu/metadata/common\" "
    "xmlns:rpm=\"http://linux.duke.edu/metadata/rpm\" packages=\"1\">\n"
    "<package type=\"rpm\"><name>tool</name><arch>noarch</arch>"
    "<version epoch=\"0\" ver=\"1.0\" rel=\"1\"/>"
    "<checksum type=\"sha256\" pkgid=\"YES\">"
    "0000000000000000000000000000000000000000000000000000000000000001</checksum>"
    "<location href=\"Packages/tool-1.0-1.noarch.rpm\"/><format>"
    "<rpm:requires><rpm:entry name=\"/usr/bin/tool-helper\"/></rpm:requires>"
    "</format></package>\n</metadata>\n";

constexpr const char* kFilelists =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<filelists xmlns=\"http://linux.duke.edu/metadata/filelists\" packages=\"1\">\n"
    "<package pkgid=\"0000000000000000000000000000000000000000000000000000000000000001\" "
    "name=\"tool\" arch=\"noarch\"><version epoch=\"0\" ver=\"1.0\" rel=\"1\"/>"
    "<file>/usr/bin/tool-helper</file></package>\n</filelists>\n";

DnfSolvCaches one_repository(const test::TempDir& dir, const std::string& primary) {
    DnfSolvCaches caches;
    caches.cachedir = dir / "cache";
    std::filesystem::create_directories(caches.cachedir);
    DnfSolvCacheRepo repo;
    repo.id = "tools";
    repo.repomd = test::TempDir::write_at(dir / "repomd.xml", kRepomd);
    repo.plain_primary = test::TempDir::write_at(dir / "primary.xml", primary);
    repo.plain_filelists = test::TempDir::write_at(dir / "filelists.xml", kFilelists);
    caches.repos.push_back(repo);
    return caches;
}

TEST(DnfSolvCache, BothFilesCarryTheStampLibdnfChecks) {
    test::TempDir dir;
    const DnfSolvCaches caches = one_repository(dir, kPrimary);
    ASSERT_TRUE(write_dnf_solv_caches(caches));
    for (const std::string name : {"tools.solv", "tools-filenames.solvx"}) {
        auto bytes = fs::read_file(caches.cachedir / name);
        ASSERT_TRUE(bytes) << name;
        EXPECT_EQ(bytes->substr(0, 4), "SOLV") << name;
        // libdnf's magic and cache-format version, then libsolv's version, then the checksum.
        EXPECT_NE(bytes->find(std::string("\0dnf\0"
                                          "1.0",
                                          8)),
                  std::string::npos)
            << name;
    }
    EXPECT_FALSE(std::filesystem::exists(caches.cachedir / "tools.solv.tmp"));
}

TEST(DnfSolvCache, MetadataLibsolvCannotReadIsAnErrorNamingItAndWritesNothing) {
    test::TempDir dir;
    const DnfSolvCaches caches = one_repository(dir, "<metadata><package><name>cut");
    const auto written = write_dnf_solv_caches(caches);
    ASSERT_FALSE(written);
    EXPECT_EQ(written.error().code, ErrorCode::BadInput);
    EXPECT_NE(written.error().to_string().find("primary.xml"), std::string::npos)
        << written.error().to_string();
    EXPECT_TRUE(std::filesystem::is_empty(caches.cachedir));
}

TEST(DnfSolvCache, ARepositoryNotToWriteIsLoadedButLeftAlone) {
    test::TempDir dir;
    DnfSolvCaches caches = one_repository(dir, kPrimary);
    caches.repos.front().write = false;
    ASSERT_TRUE(write_dnf_solv_caches(caches));
    EXPECT_TRUE(std::filesystem::is_empty(caches.cachedir));
}

}  // namespace
}  // namespace rpmirror
