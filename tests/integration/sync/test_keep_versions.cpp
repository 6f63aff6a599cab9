// `rpmirror sync --keep-versions N`: the newest N EVRs per name.arch of a repository with five
// versions of every name (scripts/make-versions-test-repo), N = 1 the same set as
// `dnf reposync -n`; `--delete` removes what fell out, and the recorded selection carries N so
// the next run with another N is not a no-op and `verify` audits the same set.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "integration/sync/sync_fixture.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;
using Names = std::vector<std::string>;

// Newest first, per name.arch (the order scripts/make-versions-test-repo documents).
const std::vector<Names> kNewestFirst{
    {"alpha-2.0-2.x86_64.rpm", "alpha-2.0-1.x86_64.rpm", "alpha-1.10-1.x86_64.rpm",
     "alpha-1.2-1.x86_64.rpm", "alpha-1.0-1.x86_64.rpm"},
    {"beta-0.5-1.noarch.rpm", "beta-0.4-1.noarch.rpm", "beta-0.3-1.noarch.rpm",
     "beta-0.2-1.noarch.rpm", "beta-0.1-1.noarch.rpm"},
    {"gamma-1.0-1.x86_64.rpm", "gamma-8.0-1.x86_64.rpm", "gamma-7.0-1.x86_64.rpm",
     "gamma-6.0-1.x86_64.rpm", "gamma-5.0-1.x86_64.rpm"},
};

// The file names the newest `versions` EVRs of every name.arch give, sorted.
Names newest(std::size_t versions) {
    Names names;
    for (const Names& group : kNewestFirst) {
        names.insert(names.end(), group.begin(),
                     group.begin() + static_cast<long>(std::min(versions, group.size())));
    }
    std::sort(names.begin(), names.end());
    return names;
}

class KeepVersions : public SyncFixture {
  protected:
    void SetUp() override {
        SyncFixture::SetUp();
        server_ = &serve(test_repo("versions-repo"));
        mirror_ = tmp_ / "mirror";
    }

    CommandResult sync_versions(const std::vector<std::string>& options) {
        std::vector<std::string> args{
            "--repofrompath", "versions," + server_->url("/"), "--repo", "versions", "-p",
            mirror_.string()};
        args.insert(args.end(), options.begin(), options.end());
        return sync(args);
    }

    CommandResult verify(const std::vector<std::string>& args) {
        std::vector<std::string> argv{rpmirror_binary(), "verify", "-p", mirror_.string()};
        argv.insert(argv.end(), args.begin(), args.end());
        CommandResult result = run_to_end(argv, tmp_ / "logs");
        expect_no_sanitizer_report(result.err);
        return result;
    }

    // The package file names under `repo`/Packages, sorted.
    static Names packages_in(const fs::path& repo) {
        Names names;
        for (const auto& [path, digest] : tree_digests(repo / "Packages")) {
            names.push_back(path);
        }
        return names;
    }

    NginxServer* server_ = nullptr;
    fs::path mirror_;
};

class KeepVersionsCount : public KeepVersions, public ::testing::WithParamInterface<int> {};

TEST_P(KeepVersionsCount, KeepsTheNewestNEvrsOfEveryNameArch) {
    const int versions = GetParam();
    const CommandResult synced = sync_versions({"--keep-versions", std::to_string(versions)});
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    EXPECT_EQ(packages_in(mirror_ / "versions"), newest(static_cast<std::size_t>(versions)));
}

INSTANTIATE_TEST_SUITE_P(Counts, KeepVersionsCount, ::testing::Values(1, 2, 5, 7));

TEST_F(KeepVersions, OneIsDnfReposyncNewestOnly) {
    if (::system("dnf reposync --help > /dev/null 2>&1") != 0) {  // NOLINT(cert-env33-c)
        GTEST_FAIL() << "`dnf reposync` does not run; scripts/deps installs it (Debian packages "
                        "dnf, dnf-plugins-core)";
    }
    std::vector<std::string> dnf = isolated_dnf(tmp_ / "dnf-state");
    dnf.insert(dnf.end(), {"--repofrompath=versions," + server_->url("/"), "--repo=versions",
                           "reposync", "-n", "-p", (tmp_ / "dnf").string()});
    const CommandResult by_dnf = run_to_end(dnf, tmp_ / "logs");
    ASSERT_EQ(by_dnf.exit_code, 0) << by_dnf.out << by_dnf.err;

    const CommandResult kept = sync_versions({"--keep-versions", "1"});
    ASSERT_EQ(kept.exit_code, 0) << kept.out << kept.err;
    mirror_ = tmp_ / "newest-only";
    const CommandResult newest_only = sync_versions({"-n"});
    ASSERT_EQ(newest_only.exit_code, 0) << newest_only.out << newest_only.err;

    const auto expected = tree_digests(tmp_ / "dnf");
    EXPECT_EQ(packages_in(tmp_ / "dnf" / "versions"), newest(1));
    EXPECT_EQ(tree_digests(tmp_ / "mirror"), expected);
    EXPECT_EQ(tree_digests(tmp_ / "newest-only"), expected);
}

