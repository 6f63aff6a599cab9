// `rpmirror sync` against dnf itself: the mirror is a repository dnf can use, and for the same
// repository and options the tree equals the one `dnf reposync` produces.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "integration/dnfstack/dnfstack_fixture.hpp"
#include "integration/sync/sync_fixture.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

// Returns `url` with every %XX sequence decoded.
std::string percent_decoded(const std::string& url) {
    std::string decoded;
    for (std::size_t index = 0; index < url.size(); ++index) {
        if (url[index] == '%' && index + 2 < url.size()) {
            decoded += static_cast<char>(std::stoi(url.substr(index + 1, 2), nullptr, 16));
            index += 2;
        } else {
            decoded += url[index];
        }
    }
    return decoded;
}

class SyncWithDnf : public SyncFixture {
  protected:
    void SetUp() override {
        SyncFixture::SetUp();
        if (IsSkipped()) {
            return;
        }
        if (!dnf_reposync_available()) {
            GTEST_FAIL() << "`dnf reposync` does not run; scripts/deps installs it (Debian "
                            "packages dnf, dnf-plugins-core)";
        }
    }

    // Runs dnf (isolated, in its own state directory) with `args` and repository `id` at `url`.
    CommandResult dnf(const std::string& id, const std::string& url,
                      const std::vector<std::string>& args) {
        std::vector<std::string> argv =
            isolated_dnf(tmp_ / ("dnf-state-" + std::to_string(++dnf_runs_)));
        argv.push_back("--repofrompath=" + id + "," + url);
        argv.push_back("--repo=" + id);
        argv.insert(argv.end(), args.begin(), args.end());
        return run_to_end(argv, tmp_ / "logs");
    }

    // `dnf repoquery -a` of repository `url`, one NEVRA a line, sorted.
    std::vector<std::string> repoquery(const std::string& url) {
        const CommandResult result =
            dnf("m", url,
                {"repoquery", "-a", "--qf", "%{name}-%{epoch}:%{version}-%{release}.%{arch}"});
        EXPECT_EQ(result.exit_code, 0) << result.err;
        std::vector<std::string> lines = lines_of(result.out);
        std::sort(lines.begin(), lines.end());
        return lines;
    }

    int dnf_runs_ = 0;
};

TEST_F(SyncWithDnf, MirrorIsARepositoryDnfCanQueryAndDownloadFrom) {
    const fs::path upstream = test_repo("sample-repo");
    NginxServer& server = serve(upstream);
    const fs::path mirror = tmp_ / "mirror";
    const CommandResult synced = sync({"--repofrompath", "sample," + server.url("/"), "--repo",
                                       "sample", "-p", mirror.string(), "--download-metadata"});
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    const std::string mirror_url = "file://" + (mirror / "sample").string();

    EXPECT_EQ(repoquery(mirror_url), (std::vector<std::string>{
                                         "rpmirror-sample-data-0:1.0-1.noarch",
                                         "rpmirror-sample-docs-0:1.0-1.noarch",
                                         "rpmirror-sample-medium-0:1.0-1.noarch",
                                         "rpmirror-sample-small-0:1.0-1.noarch",
                                         "rpmirror-sample-tiny-0:1.0-1.noarch",
                                     }));

    const fs::path destination = tmp_ / "downloaded";
    const CommandResult download = dnf(
        "m", mirror_url, {"download", "--destdir", destination.string(), "rpmirror-sample-medium"});
    ASSERT_EQ(download.exit_code, 0) << download.out << download.err;
    const std::string name = "rpmirror-sample-medium-1.0-1.noarch.rpm";
    EXPECT_EQ(read_file(destination / name), read_file(upstream / "Packages" / name));
}

TEST_F(SyncWithDnf, MirrorOfAMultiArchRepositoryAnswersQueriesLikeUpstream) {
    const fs::path upstream = test_repo("index-repo");
    NginxServer& server = serve(upstream);
    const fs::path mirror = tmp_ / "mirror";
    const CommandResult synced = sync({"--repofrompath", "idx," + server.url("/"), "--repo", "idx",
                                       "-p", mirror.string(), "--download-metadata"});
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;

    const std::vector<std::string> from_upstream = repoquery(server.url("/"));
    EXPECT_FALSE(from_upstream.empty());
    EXPECT_EQ(repoquery("file://" + (mirror / "idx").string()), from_upstream);
}

