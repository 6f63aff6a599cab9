// End-to-end tests of `rpmirror verify`: the real binary against a mirror copied from a real
// repository (scripts/make-sample-repo: rpmbuild + createrepo_c), damaged in the ways mirrors get
// damaged, repaired from a file:// source, and audited against a repository nginx serves.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rpmirror/checksum/checksum.hpp"
#include "support/child_process.hpp"
#include "support/nginx.hpp"
#include "support/source_tree.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

struct VerifyRun {
    int exit_code = -1;
    std::string output;  // stdout and stderr together
};

class VerifyCli : public ::testing::Test {
  protected:
    void SetUp() override {
        if (auto prebuilt = prebuilt_test_repo("sample-repo")) {
            original_ = *prebuilt;
        } else {
            original_ = tmp_ / "original";
            const int status = run_command(
                {(source_root() / "scripts" / "make-sample-repo").string(), original_.string()},
                tmp_ / "make-sample-repo.log");
            ASSERT_EQ(status, 0) << read_file(tmp_ / "make-sample-repo.log");
        }
        mirror_ = tmp_ / "mirror";
        repo_ = mirror_ / "sample";
        fs::create_directories(mirror_);
        fs::copy(original_, repo_, fs::copy_options::recursive);
        for (const auto& entry : fs::directory_iterator(repo_ / "Packages")) {
            packages_.push_back(entry.path().filename().string());
        }
        std::sort(packages_.begin(), packages_.end());
        ASSERT_GE(packages_.size(), 3U);
        fs::create_directories(tmp_ / "empty-reposdir");
        TempDir::write_at(tmp_ / "empty.conf", "[main]\n");
    }

    // Runs `rpmirror verify -p <mirror> <args>`, isolated from the host's dnf configuration.
    VerifyRun verify(const std::vector<std::string>& args) {
        std::vector<std::string> argv{RPMIRROR_BINARY,
                                      "verify",
                                      "-p",
                                      mirror_.string(),
                                      "-c",
                                      (tmp_ / "empty.conf").string(),
                                      "--reposdir",
                                      (tmp_ / "empty-reposdir").string()};
        argv.insert(argv.end(), args.begin(), args.end());
        const fs::path log = tmp_ / ("verify-" + std::to_string(++runs_) + ".log");
        VerifyRun run;
        run.exit_code = run_command(argv, log);
        run.output = read_file(log);
        return run;
    }

    fs::path package(std::size_t index) const { return repo_ / "Packages" / packages_[index]; }
    std::string package_href(std::size_t index) const { return "Packages/" + packages_[index]; }

    fs::path primary_file() const {
        for (const auto& entry : fs::directory_iterator(repo_ / "repodata")) {
            if (entry.path().filename().string().ends_with("-primary.xml.gz")) {
                return entry.path();
            }
        }
        return {};
    }

    // Overwrites one byte in the middle of `file`, keeping its size (and inode).
    static void flip_byte(const fs::path& file) {
        const int fd = ::open(file.c_str(), O_RDWR | O_CLOEXEC);
        ASSERT_GE(fd, 0);
        const off_t middle = static_cast<off_t>(fs::file_size(file) / 2);
        char byte = 0;
        ASSERT_EQ(::pread(fd, &byte, 1, middle), 1);
        byte = static_cast<char>(byte ^ 0x5a);
        ASSERT_EQ(::pwrite(fd, &byte, 1, middle), 1);
        ::close(fd);
    }

    static void set_mtime(const fs::path& file, const timespec& mtime) {
        const timespec times[2] = {{0, UTIME_OMIT}, mtime};
        ASSERT_EQ(::utimensat(AT_FDCWD, file.c_str(), times, 0), 0);
    }

    TempDir tmp_;
    fs::path original_;
    fs::path mirror_;
    fs::path repo_;
    std::vector<std::string> packages_;
    int runs_ = 0;
};

TEST_F(VerifyCli, CleanMirrorExitsZero) {
    const VerifyRun run = verify({});
    EXPECT_EQ(run.exit_code, 0) << run.output;
    EXPECT_NE(run.output.find("sample: OK: " + std::to_string(packages_.size()) + " packages"),
              std::string::npos)
        << run.output;
}

