// Stock dnf 4.14 + librepo 1.14.5 (Debian 12) with librpmirror-librepo-accel.so preloaded through
// `rpmirror exec`, against nginx-served repositories: the same results as without it, librepo's
// own error for a corrupted package, checksum-cache xattrs trusted in both directions, and a
// librepo build not listed served after the run-time check of its checksum functions. Each run
// with the library logs its calls (RPMIRROR_LIBREPO_ACCEL_LOG), which proves they were served.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "checksum/hasher.hpp"
#include "integration/crash/crash_fixture.hpp"
#include "integration/dnfstack/dnfstack_fixture.hpp"
#include "librepo_accel/librepo_accel.hpp"
#include "rpmirror/librepo_accel/librepo_accel.hpp"

namespace rpmirror::test {
namespace {

// How a run loads librepo's checksum code.
enum class Checksums { Stock, Accelerated };

// Overwrites `path` with as many different bytes, keeping its mtime: only a cache entry keyed by
// mtime (librepo's) can still vouch for it.
void tamper_keeping_mtime(const std::filesystem::path& path) {
    struct stat before {};
    ASSERT_EQ(::stat(path.c_str(), &before), 0);
    std::string content = read_file(path);
    for (char& c : content) {
        c = static_cast<char>(~c);
    }
    {
        std::fstream stream(path, std::ios::in | std::ios::out | std::ios::binary);
        stream.write(content.data(), static_cast<std::streamsize>(content.size()));
    }
    const struct timespec times[2] = {before.st_atim, before.st_mtim};
    ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
}

class LibrepoAccelDnf : public SyncFixture {
  protected:
    void SetUp() override {
        SyncFixture::SetUp();
        if (HasFatalFailure()) {
            return;
        }
        ASSERT_TRUE(std::filesystem::exists(accel_library())) << accel_library();
        repo_ = test_repo("sample-repo");
        baseurl_ = serve(repo_).url("/");
    }

    // Runs dnf `args` with its own config, cache and .repo for `baseurl` under `work`.
    CommandResult dnf(Checksums checksums, const std::filesystem::path& work,
                      const std::vector<std::string>& args, const std::string& baseurl = {},
                      bool quiet = true) {
        std::vector<std::string> argv;
        if (checksums == Checksums::Accelerated) {
            argv = {"env", std::string(kLibrepoAccelLogVariable) + "=" + log_.string(),
                    rpmirror_binary(), "exec", "--"};
        }
        std::vector<std::string> isolated = isolated_dnf(work);
        if (!quiet) {
            std::erase(isolated, "-q");
        }
        argv.insert(argv.end(), isolated.begin(), isolated.end());
        TempDir::write_at(work / "reposd" / "sample.repo",
                          "[sample]\nname=sample\nenabled=1\ngpgcheck=0\nbaseurl=" +
                              (baseurl.empty() ? baseurl_ : baseurl) + "\n");
        argv.insert(argv.end(), {"--disableplugin=*", "--enableplugin=reposync,download"});
        argv.insert(argv.end(), args.begin(), args.end());
        return run_to_end(argv, tmp_ / "logs", work);
    }

    std::string log() const { return std::filesystem::exists(log_) ? read_file(log_) : ""; }

