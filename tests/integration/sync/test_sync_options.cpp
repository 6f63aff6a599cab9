// dnf's repository options end to end: the real binary with real .repo files, nginx serving
// repositories built from the specs in the tree. --source with `-source` repositories,
// --enablerepo/--disablerepo, -x, --disableexcludes, --nogpgcheck, --installroot, --forcearch,
// skip_if_unavailable, --norepopath, plain-path baseurls, and the errors for bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "integration/sync/sync_fixture.hpp"
#include "support/http_server.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

// The file names of the URLs -u printed (percent-decoded: whether -u encodes is not tested here).
std::set<std::string> printed_names(const std::string& out) {
    std::set<std::string> names;
    for (const std::string& line : lines_of(out)) {
        const std::string encoded = line.substr(line.rfind('/') + 1);
        std::string name;
        for (std::size_t index = 0; index < encoded.size(); ++index) {
            if (encoded[index] == '%' && index + 2 < encoded.size()) {
                name += static_cast<char>(std::stoi(encoded.substr(index + 1, 2), nullptr, 16));
                index += 2;
            } else {
                name += encoded[index];
            }
        }
        names.insert(name);
    }
    return names;
}

class SyncOptions : public SyncFixture {
  protected:
    // Writes `content` as <tmp>/reposd/<name>.repo.
    void repo_file(const std::string& name, const std::string& content) {
        TempDir::write_at(tmp_ / "reposd" / (name + ".repo"), content);
    }

    // Runs `rpmirror sync` with <tmp>/reposd as the repos directory and an empty config file.
    CommandResult sync_with_repos(const std::vector<std::string>& args) {
        fs::create_directories(tmp_ / "reposd");
        std::vector<std::string> full{"-c", (tmp_ / "empty.conf").string(), "--reposdir",
                                      (tmp_ / "reposd").string()};
        full.insert(full.end(), args.begin(), args.end());
        CommandResult result = run_to_end(rpmirror_sync_argv(full), tmp_ / "logs");
        expect_no_sanitizer_report(result.err);
        return result;
    }

    // "fedora" (the sample repository: binary packages only) and "fedora-source" (enabled=0; the
    // index repository, whose two source packages --source keeps), as a distribution ships them.
    void standard_fedora_repos() {
        const NginxServer& binary = serve(test_repo("sample-repo"));
        const NginxServer& source = serve(test_repo("index-repo"));
        repo_file("fedora", "[fedora]\nname=Fedora\nbaseurl=" + binary.url("/") +
                                "\n\n[fedora-source]\nname=Fedora - Source\nbaseurl=" +
                                source.url("/") + "\nenabled=0\n");
    }

    const std::set<std::string> sample_packages_ = package_names(test_repo("sample-repo"));
    const std::set<std::string> source_packages_ = {"rpmirror-idx-multi-1.10-1.src.rpm",
                                                    "rpmirror-idx-noarch-1.0-1.src.rpm"};
};

TEST_F(SyncOptions, SourceMirrorsTheSourceRepositoryOfTheSelectedOne) {
    standard_fedora_repos();
    const fs::path mirror = tmp_ / "mirror";

    const CommandResult result =
        sync_with_repos({"--repo", "fedora", "--source", "-p", mirror.string()});

    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_TRUE(package_names(mirror / "fedora").empty()) << "fedora has no src packages";
    EXPECT_EQ(package_names(mirror / "fedora-source"), source_packages_);
}

TEST_F(SyncOptions, SourceRepositoryNamedDirectlyIsMirrored) {
    standard_fedora_repos();
    const fs::path mirror = tmp_ / "mirror";

    const CommandResult result =
        sync_with_repos({"--repo", "fedora-source", "--source", "-p", mirror.string()});

    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_FALSE(fs::exists(mirror / "fedora"));
    EXPECT_EQ(package_names(mirror / "fedora-source"), source_packages_);
}

TEST_F(SyncOptions, EnablerepoAndDisablerepoApplyInOrder) {
    standard_fedora_repos();

    CommandResult result =
        sync_with_repos({"--disablerepo", "*", "--enablerepo", "fedora-*", "-u"});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_EQ(printed_names(result.out), package_names(test_repo("index-repo")));

    result = sync_with_repos({"--enablerepo", "fedora-source", "--disablerepo=fedora,x*", "-u"});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_EQ(printed_names(result.out), package_names(test_repo("index-repo")));
    EXPECT_NE(result.err.find("No repository match: x*"), std::string::npos) << result.err;
}