struct CompatCase {
    std::string name;
    std::string repo;                  // test_repo() name
    std::vector<std::string> options;  // "@META@" stands for a metadata directory
};

// gtest prints a case by its name.
void PrintTo(const CompatCase& compat, std::ostream* stream) {
    *stream << compat.name;
}

class SyncDnfCompat : public SyncWithDnf, public ::testing::WithParamInterface<CompatCase> {};

// Returns `options` with "@META@" replaced by `metadata_dir`.
std::vector<std::string> with_metadata_dir(std::vector<std::string> options,
                                           const fs::path& metadata_dir) {
    for (std::string& option : options) {
        if (option == "@META@") {
            option = metadata_dir.string();
        }
    }
    return options;
}

TEST_P(SyncDnfCompat, ProducesTheSameFilesAsDnfReposync) {
    const CompatCase& compat = GetParam();
    NginxServer& server = serve(test_repo(compat.repo));
    const fs::path by_dnf = tmp_ / "dnf";
    const fs::path by_rpmirror = tmp_ / "rpmirror";
    fs::create_directories(by_dnf);

    std::vector<std::string> dnf_args{"reposync", "-p", (by_dnf / "packages").string()};
    for (const std::string& option : with_metadata_dir(compat.options, by_dnf / "metadata")) {
        dnf_args.push_back(option);
    }
    const CommandResult dnf_result = dnf("repo", server.url("/"), dnf_args);
    ASSERT_EQ(dnf_result.exit_code, 0) << dnf_result.out << dnf_result.err;

    std::vector<std::string> sync_args{"--repofrompath",
                                       "repo," + server.url("/"),
                                       "--repo",
                                       "repo",
                                       "-p",
                                       (by_rpmirror / "packages").string()};
    for (const std::string& option : with_metadata_dir(compat.options, by_rpmirror / "metadata")) {
        sync_args.push_back(option);
    }
    // dnf publishes upstream's metadata even when filters left packages out: so does
    // --upstream-metadata (without it a filtered mirror's metadata is rewritten).
    sync_args.push_back("--upstream-metadata");
    const CommandResult result = sync(sync_args);
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;

    const auto expected = tree_digests(by_dnf);
    EXPECT_FALSE(expected.empty());
    EXPECT_EQ(tree_digests(by_rpmirror), expected);
}

INSTANTIATE_TEST_SUITE_P(
    Options, SyncDnfCompat,
    ::testing::Values(
        CompatCase{"SampleWithMetadata", "sample-repo", {"--download-metadata"}},
        CompatCase{"MultiArchWithMetadata", "index-repo", {"--download-metadata"}},
        CompatCase{"PackagesOnly", "index-repo", {}},
        CompatCase{"NewestOnlyArchList",
                   "index-repo",
                   {"--download-metadata", "--newest-only", "--arch", "x86_64,noarch"}},
        CompatCase{"RepeatedArch", "index-repo", {"--arch", "aarch64", "--arch", "i686"}},
        CompatCase{"Source", "index-repo", {"--source"}},
        CompatCase{"Norepopath", "index-repo", {"--download-metadata", "--norepopath"}},
        CompatCase{
            "MetadataPath", "index-repo", {"--download-metadata", "--metadata-path", "@META@"}}),
    [](const ::testing::TestParamInfo<CompatCase>& info) { return info.param.name; });

