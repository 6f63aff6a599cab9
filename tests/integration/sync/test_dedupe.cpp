// --dedupe end to end: the real binary, nginx serving two real repositories (createrepo_c over
// RPMs built from the specs in the tree) that share four packages, one mirror tree. What is
// asserted: nginx's access log (shared packages never requested), inodes, the reports, --delete,
// the fallbacks (reflink on tmpfs, another filesystem), --dedupe-dir and job mode.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "checksum/hasher.hpp"
#include "integration/sync/sync_fixture.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

const std::string kOwn = "rpmirror-idx-noarch-1.0-1.noarch.rpm";       // only in "updates"
const std::string kMissing = "rpmirror-sample-tiny-1.0-1.noarch.rpm";  // only in "base"

ino_t inode_of(const fs::path& path) {
    struct stat st {};
    EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
    return st.st_ino;
}

nlink_t links_of(const fs::path& path) {
    struct stat st {};
    EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
    return st.st_nlink;
}

// A directory on tmpfs (/dev/shm), removed with everything in it when destroyed.
struct ShmDir {
    ShmDir()
        : path(fs::path("/dev/shm") /
               ("rpmirror-dedupe-" + std::to_string(::getpid()) + "-" + std::to_string(++count))) {
        fs::create_directories(path);
    }
    ~ShmDir() {
        std::error_code ignored;
        fs::remove_all(path, ignored);
    }
    ShmDir(const ShmDir&) = delete;
    ShmDir& operator=(const ShmDir&) = delete;
    fs::path path;
    static inline int count = 0;
};

class SyncDedupe : public SyncFixture {
  protected:
    void SetUp() override {
        SyncFixture::SetUp();
        // "updates": the sample repository without tiny, with one package of its own.
        updates_repo_ = copy_repo(test_repo("sample-repo"), tmp_ / "upstream-updates");
        fs::remove(updates_repo_ / "Packages" / kMissing);
        fs::copy_file(test_repo("index-repo") / "Packages" / kOwn,
                      updates_repo_ / "Packages" / kOwn);
        recreate_repo(updates_repo_, "2", tmp_ / "logs");
        base_ = &serve(test_repo("sample-repo"));
        updates_ = &serve(updates_repo_);
    }

    CommandResult sync_repo(const std::string& repo, const fs::path& download_path,
                            std::vector<std::string> extra = {}) {
        const NginxServer& server = repo == "base" ? *base_ : *updates_;
        std::vector<std::string> args{
            "--repofrompath",      repo + "," + server.url("/"), "--repo", repo, "-p",
            download_path.string()};
        args.insert(args.end(), extra.begin(), extra.end());
        return sync(args);
    }

    // The package file names both repositories list.
    std::set<std::string> shared() const {
        std::set<std::string> names;
        for (const auto& entry : fs::directory_iterator(updates_repo_ / "Packages")) {
            const std::string name = entry.path().filename().string();
            if (name != kOwn) {
                names.insert(name);
            }
        }
        return names;
    }

    std::uint64_t shared_bytes() const {
        std::uint64_t bytes = 0;
        for (const std::string& name : shared()) {
            bytes += fs::file_size(updates_repo_ / "Packages" / name);
        }
        return bytes;
    }

    std::vector<std::string> all_uris() const {
        std::vector<std::string> uris{"/Packages/" + kOwn};
        for (const std::string& name : shared()) {
            uris.push_back("/Packages/" + name);
        }
        std::sort(uris.begin(), uris.end());
        return uris;
    }

    fs::path updates_repo_;
    NginxServer* base_ = nullptr;
    NginxServer* updates_ = nullptr;
};