TEST_F(VerifyCli, QuietCleanMirrorPrintsNothing) {
    const VerifyRun run = verify({"-q"});
    EXPECT_EQ(run.exit_code, 0) << run.output;
    EXPECT_EQ(run.output, "");
}

TEST_F(VerifyCli, CorruptedPackageOfTheSameSizeIsAChecksumMismatch) {
    const std::string expected = hash_file(package(0), ChecksumType::Sha256, {false}).value().hex;
    flip_byte(package(0));
    const std::string found = hash_file(package(0), ChecksumType::Sha256, {false}).value().hex;
    const VerifyRun run = verify({});
    EXPECT_EQ(run.exit_code, 1) << run.output;
    EXPECT_NE(
        run.output.find("sample: " + package_href(0) + ": checksum mismatch (expected sha256 " +
                        expected + ", found " + found + ")"),
        std::string::npos)
        << run.output;
    EXPECT_NE(run.output.find("sample: 1 problem:"), std::string::npos) << run.output;
}

TEST_F(VerifyCli, TruncatedPackageIsASizeMismatch) {
    const auto size = fs::file_size(package(1));
    fs::resize_file(package(1), size / 2);
    const VerifyRun run = verify({"-q"});
    EXPECT_EQ(run.exit_code, 1) << run.output;
    EXPECT_EQ(run.output, "sample: " + package_href(1) + ": size mismatch (expected " +
                              std::to_string(size) + ", found " + std::to_string(size / 2) + ")\n");
}

TEST_F(VerifyCli, DeletedPackageIsMissing) {
    fs::remove(package(2));
    const VerifyRun run = verify({"-q"});
    EXPECT_EQ(run.exit_code, 1) << run.output;
    EXPECT_EQ(run.output, "sample: " + package_href(2) + ": missing\n");
}

TEST_F(VerifyCli, ExtraRpmIsReportedOnlyWithExtra) {
    fs::copy_file(package(0), repo_ / "Packages" / "stray-1.0-1.noarch.rpm");
    TempDir::write_at(repo_ / "Packages" / "notes.txt", "not a package\n");
    const VerifyRun without = verify({"-q"});
    EXPECT_EQ(without.exit_code, 0) << without.output;
    EXPECT_EQ(without.output, "");

    const VerifyRun with = verify({"-q", "--extra"});
    EXPECT_EQ(with.exit_code, 1) << with.output;
    EXPECT_EQ(with.output, "sample: Packages/stray-1.0-1.noarch.rpm: extra\n");
}

TEST_F(VerifyCli, SymlinkToAnOutsideRpmIsNeverFollowed) {
    // The link points at a byte-identical copy: following it would call the package fine.
    fs::remove(package(0));
    fs::create_symlink(original_ / "Packages" / packages_[0], package(0));
    fs::create_symlink(original_ / "Packages" / packages_[1], repo_ / "Packages" / "link.rpm");
    const VerifyRun run = verify({"-q", "--extra"});
    EXPECT_EQ(run.exit_code, 1) << run.output;
    EXPECT_EQ(run.output,
              "sample: " + package_href(0) + ": not a regular file (symlink, not followed)\n");
}

TEST_F(VerifyCli, SymlinkedDirectoryLeadingOutsideIsNeverFollowed) {
    fs::remove_all(repo_ / "Packages");
    fs::create_directory_symlink(original_ / "Packages", repo_ / "Packages");
    const VerifyRun run = verify({"-q"});
    EXPECT_EQ(run.exit_code, 1) << run.output;
    for (std::size_t index = 0; index < packages_.size(); ++index) {
        EXPECT_NE(run.output.find("sample: " + package_href(index) +
                                  ": unsafe: a symlinked directory on the way leads outside"),
                  std::string::npos)
            << run.output;
    }
    EXPECT_EQ(run.output.find("OK"), std::string::npos);
}