TEST_F(SyncWithDnf, UrlsPrintsWhatDnfReposyncPrints) {
    NginxServer& server = serve(test_repo("index-repo"));

    const CommandResult dnf_result =
        dnf("repo", server.url("/"), {"reposync", "--urls", "-p", (tmp_ / "dnf").string()});
    const CommandResult result = sync({"--repofrompath", "repo," + server.url("/"), "--repo",
                                       "repo", "--urls", "-p", (tmp_ / "rpmirror").string()});

    ASSERT_EQ(dnf_result.exit_code, 0) << dnf_result.err;
    ASSERT_EQ(result.exit_code, 0) << result.err;
    // dnf prints hrefs as they are; rpmirror percent-encodes what is not allowed in a URL
    // ("^" -> "%5E"): the same URLs once decoded.
    auto expected = lines_of(dnf_result.out);
    std::vector<std::string> printed;
    for (const std::string& line : lines_of(result.out)) {
        printed.push_back(percent_decoded(line));
    }
    std::sort(expected.begin(), expected.end());
    std::sort(printed.begin(), printed.end());
    EXPECT_EQ(expected.size(), 13U);
    EXPECT_EQ(printed, expected);
}

// One repository of a .repo file in a RepoFileCase.
struct RepoSection {
    std::string id;
    std::string fixture;  // dnf-ci fixture repository (scripts/make-dnf-ci-repos), or
                          // "index-repo" / "sample-repo"; "" = a dead server
    std::vector<std::pair<std::string, std::string>> keys;  // besides name, baseurl, gpgcheck=0
};

struct RepoFileCase {
    std::string name;
    std::vector<RepoSection> repos;
    std::vector<std::string> options;  // "@META@" stands for a metadata directory
    int exit_code = 0;                 // what dnf exits with (rpmirror must agree)
    bool compare_mtimes = false;       // --remote-time: the files' mtimes (seconds) too
    bool seed_stray_files = false;     // a stray .rpm and a .txt in each repository's directory
    // false: only the exit codes are compared. dnf stops at the first repository that fails;
    // rpmirror deliberately still syncs the others (README: per-repository failure isolation).
    bool compare_trees = true;
};

// gtest prints a case by its name.
void PrintTo(const RepoFileCase& compat, std::ostream* stream) {
    *stream << compat.name;
}

// `dnf reposync` and `rpmirror sync` with the same .repo files (not --repofrompath), the same
// options: the same exit code, the same tree, and with -u the same URLs.
class SyncDnfRepoFiles : public SyncWithDnf, public ::testing::WithParamInterface<RepoFileCase> {
  protected:
    void SetUp() override {
        SyncWithDnf::SetUp();
        if (IsSkipped() || HasFatalFailure()) {
            return;
        }
        std::string repo_file;
        for (const RepoSection& section : GetParam().repos) {
            std::string baseurl = "http://127.0.0.1:1/";  // nothing listens on port 1
            if (!section.fixture.empty()) {
                const fs::path root = section.fixture.ends_with("-repo")
                                          ? test_repo(section.fixture)
                                          : dnf_ci_fixtures() / "repos" / section.fixture;
                baseurl = serve(root).url("/");
                roots_[section.id] = root;
            }
            repo_file += "[" + section.id + "]\nname=" + section.id + "\nbaseurl=" + baseurl +
                         "\ngpgcheck=0\n";
            for (const auto& [key, value] : section.keys) {
                repo_file += key + "=" + value + "\n";
            }
        }
        TempDir::write_at(tmp_ / "yum.repos.d" / "compat.repo", repo_file);
    }

    // `dnf <args>` with the case's .repo files only.
    CommandResult dnf_with_repo_files(const std::vector<std::string>& args) {
        const fs::path work = tmp_ / ("dnf-state-" + std::to_string(++dnf_runs_));
        std::vector<std::string> argv = isolated_dnf(work);
        argv.erase(std::find(argv.begin(), argv.end(), "-q"));
        argv.push_back("--setopt=reposdir=" + (tmp_ / "yum.repos.d").string());
        argv.push_back("--disableplugin=*");  // the host's local and versionlock plugins
        argv.push_back("--enableplugin=reposync");
        argv.insert(argv.end(), args.begin(), args.end());
        return run_to_end(argv, tmp_ / "logs");
    }

    // `rpmirror sync <args>` with the case's .repo files only.
    CommandResult rpmirror_with_repo_files(const std::vector<std::string>& args) {
        std::vector<std::string> argv =
            rpmirror_sync_argv({"-c", (tmp_ / "empty.conf").string(), "--reposdir",
                                (tmp_ / "yum.repos.d").string(), "--releasever=1"});
        argv.insert(argv.end(), args.begin(), args.end());
        CommandResult result = run_to_end(argv, tmp_ / "logs");
        expect_no_sanitizer_report(result.err);
        return result;
    }