TEST_F(SyncDedupe, SharedPackagesAreLinkedFromTheSiblingAndNeverRequested) {
    const fs::path mirror = tmp_ / "mirror";
    ASSERT_EQ(sync_repo("base", mirror).exit_code, 0);
    const CommandResult result = sync_repo("updates", mirror, {"--json", "-"});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;

    EXPECT_EQ(package_uris(uris_since(*updates_, 0)), std::vector<std::string>{"/Packages/" + kOwn})
        << "only the package base does not have was downloaded";
    for (const std::string& name : shared()) {
        EXPECT_EQ(inode_of(mirror / "updates/Packages" / name),
                  inode_of(mirror / "base/Packages" / name))
            << name;
    }
    EXPECT_EQ(tree_digests(mirror / "updates", {}), package_digests(updates_repo_));
    const auto report = nlohmann::json::parse(result.out, nullptr, false);
    ASSERT_FALSE(report.is_discarded()) << result.out;
    const auto& repo = report["repositories"][0];
    EXPECT_EQ(repo["linked"], shared().size());
    EXPECT_EQ(repo["linked_bytes"], shared_bytes());
    EXPECT_EQ(repo["downloaded"], 1);
    EXPECT_TRUE(repo["ok"]);

    // The linked files are the mirror's like any other: the next run is a no-op.
    const CommandResult again = sync_repo("updates", mirror);
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_TRUE(again.out.starts_with("updates: up to date")) << again.out;
}

TEST_F(SyncDedupe, TheSummaryLineCountsLinkedPackagesAndBytes) {
    const fs::path mirror = tmp_ / "mirror";
    ASSERT_EQ(sync_repo("base", mirror).exit_code, 0);
    const CommandResult result = sync_repo("updates", mirror);
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const std::string expected =
        fmt::format("{} packages linked from other repositories ({:.1f} MiB not downloaded)",
                    shared().size(), static_cast<double>(shared_bytes()) / 1048576.0);
    EXPECT_NE(result.out.find(expected), std::string::npos) << result.out;
}