TEST_F(KeepVersions, DeleteGoingFromThreeToTwoRemovesExactlyTheOldestKept) {
    const CommandResult three = sync_versions({"--keep-versions", "3", "--delete"});
    ASSERT_EQ(three.exit_code, 0) << three.out << three.err;
    ASSERT_EQ(packages_in(mirror_ / "versions"), newest(3));
    const auto before = tree_digests(mirror_ / "versions");

    const CommandResult two = sync_versions({"--keep-versions", "2", "--delete"});
    ASSERT_EQ(two.exit_code, 0) << two.out << two.err;

    EXPECT_EQ(packages_in(mirror_ / "versions"), newest(2));
    Names deleted;
    for (const std::string& line : lines_of(two.out)) {
        if (line.starts_with("versions: deleted ")) {
            deleted.push_back(line.substr(std::string("versions: deleted Packages/").size()));
        }
    }
    std::sort(deleted.begin(), deleted.end());
    EXPECT_EQ(deleted,
              (Names{"alpha-1.10-1.x86_64.rpm", "beta-0.3-1.noarch.rpm", "gamma-7.0-1.x86_64.rpm"}))
        << two.out;
    for (const auto& [path, digest] : tree_digests(mirror_ / "versions")) {
        EXPECT_EQ(before.at(path), digest) << path << " was kept, never rewritten";
    }
}

TEST_F(KeepVersions, AnotherCountIsNotANoOp) {
    const CommandResult two = sync_versions({"--keep-versions", "2"});
    ASSERT_EQ(two.exit_code, 0) << two.out << two.err;
    const std::size_t before = log_size(*server_);

    const CommandResult three = sync_versions({"--keep-versions", "3"});
    ASSERT_EQ(three.exit_code, 0) << three.out << three.err;

    EXPECT_EQ(packages_in(mirror_ / "versions"), newest(3));
    EXPECT_EQ(package_uris(uris_since(*server_, before)),
              (Names{"/Packages/alpha-1.10-1.x86_64.rpm", "/Packages/beta-0.3-1.noarch.rpm",
                     "/Packages/gamma-7.0-1.x86_64.rpm"}));
}

// With rewritten metadata (the default for a filtered mirror) the mirror's own metadata lists
// exactly what was kept, so verify checks those 6 packages.
TEST_F(KeepVersions, VerifyOfARewrittenMirrorChecksExactlyTheKeptPackages) {
    const CommandResult synced = sync_versions({"--keep-versions", "2", "--download-metadata"});
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    const CommandResult verified = verify({});
    EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;
    EXPECT_NE(verified.out.find("versions: OK: 6 packages"), std::string::npos) << verified.out;
}

// With upstream's metadata published verbatim, the recorded N is what verify selects by.
TEST_F(KeepVersions, VerifyAuditsTheRecordedCount) {
    const CommandResult synced =
        sync_versions({"--keep-versions", "2", "--download-metadata", "--upstream-metadata"});
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;

    const CommandResult verified = verify({});
    EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;
    EXPECT_NE(verified.out.find("versions: selection: --keep-versions 2 (recorded by sync)\n"),
              std::string::npos)
        << verified.out;

    // Three versions were never mirrored: auditing for three finds the three missing.
    const CommandResult three = verify({"--keep-versions", "3"});
    EXPECT_EQ(three.exit_code, 1) << three.out << three.err;
    EXPECT_NE(three.out.find("versions: Packages/alpha-1.10-1.x86_64.rpm: missing"),
              std::string::npos)
        << three.out;
    EXPECT_NE(three.out.find("3 problems"), std::string::npos) << three.out;
}

TEST_F(KeepVersions, ACountThatIsNotAPositiveNumberIsAUsageError) {
    for (const std::string bad : {"0", "-1", "two", "", "2x", "99999999999"}) {
        const CommandResult result = sync_versions({"--keep-versions", bad});
        EXPECT_EQ(result.exit_code, 2) << bad << ": " << result.out << result.err;
        EXPECT_NE(result.err.find("--keep-versions"), std::string::npos) << bad << result.err;
    }
    const CommandResult both = sync_versions({"-n", "--keep-versions", "2"});
    EXPECT_EQ(both.exit_code, 2) << both.out << both.err;
    EXPECT_FALSE(fs::exists(mirror_ / "versions" / "Packages")) << "nothing was downloaded";

    const CommandResult audited = verify({"--keep-versions", "0"});
    EXPECT_EQ(audited.exit_code, 2) << audited.out << audited.err;
    EXPECT_NE(audited.err.find("--keep-versions 0"), std::string::npos) << audited.err;
}

}  // namespace
}  // namespace rpmirror::test
