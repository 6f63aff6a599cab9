// `sync --no-cache` hashes every file: no no-op shortcut, no checksum cache. And without it, a
// file replaced by `cp -p` (same size and mtime) or changed in place with its mtime put back is
// hashed again because its inode or ctime changed.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "integration/sync/sync_fixture.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

class SyncNoCache : public SyncFixture {
  protected:
    void SetUp() override {
        SyncFixture::SetUp();
        upstream_ = test_repo("sample-repo");
        args_ = {"--repofrompath",
                 "sample," + serve(upstream_).url("/"),
                 "--repo",
                 "sample",
                 "-p",
                 (tmp_ / "mirror").string()};
        const CommandResult first = sync(args_);
        ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
    }

    fs::path victim() const {
        return tmp_ / "mirror/sample/Packages/rpmirror-sample-medium-1.0-1.noarch.rpm";
    }

    // Flips one byte in the middle of `file` in place, then puts its mtime back (`touch -r`):
    // same size, same mtime, same inode.
    static void corrupt_keeping_size_and_mtime(const fs::path& file) {
        struct stat before {};
        ASSERT_EQ(::stat(file.c_str(), &before), 0);
        const int fd = ::open(file.c_str(), O_RDWR | O_CLOEXEC);
        ASSERT_GE(fd, 0);
        const off_t middle = before.st_size / 2;
        char byte = 0;
        ASSERT_EQ(::pread(fd, &byte, 1, middle), 1);
        byte = static_cast<char>(byte ^ 0x5a);
        ASSERT_EQ(::pwrite(fd, &byte, 1, middle), 1);
        ::close(fd);
        const timespec times[2] = {before.st_atim, before.st_mtim};
        ASSERT_EQ(::utimensat(AT_FDCWD, file.c_str(), times, 0), 0);
    }

    fs::path upstream_;
    std::vector<std::string> args_;
};

// A file corrupted in place with its size, inode, mtime and cache entry put back: its ctime
// moved, so the sync's record no longer vouches for it (CacheTrust) and the cache entry is not
// believed: hashed and fetched again, with or without --no-cache.
TEST_F(SyncNoCache, AFileCorruptedWithItsMtimePutBackIsRepairedWithOrWithoutNoCache) {
    NginxServer& server = *servers_.front();
    for (const bool no_cache : {false, true}) {
        SCOPED_TRACE(no_cache ? "--no-cache" : "the cache");
        corrupt_keeping_size_and_mtime(victim());
        const std::size_t before = log_size(server);
        std::vector<std::string> args = args_;
        if (no_cache) {
            args.push_back("--no-cache");
        }
        const CommandResult again = sync(args);

        EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
        EXPECT_EQ(package_uris(uris_since(server, before)),
                  std::vector<std::string>{"/Packages/rpmirror-sample-medium-1.0-1.noarch.rpm"});
        EXPECT_EQ(tree_digests(tmp_ / "mirror/sample"), package_digests(upstream_));
    }
}

TEST_F(SyncNoCache, NoCacheOnAnUnchangedMirrorIsNoNoopButDownloadsNothing) {
    NginxServer& server = *servers_.front();
    const std::size_t before = log_size(server);

    std::vector<std::string> args = args_;
    args.push_back("--no-cache");
    const CommandResult again = sync(args);

    EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
    // primary.xml was fetched (no no-op), no package was.
    const std::vector<std::string> uris = uris_since(server, before);
    EXPECT_TRUE(package_uris(uris).empty());
    EXPECT_NE(std::find_if(uris.begin(), uris.end(),
                           [](const std::string& uri) { return uri.ends_with("primary.xml.gz"); }),
              uris.end());
    EXPECT_EQ(tree_digests(tmp_ / "mirror/sample"), package_digests(upstream_));
}

TEST_F(SyncNoCache, AFileReplacedByCpPreservingSizeAndMtimeIsHashedAgain) {
    // cp -p: a corrupt copy with the original's size and mtime, under a new inode and without
    // the checksum-cache xattrs of the original.
    const fs::path copy = tmp_ / "corrupt-copy.rpm";
    fs::copy_file(victim(), copy);
    corrupt_keeping_size_and_mtime(copy);
    struct stat original {};
    ASSERT_EQ(::stat(victim().c_str(), &original), 0);
    fs::remove(victim());
    fs::copy_file(copy, victim());
    const timespec times[2] = {original.st_atim, original.st_mtim};
    ASSERT_EQ(::utimensat(AT_FDCWD, victim().c_str(), times, 0), 0);
    NginxServer& server = *servers_.front();
    const std::size_t before = log_size(server);

    const CommandResult again = sync(args_);

    EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
    EXPECT_EQ(package_uris(uris_since(server, before)),
              std::vector<std::string>{"/Packages/rpmirror-sample-medium-1.0-1.noarch.rpm"});
    EXPECT_EQ(tree_digests(tmp_ / "mirror/sample"), package_digests(upstream_));
}

// A download's temporary file of a package this repository no longer lists (an interrupted run,
// then upstream dropped the package): `verify --extra` reports it, and the next sync that is no
// no-op removes it, naming it; a package's own .part is not reported as a package.
TEST_F(SyncNoCache, AStalePartialDownloadIsReportedAndRemovedByTheNextSync) {
    std::vector<std::string> args = args_;
    args.push_back("--download-metadata");  // a mirror `verify` reads by its own metadata
    ASSERT_EQ(sync(args).exit_code, 0);
    const fs::path stale = TempDir::write_at(
        tmp_ / "mirror/sample/Packages/.rpmirror-sample-gone-1.0-1.noarch.rpm.part",
        std::string(64 * 1024, 'x'));
    const auto verify_extra = [this] {
        return run_to_end({rpmirror_binary(), "verify", "-p", (tmp_ / "mirror").string(), "--repo",
                           "sample", "--extra", "-c", (tmp_ / "empty.conf").string(), "--reposdir",
                           (tmp_ / "empty-reposdir").string()},
                          tmp_ / "logs");
    };
    const CommandResult reported = verify_extra();
    EXPECT_EQ(reported.exit_code, 1) << reported.out << reported.err;
    EXPECT_NE(reported.out.find("Packages/.rpmirror-sample-gone-1.0-1.noarch.rpm.part: extra (a "
                                "partial download a sync left)"),
              std::string::npos)
        << reported.out;

    args.push_back("--no-cache");  // no no-op: the sync walks the mirror
    const CommandResult again = sync(args);
    EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
    EXPECT_NE(
        again.err.find("removed 1 stale partial download(s) (0.1 MB), of packages this run "
                       "no longer fetches: Packages/.rpmirror-sample-gone-1.0-1.noarch.rpm.part"),
        std::string::npos)
        << again.err;
    EXPECT_FALSE(fs::exists(stale));
    const CommandResult clean = verify_extra();
    EXPECT_EQ(clean.exit_code, 0) << clean.out << clean.err;
}

}  // namespace
}  // namespace rpmirror::test
