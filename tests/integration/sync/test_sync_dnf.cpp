// `rpmirror sync` against dnf itself: the mirror is a repository dnf can use, and for the same
// repository and options the tree equals the one `dnf reposync` produces.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "integration/sync/sync_fixture.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

// Returns true iff dnf and its reposync plugin are installed.
bool dnf_reposync_available() {
    return ::system("dnf reposync --help > /dev/null 2>&1") == 0;  // NOLINT(cert-env33-c)
}

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

}  // namespace
}  // namespace rpmirror::test
