// dnf-behave-tests/dnf/plugins-core/reposync-xattrs.feature (ci-dnf-stack dnf-4-stack, 2a79b28f),
// run with `dnf reposync` and with `rpmirror reposync` (see dnfstack_fixture.hpp). Upstream
// downloads to /synced because its installroots live on tmpfs; here the test's directory is on
// the build machine's disk, which takes user xattrs (the test fails, naming the directory, if not).
#include <gtest/gtest.h>
#include <sys/xattr.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <regex>
#include <string>

#include "integration/dnfstack/dnfstack_fixture.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

class DnfStackReposyncXattrs : public DnfStackScenario {
  protected:
    void SetUp() override {
        DnfStackScenario::SetUp();
        if (IsSkipped() || HasFatalFailure()) {
            return;
        }
        const fs::path probe = TempDir::write_at(tmp_ / "xattr-probe", "");
        ASSERT_EQ(::setxattr(probe.c_str(), "user.probe", "1", 1, 0), 0)
            << tmp_.path()
            << " does not take user xattrs (TMPDIR on tmpfs?): " << std::strerror(errno);
    }

    fs::path synced_ = tmp_ / "synced";
};

TEST_P(DnfStackReposyncXattrs, DifferentChecksumTypeDoesNotCauseRedownload) {
    const fs::path repo = copy_for_modification("simple-base");
    const fs::path sha256_copy = copy_repo(repo, tmp_ / "repos-sha256" / "simple-base-sha256");
    configure_repository("simple-base-sha256", "file://" + sha256_copy.string());
    execute({"createrepo_c", "--quiet", "--no-database", "--simple-md-filenames",
             "--revision=1550000000", "--checksum", "sha512", repo.string()});
    use_repository("simple-base", repo, true);

    const CommandResult first = reposync(
        {"--repoid=simple-base-sha256", "--norepopath", "--download-path=" + synced_.string()});
    ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
    const CommandResult second =
        reposync({"--repoid=simple-base", "--norepopath", "--download-path=" + synced_.string()});
    ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
    EXPECT_TRUE(contains_match(
        second.out, R"(\[SKIPPED\] labirinto-1\.0-1\.fc29\.x86_64\.rpm: Already downloaded)"))
        << second.out;
    const auto attributes = xattrs(synced_ / "x86_64" / "labirinto-1.0-1.fc29.x86_64.rpm", "user.");
    std::map<std::string, std::string> librepo;
    for (const auto& [name, value] : attributes) {
        if (name.starts_with("user.librepo.") || name.starts_with("user.Librepo.")) {
            librepo[name.substr(std::string("user.librepo.").size())] = value;
        }
    }
    ASSERT_EQ(librepo.size(), 3U) << "xattrs: " << attributes.size();
    EXPECT_TRUE(std::regex_match(librepo["checksum.mtime"], std::regex("[0-9]+")));
    EXPECT_TRUE(std::regex_match(librepo["checksum.sha256"], std::regex("[0-9a-f]{64}")));
    EXPECT_TRUE(std::regex_match(librepo["checksum.sha512"], std::regex("[0-9a-f]{128}")));
}

TEST_P(DnfStackReposyncXattrs, RemoteTimeStoresTheFilesMtimeInTheXattr) {
    use_repository("simple-base", fixture_repo("simple-base"), true);
    const CommandResult result = reposync({"--repoid=simple-base", "--norepopath",
                                           "--download-path=" + synced_.string(), "--remote-time"});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    const fs::path package = synced_ / "x86_64" / "labirinto-1.0-1.fc29.x86_64.rpm";
    std::string stored;
    for (const auto& [name, value] : xattrs(package, "user.")) {
        if (name == "user.librepo.checksum.mtime" || name == "user.Librepo.checksum.mtime") {
            stored = value;
        }
    }
    EXPECT_EQ(stored, std::to_string(mtime_ns(package)));
}

INSTANTIATE_TEST_SUITE_P(Both, DnfStackReposyncXattrs,
                         ::testing::Values(Reposync::Dnf, Reposync::Rpmirror), reposync_name);

}  // namespace
}  // namespace rpmirror::test