    // Puts a stray package and a non-package file into each repository's directory under `root`.
    void seed(const fs::path& root) const {
        for (const RepoSection& section : GetParam().repos) {
            TempDir::write_at(root / section.id / "x86_64" / "stray-1.0-1.x86_64.rpm", "stray");
            TempDir::write_at(root / section.id / "notes.txt", "kept");
        }
    }

    // The mtime (seconds) of every file under `root`, by relative path.
    static std::map<std::string, long long> mtimes(const fs::path& root) {
        std::map<std::string, long long> found;
        for (const auto& [path, digest] : tree_digests(root)) {
            found[path] = mtime_ns(root / path) / 1000000000;
        }
        return found;
    }

    // The lines of `text` that are URLs, sorted.
    static std::vector<std::string> url_lines(const std::string& text) {
        std::vector<std::string> urls;
        for (const std::string& line : lines_of(text)) {
            if (line.starts_with("http://") || line.starts_with("https://") ||
                line.starts_with("file://")) {
                urls.push_back(line);
            }
        }
        std::sort(urls.begin(), urls.end());
        return urls;
    }

    std::map<std::string, fs::path> roots_;
};

TEST_P(SyncDnfRepoFiles, SameExitCodeTreeAndUrlsAsDnfReposync) {
    const RepoFileCase& compat = GetParam();
    const fs::path by_dnf = tmp_ / "dnf";
    const fs::path by_rpmirror = tmp_ / "rpmirror";
    if (compat.seed_stray_files) {
        seed(by_dnf / "packages");
        seed(by_rpmirror / "packages");
    }

    std::vector<std::string> dnf_args{"reposync", "-p", (by_dnf / "packages").string()};
    for (const std::string& option : with_metadata_dir(compat.options, by_dnf / "metadata")) {
        dnf_args.push_back(option);
    }
    const CommandResult dnf_result = dnf_with_repo_files(dnf_args);
    ASSERT_EQ(dnf_result.exit_code, compat.exit_code) << dnf_result.out << dnf_result.err;
    const auto expected = tree_digests(by_dnf);
    EXPECT_EQ(expected.empty(), compat.exit_code != 0 && !compat.seed_stray_files);
    std::vector<std::string> dnf_urls_args = dnf_args;
    dnf_urls_args.push_back("--urls");
    const CommandResult dnf_urls = dnf_with_repo_files(dnf_urls_args);

    std::vector<std::string> sync_args{"-p", (by_rpmirror / "packages").string()};
    for (const std::string& option : with_metadata_dir(compat.options, by_rpmirror / "metadata")) {
        sync_args.push_back(option);
    }
    const CommandResult result = rpmirror_with_repo_files(sync_args);
    EXPECT_EQ(result.exit_code, compat.exit_code) << result.out << result.err;
    if (!compat.compare_trees) {
        return;
    }
    EXPECT_EQ(tree_digests(by_rpmirror), expected);
    if (compat.compare_mtimes) {
        EXPECT_EQ(mtimes(by_rpmirror), mtimes(by_dnf));
    }
    std::vector<std::string> urls_args = sync_args;
    urls_args.push_back("--urls");
    const CommandResult urls = rpmirror_with_repo_files(urls_args);
    EXPECT_EQ(urls.exit_code, dnf_urls.exit_code) << urls.out << urls.err;
    EXPECT_EQ(url_lines(urls.out), url_lines(dnf_urls.out)) << urls.out << urls.err;
}

const std::string kUpdates = "dnf-ci-thirdparty-updates";