TEST_F(SyncOptions, UnknownEnabledRepoIsAUsageError) {
    standard_fedora_repos();
    const CommandResult result = sync_with_repos({"--enablerepo", "centos*", "-u"});
    EXPECT_EQ(result.exit_code, 2) << result.out << result.err;
    EXPECT_EQ(result.err, "rpmirror: --enablerepo: Unknown repo: 'centos*'\n");
}

TEST_F(SyncOptions, ExcludeAppliesToEveryRepositoryAndDisableexcludesLiftsIt) {
    standard_fedora_repos();

    CommandResult result = sync_with_repos(
        {"--enablerepo", "fedora-source", "-x", "rpmirror-sample-t*,*-idx-multi", "-u"});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    std::set<std::string> expected;
    for (const fs::path& repo : {test_repo("sample-repo"), test_repo("index-repo")}) {
        for (const std::string& name : package_names(repo)) {
            if (!name.starts_with("rpmirror-sample-tiny-") &&
                !name.starts_with("rpmirror-idx-multi-")) {
                expected.insert(name);
            }
        }
    }
    EXPECT_EQ(printed_names(result.out), expected);
    EXPECT_LT(expected.size(), sample_packages_.size() + 13 - 1);

    result = sync_with_repos({"-x", "rpmirror-sample-t*", "--disableexcludes", "main", "-u"});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_EQ(printed_names(result.out), sample_packages_);
}

TEST_F(SyncOptions, BadDisableexcludesValueIsAUsageError) {
    standard_fedora_repos();
    const CommandResult result = sync_with_repos({"--disableexcludes", "../x", "-u"});
    EXPECT_EQ(result.exit_code, 2) << result.out << result.err;
    EXPECT_EQ(result.err,
              "rpmirror: --disableexcludes: invalid value '../x' (expected all, main or a repo "
              "id)\n");
}

TEST_F(SyncOptions, NogpgcheckTurnsRepoGpgcheckOff) {
    const NginxServer& server = serve(test_repo("sample-repo"));
    repo_file("signed", "[signed]\nbaseurl=" + server.url("/") +
                            "\nrepo_gpgcheck=1\ngpgcheck=1\ngpgkey=file://" +
                            (tmp_ / "no-such-key.asc").string() + "\n");
    const fs::path mirror = tmp_ / "mirror";

    const CommandResult refused = sync_with_repos({"-p", mirror.string()});
    EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
    EXPECT_NE(refused.err.find("no-such-key.asc"), std::string::npos) << refused.err;

    const CommandResult result = sync_with_repos({"-p", mirror.string(), "--nogpgcheck", "-g"});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_EQ(package_names(mirror / "signed"), sample_packages_);
}

TEST_F(SyncOptions, InstallrootConfigReposAndVarsAreReadFromIt) {
    const fs::path served = tmp_ / "served";
    copy_repo(test_repo("sample-repo"), served / "flavour-x" / "os");
    const NginxServer& server = serve(served);
    const fs::path root = tmp_ / "root";
    TempDir::write_at(root / "etc" / "dnf" / "dnf.conf", "[main]\nreposdir=/etc/rooted.repos.d\n");
    TempDir::write_at(root / "etc" / "rooted.repos.d" / "r.repo",
                      "[rooted]\nbaseurl=" + server.url("/") + "$flavour/os/\n");
    TempDir::write_at(root / "etc" / "dnf" / "vars" / "flavour", "flavour-x\n");
    const fs::path mirror = tmp_ / "mirror";

    // No -c, no --reposdir: everything from beneath the installroot.
    const CommandResult result = run_to_end(
        rpmirror_sync_argv({"--installroot", root.string(), "-p", mirror.string()}), tmp_ / "logs");

    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_EQ(package_names(mirror / "rooted"), sample_packages_);
}

TEST_F(SyncOptions, ForcearchSetsBasearch) {
    const fs::path served = tmp_ / "served";
    copy_repo(test_repo("sample-repo"), served / "aarch64");
    const NginxServer& server = serve(served);
    repo_file("arch", "[arch]\nbaseurl=" + server.url("/") + "$basearch/\n");

    const CommandResult result = sync_with_repos({"--forcearch", "aarch64", "-u"});

    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_EQ(printed_names(result.out), sample_packages_);
    EXPECT_NE(result.out.find(server.url("/aarch64/Packages/")), std::string::npos) << result.out;
}