// The checksum cache vouches only for what rpmirror's record vouches for (CacheTrust): a file
// corrupted in place with its size, inode and mtime put back, its cache entry intact, is hashed
// and found, with or without --no-cache.
TEST_F(VerifyCli, AFileChangedInPlaceWithItsMtimePutBackIsNeverVouchedForByTheCache) {
    const timespec old_mtime{1'600'000'000, 0};  // not "racy": the cache may record it
    set_mtime(package(0), old_mtime);
    ASSERT_EQ(verify({}).exit_code, 0);
    char value[256];
    if (::getxattr(package(0).c_str(), "user.rpmirror.checksum.sha256", value, sizeof(value)) < 0) {
        GTEST_SKIP() << "this filesystem keeps no user xattrs";
    }
    // Corrupt in place (same size, same inode) and put the mtime back: the cache entry still
    // matches size + mtime + inode, but no record of rpmirror's vouches for the file's ctime.
    flip_byte(package(0));
    set_mtime(package(0), old_mtime);

    for (const auto& extra : {std::vector<std::string>{"-q"}, {"-q", "--no-cache"}}) {
        const VerifyRun hashed = verify(extra);
        EXPECT_EQ(hashed.exit_code, 1) << hashed.output;
        EXPECT_NE(hashed.output.find("sample: " + package_href(0) + ": checksum mismatch"),
                  std::string::npos)
            << hashed.output;
    }
}

TEST_F(VerifyCli, RepairRedownloadsWhatIsWrongAndASecondVerifyIsClean) {
    flip_byte(package(0));
    fs::resize_file(package(1), 10);
    fs::remove(package(2));
    const fs::path outside = tmp_ / "outside.rpm";
    fs::copy_file(original_ / "Packages" / packages_[3 % packages_.size()], outside);
    if (packages_.size() > 3) {
        fs::remove(package(3));
        fs::create_symlink(outside, package(3));
    }
    const std::string outside_before = read_file(outside);

    const VerifyRun repair =
        verify({"--repair", "--repofrompath", "sample,file://" + original_.string()});
    EXPECT_EQ(repair.exit_code, 0) << repair.output;
    EXPECT_NE(repair.output.find("sample: repair: removed"), std::string::npos) << repair.output;
    EXPECT_NE(repair.output.find("sample: after repair: OK"), std::string::npos) << repair.output;

    const VerifyRun again = verify({"--no-cache", "--extra"});
    EXPECT_EQ(again.exit_code, 0) << again.output;
    for (std::size_t index = 0; index < packages_.size(); ++index) {
        EXPECT_FALSE(fs::is_symlink(package(index)));
        EXPECT_EQ(read_file(package(index)), read_file(original_ / "Packages" / packages_[index]))
            << packages_[index];
    }
    EXPECT_EQ(read_file(outside), outside_before);  // the symlink's target was never touched
}

TEST_F(VerifyCli, RepairWithoutASourceFails) {
    fs::remove(package(0));
    const VerifyRun run = verify({"--repair"});
    EXPECT_EQ(run.exit_code, 1) << run.output;
    EXPECT_NE(run.output.find("sample: repair: FAILED: no source is configured"), std::string::npos)
        << run.output;
    EXPECT_FALSE(fs::exists(package(0)));
}

TEST_F(VerifyCli, CorruptPrimaryMetadataIsAClearErrorNamingTheFile) {
    const fs::path primary = primary_file();
    ASSERT_FALSE(primary.empty());
    flip_byte(primary);
    const VerifyRun run = verify({});
    EXPECT_EQ(run.exit_code, 1) << run.output;
    const std::string name = primary.filename().string();
    EXPECT_NE(run.output.find("sample: repodata/" + name + ": checksum mismatch"),
              std::string::npos)
        << run.output;
    EXPECT_NE(run.output.find("sample: ERROR: " + primary.string() +
                              ": primary metadata checksum mismatch"),
              std::string::npos)
        << run.output;
    EXPECT_NE(run.output.find("packages not audited"), std::string::npos) << run.output;
}

TEST_F(VerifyCli, RepairReplacesDamagedMetadataAtomically) {
    const fs::path primary = primary_file();
    ASSERT_FALSE(primary.empty());
    flip_byte(primary);
    const VerifyRun repair =
        verify({"--repair", "--repofrompath", "sample,file://" + original_.string()});
    EXPECT_EQ(repair.exit_code, 0) << repair.output;
    EXPECT_NE(repair.output.find("metadata published"), std::string::npos) << repair.output;
    EXPECT_EQ(read_file(primary), read_file(original_ / "repodata" / primary.filename()));
    const VerifyRun again = verify({"-q", "--no-cache"});
    EXPECT_EQ(again.exit_code, 0) << again.output;
    EXPECT_EQ(again.output, "");
}

TEST_F(VerifyCli, JsonReportListsEachProblem) {
    fs::remove(package(0));
    const fs::path report = tmp_ / "report.json";
    const VerifyRun run = verify({"-q", "--json", report.string()});
    EXPECT_EQ(run.exit_code, 1) << run.output;
    const auto json = nlohmann::json::parse(read_file(report));
    EXPECT_EQ(json["exit_code"], 1);
    ASSERT_EQ(json["repositories"].size(), 1U);
    const auto& repository = json["repositories"][0];
    EXPECT_EQ(repository["repo"], "sample");
    EXPECT_EQ(repository["ok"], false);
    EXPECT_EQ(repository["packages"], packages_.size());
    ASSERT_EQ(repository["problems"].size(), 1U);
    EXPECT_EQ(repository["problems"][0]["path"], package_href(0));
    EXPECT_EQ(repository["problems"][0]["kind"], "missing");
}

TEST_F(VerifyCli, UsageErrorsExitTwo) {
    EXPECT_EQ(verify({"--repo", "no-such-repo"}).exit_code, 2);
    EXPECT_EQ(verify({"--no-such-option"}).exit_code, 2);
    const VerifyRun missing_dir = VerifyRun{
        run_command({RPMIRROR_BINARY, "verify", "-p", (tmp_ / "absent").string()}, tmp_ / "l"),
        read_file(tmp_ / "l")};
    EXPECT_EQ(missing_dir.exit_code, 2) << missing_dir.output;
    fs::remove_all(repo_ / "repodata");
    const VerifyRun empty = verify({});
    EXPECT_EQ(empty.exit_code, 2) << empty.output;
    EXPECT_NE(empty.output.find("no repository under"), std::string::npos) << empty.output;
}

TEST_F(VerifyCli, RemoteAuditsAgainstTheMetadataTheServerHasNow) {
    if (!nginx_available()) {
        GTEST_FAIL() << kNginxMissing;
    }
    const fs::path served = tmp_ / "served";
    fs::copy(original_, served, fs::copy_options::recursive);
    NginxServer server(served, tmp_ / "nginx");
    const std::vector<std::string> source{"--remote", "--repofrompath",
                                          "sample," + server.url("/")};

    const VerifyRun clean = verify(source);
    EXPECT_EQ(clean.exit_code, 0) << clean.output;
    EXPECT_NE(clean.output.find("sample: OK"), std::string::npos) << clean.output;
    // Only metadata was fetched: the packages were checked locally, never downloaded.
    const auto log = server.access_log(1);
    ASSERT_FALSE(log.empty());
    bool saw_repomd = false;
    for (const auto& entry : log) {
        const std::string uri = entry.value("uri", "");
        EXPECT_FALSE(uri.ends_with(".rpm")) << uri;
        saw_repomd = saw_repomd || uri == "/repodata/repomd.xml";
    }
    EXPECT_TRUE(saw_repomd);

    // The repository moves on (new metadata revision, one package gone): the mirror's own
    // metadata is now outdated and its copy of the dropped package is extra.
    fs::remove(served / "Packages" / packages_[0]);
    const int status = run_command({"createrepo_c", "--quiet", "--revision", "2", served.string()},
                                   tmp_ / "createrepo.log");
    ASSERT_EQ(status, 0) << read_file(tmp_ / "createrepo.log");
    std::vector<std::string> args = source;
    args.push_back("--extra");
    const VerifyRun moved = verify(args);
    EXPECT_EQ(moved.exit_code, 1) << moved.output;
    EXPECT_NE(moved.output.find("sample: repodata/repomd.xml: outdated"), std::string::npos)
        << moved.output;
    EXPECT_NE(moved.output.find("sample: " + package_href(0) + ": extra"), std::string::npos)
        << moved.output;
    EXPECT_EQ(moved.output.find(package_href(1)), std::string::npos) << moved.output;
}

}  // namespace
}  // namespace rpmirror::test