    std::filesystem::path repo_;
    std::string baseurl_;
    std::filesystem::path log_ = tmp_ / "accel.log";
};

TEST_F(LibrepoAccelDnf, ReposyncAsStockAndCacheTrustedOnTheNextRun) {
    const auto stock = dnf(Checksums::Stock, tmp_ / "stock", {"reposync", "-p", "out"});
    const auto accelerated = dnf(Checksums::Accelerated, tmp_ / "accel", {"reposync", "-p", "out"});
    ASSERT_EQ(stock.exit_code, 0) << stock.err;
    ASSERT_EQ(accelerated.exit_code, 0) << accelerated.err;
    EXPECT_EQ(accelerated.out, stock.out);
    EXPECT_EQ(accelerated.err, stock.err);
    const auto packages = package_digests(repo_);
    ASSERT_EQ(packages.size(), 5U);
    EXPECT_EQ(package_digests(tmp_ / "accel" / "out" / "sample"), packages);
    EXPECT_EQ(package_digests(tmp_ / "stock" / "out" / "sample"), packages);
    // Every package checked by the library, and its cache entries as librepo writes them.
    EXPECT_GE(count_lines_with(log(), "served lr_checksum_fd_compare sha256 hashed"), 5U) << log();
    EXPECT_EQ(count_lines_with(log(), "fallthrough"), 0U) << log();
    for (const auto& [path, digest] : packages) {
        const auto stock_xattrs = xattrs(tmp_ / "stock" / "out" / "sample" / path, "user.");
        const auto accel_xattrs = xattrs(tmp_ / "accel" / "out" / "sample" / path, "user.");
        EXPECT_EQ(accel_xattrs.at("user.Librepo.checksum.sha256"), digest) << path;
        EXPECT_EQ(accel_xattrs.at("user.Librepo.checksum.mtime"),
                  std::to_string(mtime_ns(tmp_ / "accel" / "out" / "sample" / path)));
        EXPECT_EQ(stock_xattrs.at("user.Librepo.checksum.sha256"), digest) << path;
        EXPECT_EQ(accel_xattrs.size(), stock_xattrs.size()) << path;
    }
    // The next run: every package answered from the cache the library wrote.
    std::filesystem::remove(log_);
    const auto again = dnf(Checksums::Accelerated, tmp_ / "accel", {"reposync", "-p", "out"});
    ASSERT_EQ(again.exit_code, 0) << again.err;
    // (dnf 4.14 checks some packages twice: at least one answer per package.)
    EXPECT_GE(count_lines_with(log(), "sha256 cached matches=1"), 5U) << log();
    EXPECT_EQ(count_lines_with(log(), "hashed"), 0U) << log();
}

// On FUSE a syncfs flushes nothing (Linux passes it on to virtiofs only), so the default mode
// flushes each file before it writes the file's cache entry there: flushfs (tests/flushfs) logs
// every flush and every xattr set that reaches it, in order.
TEST_F(LibrepoAccelDnf, OnFuseEachCacheEntryFollowsAFlushOfItsFile) {
    if (!crash::enter_private_mount_namespace()) {
        GTEST_SKIP() << "needs root and a private mount namespace for a FUSE (flushfs) mount";
    }
    const std::filesystem::path backing = tmp_ / "backing";
    const std::filesystem::path mount_point = tmp_ / "fuse";
    const std::filesystem::path flush_log = tmp_ / "flushes.log";
    std::filesystem::create_directories(backing);
    const crash::FuseMount mounted(
        {RPMIRROR_FLUSHFS, backing.string(), mount_point.string(), "--log=" + flush_log.string()},
        mount_point, tmp_ / "logs");
    ASSERT_TRUE(mounted.mounted()) << mounted.error();

    const auto run = dnf(Checksums::Accelerated, tmp_ / "accel",
                         {"reposync", "-p", (mount_point / "out").string()});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const auto packages = package_digests(repo_);
    ASSERT_EQ(packages.size(), 5U);
    EXPECT_EQ(package_digests(mount_point / "out" / "sample"), packages);
    const std::vector<std::string> lines = lines_of(read_file(flush_log));
    for (const auto& [path, digest] : packages) {
        const std::string name = "/out/sample/" + path;
        const auto flushed = std::find_if(lines.begin(), lines.end(), [&](const std::string& l) {
            return (l.starts_with("fsync ") || l.starts_with("fdatasync ")) &&
                   l.find(" " + name + " ") != std::string::npos;
        });
        const auto entry = std::find(lines.begin(), lines.end(),
                                     "setxattr " + name + " user.Librepo.checksum.sha256");
        ASSERT_NE(flushed, lines.end()) << name << " never flushed:\n" << read_file(flush_log);
        ASSERT_NE(entry, lines.end()) << name << " has no cache entry:\n" << read_file(flush_log);
        EXPECT_LT(flushed - lines.begin(), entry - lines.begin())
            << name << ": its cache entry came before its flush";
        EXPECT_EQ(xattrs(mount_point / "out" / "sample" / path, "user.")
                      .at("user.Librepo.checksum.sha256"),
                  digest);
    }
    EXPECT_EQ(count_lines_with(log(), "mode=deferred"), count_lines_with(log(), "served "))
        << log();
    EXPECT_EQ(count_lines_with(log(), "flushed-per-file=0"), 0U) << log();
    EXPECT_EQ(count_lines_with(log(), "flushed-per-file="), 1U) << log();
}

TEST_F(LibrepoAccelDnf, CacheEntriesTrustedByStockLibrepoAndViceVersa) {
    const std::string victim = "Packages/rpmirror-sample-small-1.0-1.noarch.rpm";
    // Written by the library, trusted by stock librepo: a package changed behind the cache's
    // back (same mtime) is not hashed again, so it stays as it is.
    ASSERT_EQ(dnf(Checksums::Accelerated, tmp_ / "a", {"reposync", "-p", "out"}).exit_code, 0);
    const auto a_file = tmp_ / "a" / "out" / "sample" / victim;
    tamper_keeping_mtime(a_file);
    const std::string tampered_a = read_file(a_file);
    ASSERT_EQ(dnf(Checksums::Stock, tmp_ / "a", {"reposync", "-p", "out"}).exit_code, 0);
    EXPECT_EQ(read_file(a_file), tampered_a) << "stock librepo did not trust the library's entry";

    // Written by stock librepo, trusted by the library.
    ASSERT_EQ(dnf(Checksums::Stock, tmp_ / "b", {"reposync", "-p", "out"}).exit_code, 0);
    const auto b_file = tmp_ / "b" / "out" / "sample" / victim;
    tamper_keeping_mtime(b_file);
    const std::string tampered_b = read_file(b_file);
    std::filesystem::remove(log_);
    ASSERT_EQ(dnf(Checksums::Accelerated, tmp_ / "b", {"reposync", "-p", "out"}).exit_code, 0);
    EXPECT_EQ(read_file(b_file), tampered_b) << "the library did not trust librepo's entry";
    EXPECT_GE(count_lines_with(log(), "sha256 cached matches=1"), 5U) << log();
    EXPECT_EQ(count_lines_with(log(), "hashed"), 0U) << log();

    // Control: without the cache entries the change is found, by stock and library alike.
    for (const Checksums checksums : {Checksums::Stock, Checksums::Accelerated}) {
        const auto& file = checksums == Checksums::Stock ? a_file : b_file;
        const std::string work = checksums == Checksums::Stock ? "a" : "b";
        for (const auto& [name, value] : xattrs(file, "user.Librepo.")) {
            ASSERT_EQ(::removexattr(file.c_str(), name.c_str()), 0);
        }
        ASSERT_EQ(dnf(checksums, tmp_ / work, {"reposync", "-p", "out"}).exit_code, 0);
        EXPECT_EQ(read_file(file), read_file(repo_ / victim)) << work;
    }
}

TEST_F(LibrepoAccelDnf, CorruptedPackageRejectedWithLibrepoMessage) {
    const auto corrupted = copy_repo(repo_, tmp_ / "corrupted-repo");
    const std::string victim = "Packages/rpmirror-sample-tiny-1.0-1.noarch.rpm";
    tamper_keeping_mtime(corrupted / victim);
    const std::string baseurl = serve(corrupted).url("/");
    const auto stock =
        dnf(Checksums::Stock, tmp_ / "work", {"download", "rpmirror-sample-tiny"}, baseurl, false);
    const auto accelerated = dnf(Checksums::Accelerated, tmp_ / "work",
                                 {"download", "rpmirror-sample-tiny"}, baseurl, false);
    EXPECT_EQ(stock.exit_code, 1);
    EXPECT_EQ(accelerated.exit_code, stock.exit_code);
    EXPECT_EQ(accelerated.err, stock.err);
    // librepo's own words, with the digest the library calculated.
    EXPECT_EQ(without_metadata_lines(accelerated.out), without_metadata_lines(stock.out));
    EXPECT_NE(stock.out.find("[MIRROR] rpmirror-sample-tiny-1.0-1.noarch.rpm: Downloading "
                             "successful, but checksum doesn't match. Calculated: " +
                             hash_bytes(ChecksumType::Sha256, read_file(corrupted / victim)) +
                             "(sha256)  Expected: "),
              std::string::npos)
        << stock.out;
    EXPECT_FALSE(std::filesystem::exists(tmp_ / "work" / "rpmirror-sample-tiny-1.0-1.noarch.rpm"));
    EXPECT_GE(count_lines_with(log(), "sha256 hashed matches=0"), 1U) << log();
}

TEST_F(LibrepoAccelDnf, MakecacheDownloadAndInstallDownloadonlyAsStock) {
    for (const Checksums checksums : {Checksums::Stock, Checksums::Accelerated}) {
        const auto work = tmp_ / (checksums == Checksums::Stock ? "stock" : "accel");
        const auto makecache = dnf(checksums, work, {"makecache"});
        ASSERT_EQ(makecache.exit_code, 0) << makecache.err;
        const auto download =
            dnf(checksums, work,
                {"download", "--destdir", (work / "downloaded").string(), "rpmirror-sample-*"});
        ASSERT_EQ(download.exit_code, 0) << download.err;
        EXPECT_EQ(prefixed(tree_digests(work / "downloaded"), "Packages/"), package_digests(repo_));
        const auto installroot = work / "installroot";
        const auto install =
            dnf(checksums, work,
                {"install", "--downloadonly", "--installroot", installroot.string(),
                 "--setopt=keepcache=1", "rpmirror-sample-small", "rpmirror-sample-tiny"});
        ASSERT_EQ(install.exit_code, 0) << install.err;
        std::map<std::string, std::string> fetched;
        for (const auto& [path, digest] : tree_digests(work)) {
            if (path.ends_with(".rpm") && path.find("downloaded/") != 0) {
                fetched[std::filesystem::path(path).filename().string()] = digest;
            }
        }
        const auto all = package_digests(repo_);
        EXPECT_EQ(fetched.at("rpmirror-sample-small-1.0-1.noarch.rpm"),
                  all.at("Packages/rpmirror-sample-small-1.0-1.noarch.rpm"));
        EXPECT_EQ(fetched.at("rpmirror-sample-tiny-1.0-1.noarch.rpm"),
                  all.at("Packages/rpmirror-sample-tiny-1.0-1.noarch.rpm"));
    }
    // makecache checks metadata records, download and install check packages: all served.
    EXPECT_GE(count_lines_with(log(), "served lr_checksum_fd_compare"), 4U) << log();
    EXPECT_GE(count_lines_with(log(), "served lr_checksum_fd_cmp"), 1U) << log();
    EXPECT_EQ(count_lines_with(log(), "fallthrough"), 0U) << log();
}

TEST_F(LibrepoAccelDnf, AnUnlistedLibrepoIsCheckedAtRunTimeThenServed) {
    // A librepo.so.0 whose build-id is not listed: Debian's without its build-id note (the other
    // builds, from Debian's source with other compilers, and a patched one: librepo_own_suites.sh).
    const auto lib = tmp_ / "lib";
    std::filesystem::create_directories(lib);
    run_checked({"objcopy", "--remove-section=.note.gnu.build-id",
                 "/usr/lib/x86_64-linux-gnu/librepo.so.0", (lib / "librepo.so.0").string()},
                tmp_ / "logs");
    auto argv =
        std::vector<std::string>{"env",
                                 "LD_LIBRARY_PATH=" + lib.string(),
                                 std::string(kLibrepoAccelLogVariable) + "=" + log_.string(),
                                 rpmirror_binary(),
                                 "exec",
                                 "--"};
    const std::vector<std::string> isolated = isolated_dnf(tmp_ / "work");
    argv.insert(argv.end(), isolated.begin(), isolated.end());
    TempDir::write_at(tmp_ / "work" / "reposd" / "sample.repo",
                      "[sample]\nname=sample\nenabled=1\ngpgcheck=0\nbaseurl=" + baseurl_ + "\n");
    argv.insert(argv.end(),
                {"--disableplugin=*", "--enableplugin=reposync", "reposync", "-p", "out"});
    const auto run = run_to_end(argv, tmp_ / "logs", tmp_ / "work");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(package_digests(tmp_ / "work" / "out" / "sample"), package_digests(repo_));
    // Checked once, before the first call was served, then every call served.
    const std::string checked =
        "self-check same calls=21 librepo=" + (lib / "librepo.so.0").string() + " (build-id none)";
    EXPECT_EQ(count_lines_with(log(), checked), 1U) << log();
    EXPECT_LT(log().find(checked), log().find("served ")) << log();
    EXPECT_GE(count_lines_with(log(), "served lr_checksum_fd_compare sha256 hashed"), 5U) << log();
    EXPECT_EQ(count_lines_with(log(), "fallthrough"), 0U) << log();
    EXPECT_EQ(run.err.find("rpmirror librepo accelerator"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace rpmirror::test