TEST_F(SyncOptions, SkipIfUnavailableMakesADeadRepositoryAWarning) {
    const NginxServer& server = serve(test_repo("sample-repo"));
    const std::string dead_url = "http://127.0.0.1:" + std::to_string(pick_free_port()) + "/";
    repo_file("two", "[dead]\nbaseurl=" + dead_url + "\nretries=1\nskip_if_unavailable=1\n\n" +
                         "[alive]\nbaseurl=" + server.url("/") + "\n");
    const fs::path mirror = tmp_ / "mirror";

    const CommandResult result = sync_with_repos({"-p", mirror.string()});

    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_EQ(package_names(mirror / "alive"), sample_packages_);
    EXPECT_NE(result.err.find("rpmirror: warning: Failed to download metadata for repo 'dead': "),
              std::string::npos)
        << result.err;
    EXPECT_NE(result.err.find("rpmirror: warning: Ignoring repositories: dead\n"),
              std::string::npos)
        << result.err;
    EXPECT_EQ(result.err.find("dead: FAILED"), std::string::npos) << result.err;
    // The warning names the setting that made a dead repository one, and where it is.
    EXPECT_NE(result.err.find("(skipped: skip_if_unavailable=1 from " +
                              (tmp_ / "reposd" / "two.repo").string() + ":4)"),
              std::string::npos)
        << result.err;

    // dnf 4's default is skip_if_unavailable=False: the same dead repository fails the run.
    const CommandResult strict =
        sync_with_repos({"-p", mirror.string(), "--setopt=dead.skip_if_unavailable=0"});
    EXPECT_EQ(strict.exit_code, 1) << strict.out << strict.err;
    EXPECT_NE(strict.err.find("dead: FAILED"), std::string::npos) << strict.err;
}

TEST_F(SyncOptions, NorepopathWithSeveralRepositoriesFailsAsDnf) {
    standard_fedora_repos();
    const CommandResult result = sync_with_repos(
        {"--enablerepo", "fedora-source", "--norepopath", "-p", (tmp_ / "m").string()});
    EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
    EXPECT_EQ(result.err, "Error: Can't use --norepopath with multiple repositories\n");
    EXPECT_FALSE(fs::exists(tmp_ / "m"));
}

TEST_F(SyncOptions, PlainPathBaseurlIsALocalRepository) {
    repo_file("local", "[local]\nbaseurl=" + test_repo("sample-repo").string() + "\n");
    const fs::path mirror = tmp_ / "mirror";

    const CommandResult result = sync_with_repos({"-p", mirror.string()});

    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_EQ(tree_digests(mirror / "local"), package_digests(test_repo("sample-repo")));
}

TEST_F(SyncOptions, UnpaddedMinBuildtimeIsAccepted) {
    standard_fedora_repos();
    const CommandResult result = sync_with_repos({"--min-buildtime", "2008-1-1", "-u"});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_EQ(printed_names(result.out), sample_packages_);

    const CommandResult bad = sync_with_repos({"--min-buildtime", "2008-13-1", "-u"});
    EXPECT_EQ(bad.exit_code, 2) << bad.out << bad.err;
    EXPECT_NE(bad.err.find("--min-buildtime 2008-13-1"), std::string::npos) << bad.err;
}

TEST_F(SyncOptions, CacheonlyIsRefusedAndRefreshAccepted) {
    standard_fedora_repos();
    const CommandResult cached = sync_with_repos({"-C", "-u"});
    EXPECT_EQ(cached.exit_code, 2) << cached.out << cached.err;
    EXPECT_NE(cached.err.find("a mirror cannot be made from dnf's metadata cache"),
              std::string::npos)
        << cached.err;

    const CommandResult refreshed = sync_with_repos({"--refresh", "-u"});
    EXPECT_EQ(refreshed.exit_code, 0) << refreshed.out << refreshed.err;
    EXPECT_EQ(printed_names(refreshed.out), sample_packages_);
}

// dnf's global options scripts put on a reposync command line: -4/-6 resolve as dnf's do, the
// others are accepted and change nothing.
TEST_F(SyncOptions, DnfGlobalOptionsAreAccepted) {
    standard_fedora_repos();
    const CommandResult result =
        sync_with_repos({"-y", "--assumeno", "--noplugins", "--disableplugin=*", "-d", "0", "-e",
                         "0", "--color", "never", "-4", "-u"});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_EQ(printed_names(result.out), sample_packages_);
    EXPECT_EQ(result.err, "fedora: 5 of 5 packages selected\n");  // -u's summary, no warning

    // -6 against a server on 127.0.0.1 only: no IPv6 address, so the repository fails.
    const CommandResult v6 = sync_with_repos({"-6", "-u"});
    EXPECT_EQ(v6.exit_code, 1) << v6.out << v6.err;

    const CommandResult both = sync_with_repos({"-4", "-6", "-u"});
    EXPECT_EQ(both.exit_code, 2) << both.out << both.err;
}

}  // namespace
}  // namespace rpmirror::test