TEST_F(SyncDedupe, OffDownloadsEveryPackage) {
    const fs::path mirror = tmp_ / "mirror";
    ASSERT_EQ(sync_repo("base", mirror).exit_code, 0);
    const CommandResult result = sync_repo("updates", mirror, {"--dedupe=off"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(package_uris(uris_since(*updates_, 0)), all_uris());
    EXPECT_NE(inode_of(mirror / "updates/Packages" / kMedium),
              inode_of(mirror / "base/Packages" / kMedium));
}

TEST_F(SyncDedupe, ACorruptedCandidateIsNotLinkedButDownloaded) {
    const fs::path mirror = tmp_ / "mirror";
    ASSERT_EQ(sync_repo("base", mirror).exit_code, 0);
    // Same size, other bytes (a bit flipped on disk): the cache entry is stale, hashing says no.
    const fs::path corrupt = mirror / "base/Packages" / kMedium;
    std::string bytes = read_file(corrupt);
    bytes[bytes.size() / 2] ^= 1;
    TempDir::write_at(corrupt, bytes);

    const CommandResult result = sync_repo("updates", mirror);
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(package_uris(uris_since(*updates_, 0)),
              (std::vector<std::string>{"/Packages/" + kOwn, "/Packages/" + kMedium}));
    EXPECT_NE(inode_of(mirror / "updates/Packages" / kMedium), inode_of(corrupt));
    EXPECT_EQ(tree_digests(mirror / "updates", {}), package_digests(updates_repo_));
}

// Anyone who can write a file can write its checksum-cache entry: a candidate rpmirror did not
// write (no sync state records it) is hashed, so a planted entry never puts other bytes into
// the mirror.
TEST_F(SyncDedupe, APlantedCacheEntryOnAForeignFileIsNotBelieved) {
    const fs::path planted = tmp_ / "planted/repo/Packages" / kMedium;
    const fs::path real = updates_repo_ / "Packages" / kMedium;
    std::string bytes = read_file(real);
    bytes[bytes.size() / 2] ^= 1;  // same size, other bytes
    TempDir::write_at(planted, bytes);
    {
        const UniqueFd fd(::open(planted.c_str(), O_RDONLY | O_CLOEXEC));
        struct stat st {};
        ASSERT_TRUE(fd && ::fstat(fd.get(), &st) == 0);
        // The entry the real package would have: its digest, the planted file's mtime.
        ASSERT_TRUE(write_cached_digest(fd.get(), st, ChecksumType::Sha256,
                                        hash_bytes(ChecksumType::Sha256, read_file(real)), true));
    }
    const fs::path mirror = tmp_ / "mirror";
    const CommandResult result =
        sync_repo("updates", mirror, {"--dedupe-dir", (tmp_ / "planted").string()});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(package_uris(uris_since(*updates_, 0)), all_uris()) << "nothing linked";
    EXPECT_NE(inode_of(mirror / "updates/Packages" / kMedium), inode_of(planted));
    EXPECT_EQ(tree_digests(mirror / "updates", {}), package_digests(updates_repo_));
}

// A hard link shares the inode: a candidate others may write is never linked, even when its
// bytes are right; one that is the user's own (and only writable by it) is, after hashing.
TEST_F(SyncDedupe, ACandidateOthersMayWriteIsNeverHardLinked) {
    const fs::path open_tree = tmp_ / "open/repo/Packages";
    const fs::path closed_tree = tmp_ / "closed/repo/Packages";
    fs::create_directories(open_tree);
    fs::create_directories(closed_tree);
    fs::copy_file(updates_repo_ / "Packages" / kMedium, open_tree / kMedium);
    fs::permissions(open_tree / kMedium, fs::perms(0666));
    const fs::path mirror = tmp_ / "mirror";
    const CommandResult result =
        sync_repo("updates", mirror, {"--dedupe-dir", (tmp_ / "open").string(), "-v"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(package_uris(uris_since(*updates_, 0)), all_uris());
    EXPECT_NE(inode_of(mirror / "updates/Packages" / kMedium), inode_of(open_tree / kMedium));
    EXPECT_NE(result.err.find("writable by group or others"), std::string::npos) << result.err;

    fs::copy_file(updates_repo_ / "Packages" / kMedium, closed_tree / kMedium);
    fs::permissions(closed_tree / kMedium, fs::perms(0644));
    const fs::path second = tmp_ / "second";
    const std::size_t logged = log_size(*updates_);
    ASSERT_EQ(sync_repo("updates", second, {"--dedupe-dir", (tmp_ / "closed").string()}).exit_code,
              0);
    EXPECT_EQ(inode_of(second / "updates/Packages" / kMedium), inode_of(closed_tree / kMedium));
    const auto requested = package_uris(uris_since(*updates_, logged));
    EXPECT_EQ(std::count(requested.begin(), requested.end(), "/Packages/" + kMedium), 0);
}

TEST_F(SyncDedupe, DeleteInOneRepositoryKeepsTheOthersFile) {
    const fs::path mirror = tmp_ / "mirror";
    ASSERT_EQ(sync_repo("base", mirror).exit_code, 0);
    ASSERT_EQ(sync_repo("updates", mirror).exit_code, 0);
    ASSERT_EQ(links_of(mirror / "base/Packages" / kMedium), 2U);
    const std::string before = read_file(mirror / "base/Packages" / kMedium);

    // Upstream drops medium from updates; --delete removes the name in updates only.
    fs::remove(updates_repo_ / "Packages" / kMedium);
    recreate_repo(updates_repo_, "3", tmp_ / "logs");
    const CommandResult result = sync_repo("updates", mirror, {"--delete"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_FALSE(fs::exists(mirror / "updates/Packages" / kMedium));
    ASSERT_TRUE(fs::exists(mirror / "base/Packages" / kMedium));
    EXPECT_EQ(links_of(mirror / "base/Packages" / kMedium), 1U);
    EXPECT_EQ(read_file(mirror / "base/Packages" / kMedium), before);
    EXPECT_EQ(tree_digests(mirror / "base", {}), package_digests(test_repo("sample-repo")));
}

// tmpfs has no FICLONE: --dedupe=reflink falls back to downloading, with a warning, exit 0.
TEST_F(SyncDedupe, ReflinkOnTmpfsFallsBackToTheDownload) {
    const ShmDir shm;
    ASSERT_EQ(sync_repo("base", shm.path).exit_code, 0);
    const CommandResult result =
        sync_repo("updates", shm.path, {"--dedupe=reflink", "--json", "-"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(package_uris(uris_since(*updates_, 0)), all_uris());
    EXPECT_NE(result.err.find("reflink"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("downloading it"), std::string::npos) << result.err;
    const auto report = nlohmann::json::parse(result.out, nullptr, false);
    ASSERT_FALSE(report.is_discarded()) << result.out;
    EXPECT_EQ(report["repositories"][0]["linked"], 0);
    EXPECT_EQ(report["repositories"][0]["link_fallbacks"], shared().size());
    EXPECT_EQ(tree_digests(shm.path / "updates", {}), package_digests(updates_repo_));
}

TEST_F(SyncDedupe, DedupeDirIsSearchedButNeverAcrossFilesystems) {
    const fs::path elsewhere = tmp_ / "elsewhere";
    ASSERT_EQ(sync_repo("base", elsewhere).exit_code, 0);
    const fs::path mirror = tmp_ / "mirror";
    ASSERT_EQ(sync_repo("updates", mirror, {"--dedupe-dir", elsewhere.string()}).exit_code, 0);
    EXPECT_EQ(package_uris(uris_since(*updates_, 0)),
              std::vector<std::string>{"/Packages/" + kOwn});
    EXPECT_EQ(inode_of(mirror / "updates/Packages" / kMedium),
              inode_of(elsewhere / "base/Packages" / kMedium));

    // The same packages on tmpfs, the mirror on the temporary directory's filesystem.
    const ShmDir shm;
    struct stat shm_st {};
    struct stat tmp_st {};
    ASSERT_EQ(::stat(shm.path.c_str(), &shm_st), 0);
    ASSERT_EQ(::stat(tmp_.path().c_str(), &tmp_st), 0);
    ASSERT_NE(shm_st.st_dev, tmp_st.st_dev)
        << "this test needs the temporary directory on another filesystem than /dev/shm";
    ASSERT_EQ(sync_repo("base", shm.path).exit_code, 0);
    const std::size_t logged = log_size(*updates_);
    const fs::path second = tmp_ / "second";
    const CommandResult result = sync_repo("updates", second, {"--dedupe-dir", shm.path.string()});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(package_uris(uris_since(*updates_, logged)), all_uris());
    EXPECT_EQ(result.err, "") << "another filesystem is not a fallback: nothing to warn about";
}

TEST_F(SyncDedupe, JobModeLinksFromTheOtherJobsOfTheDestination) {
    const fs::path mirror = tmp_ / "mirror";
    const fs::path config = TempDir::write_at(
        tmp_ / "etc/rpmirror.conf", "[main]\ndestination = " + mirror.string() +
                                        "\n\n[base]\nbaseurl = " + base_->url("/") +
                                        "\n\n[updates]\nbaseurl = " + updates_->url("/") + "\n");
    const auto run_job = [&](const std::string& job) {
        CommandResult result = run_to_end(
            rpmirror_sync_argv({"--config-file", config.string(), "--job", job}), tmp_ / "logs");
        expect_no_sanitizer_report(result.err);
        return result;
    };
    ASSERT_EQ(run_job("base").exit_code, 0);
    const CommandResult result = run_job("updates");
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_EQ(package_uris(uris_since(*updates_, 0)),
              std::vector<std::string>{"/Packages/" + kOwn});
    EXPECT_EQ(inode_of(mirror / "updates/Packages" / kMedium),
              inode_of(mirror / "base/Packages" / kMedium));
}

}  // namespace
}  // namespace rpmirror::test