INSTANTIATE_TEST_SUITE_P(
    Options, SyncDnfRepoFiles,
    ::testing::Values(
        RepoFileCase{"Plain", {{"updates", kUpdates, {}}}, {}},
        RepoFileCase{"SourceEnablesSourceRepos",
                     {{"updates", kUpdates, {}}, {"updates-source", kUpdates, {{"enabled", "0"}}}},
                     {"--repo", "updates", "--source"}},
        RepoFileCase{"SourceRepoByName",
                     {{"updates", kUpdates, {}}, {"updates-source", kUpdates, {{"enabled", "0"}}}},
                     {"--repo", "updates-source"}},
        RepoFileCase{"Downloadcomps", {{"updates", kUpdates, {}}}, {"-m"}},
        RepoFileCase{"DownloadcompsMetadataPath",
                     {{"updates", kUpdates, {}}},
                     {"--downloadcomps", "--metadata-path", "@META@"}},
        RepoFileCase{"Enablerepo",
                     {{"updates", kUpdates, {}}, {"simple", "simple-base", {{"enabled", "0"}}}},
                     {"--enablerepo=simple"}},
        RepoFileCase{"Disablerepo",
                     {{"updates", kUpdates, {}}, {"simple", "simple-base", {}}},
                     {"--disablerepo=updates"}},
        RepoFileCase{"DisableAllEnableOne",
                     {{"updates", kUpdates, {}}, {"simple", "simple-base", {}}},
                     {"--disablerepo=*", "--enablerepo=simp*"}},
        RepoFileCase{"ExcludeGlob", {{"updates", kUpdates, {}}}, {"-x", "Super*"}},
        RepoFileCase{"Excludepkgs", {{"updates", kUpdates, {}}}, {"--excludepkgs=SuperRipper"}},
        RepoFileCase{"RemoteTime",
                     {{"updates", kUpdates, {}}},
                     {"--remote-time", "--download-metadata"},
                     0,
                     true},
        RepoFileCase{"ModularNewestOnly", {{"modular", "reposync-newest-modular", {}}}, {"-n"}},
        RepoFileCase{"ModularMulticontextNewestOnly",
                     {{"modular", "dnf-ci-multicontext-hybrid-multiversion-modular", {}}},
                     {"--newest-only"}},
        RepoFileCase{"SkipIfUnavailableDeadRepository",
                     {{"updates", kUpdates, {}}, {"dead", "", {{"skip_if_unavailable", "1"}}}},
                     {}},
        RepoFileCase{"DeadRepositoryNotSkipped",
                     {{"updates", kUpdates, {}}, {"dead", "", {{"skip_if_unavailable", "0"}}}},
                     {},
                     1,
                     false,
                     false,
                     false},
        RepoFileCase{"Arch", {{"updates", kUpdates, {}}}, {"-a", "x86_64"}},
        RepoFileCase{"NewestOnly", {{"updates", kUpdates, {}}}, {"-n"}},
        RepoFileCase{"Delete", {{"updates", kUpdates, {}}}, {"--delete", "-n"}, 0, false, true},
        RepoFileCase{"Norepopath", {{"updates", kUpdates, {}}}, {"--norepopath"}},
        RepoFileCase{"NorepopathSeveralRepositories",
                     {{"updates", kUpdates, {}}, {"simple", "simple-base", {}}},
                     {"--norepopath"},
                     1},
        RepoFileCase{"MetadataPath",
                     {{"updates", kUpdates, {}}},
                     {"--download-metadata", "--metadata-path", "@META@"}},
        RepoFileCase{"DownloadMetadata", {{"updates", kUpdates, {}}}, {"--download-metadata"}},
        RepoFileCase{
            "IncludepkgsInRepoFile", {{"updates", kUpdates, {{"includepkgs", "SuperRipper"}}}}, {}},
        RepoFileCase{
            "ExcludepkgsInRepoFile", {{"updates", kUpdates, {{"excludepkgs", "CQRlib*"}}}}, {}},
        RepoFileCase{"SetoptRepoIncludepkgs",
                     {{"updates", kUpdates, {}}, {"simple", "simple-base", {}}},
                     {"--setopt=simple.includepkgs=vagare"}},
        RepoFileCase{"SetoptGlobalExcludepkgs",
                     {{"updates", kUpdates, {}}, {"simple", "simple-base", {}}},
                     {"--setopt=excludepkgs=labirinto,SuperRipper"}}),
    [](const ::testing::TestParamInfo<RepoFileCase>& info) { return info.param.name; });

}  // namespace
}  // namespace rpmirror::test
