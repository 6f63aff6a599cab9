// Modular repositories: `rpmirror sync --newest-only` keeps what dnf 4's reposync keeps (the
// newest packages of every module stream, dnf-plugins-core #375), checked side by side with
// `dnf reposync` on a modular repository built by scripts/make-modular-test-repo.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "integration/sync/sync_fixture.hpp"
#include "support/source_tree.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

class SyncModular : public SyncFixture {
  protected:
    static void SetUpTestSuite() {
        built_ = std::make_unique<TempDir>();
        run_checked({(source_root() / "scripts" / "make-modular-test-repo").string(),
                     (*built_ / "modular").string()},
                    *built_ / "logs");
    }
    static void TearDownTestSuite() { built_.reset(); }

    static fs::path upstream() { return *built_ / "modular"; }

    void SetUp() override {
        SyncFixture::SetUp();
        if (::system("dnf reposync --help > /dev/null 2>&1") != 0) {  // NOLINT(cert-env33-c)
            GTEST_FAIL() << "`dnf reposync` does not run; scripts/deps installs it (Debian "
                            "packages dnf, dnf-plugins-core)";
        }
    }

    CommandResult dnf(const std::string& url, const std::vector<std::string>& args) {
        std::vector<std::string> argv =
            isolated_dnf(tmp_ / ("dnf-state-" + std::to_string(++dnf_runs_)));
        argv.push_back("--repofrompath=modular," + url);
        argv.push_back("--repo=modular");
        argv.insert(argv.end(), args.begin(), args.end());
        return run_to_end(argv, tmp_ / "logs");
    }

    // The package file names under `repo`/x86_64, sorted.
    static std::vector<std::string> packages_in(const fs::path& repo) {
        std::vector<std::string> names;
        for (const auto& [path, digest] : tree_digests(repo / "x86_64")) {
            names.push_back(path);
        }
        return names;
    }

    static std::unique_ptr<TempDir> built_;
    int dnf_runs_ = 0;
};
std::unique_ptr<TempDir> SyncModular::built_;

using Names = std::vector<std::string>;

const Names kNewestByDnf{
    "labirinto-0.9-1.x86_64.rpm",          // the newest non-modular labirinto
    "labirinto-1.0-2.module.x86_64.rpm",   // badlatest:stream's latest version (2020)
    "labirinto-1.0-9.module.x86_64.rpm",   // the newest modular NEVRA, in version 2018
    "nodejs-5.12.2-3.x86_64.rpm",          // the newest non-modular nodejs
    "nodejs-5.4.1-2.module_a.x86_64.rpm",  // nodejs:5 version 2, both contexts
    "nodejs-5.4.1-2.module_b.x86_64.rpm",
    "nodejs-8.0.0-1.module_c.x86_64.rpm",  // the other stream
    "plain-2.0-1.x86_64.rpm",
};

struct ModularCase {
    std::string name;
    std::vector<std::string> options;
};

void PrintTo(const ModularCase& modular, std::ostream* stream) {
    *stream << modular.name;
}

class SyncModularCompat : public SyncModular, public ::testing::WithParamInterface<ModularCase> {};

TEST_P(SyncModularCompat, ProducesTheSameFilesAsDnfReposync) {
    const ModularCase& modular = GetParam();
    NginxServer& server = serve(upstream());
    std::vector<std::string> dnf_args{"reposync", "-p", (tmp_ / "dnf").string()};
    dnf_args.insert(dnf_args.end(), modular.options.begin(), modular.options.end());
    const CommandResult by_dnf = dnf(server.url("/"), dnf_args);
    ASSERT_EQ(by_dnf.exit_code, 0) << by_dnf.out << by_dnf.err;

    std::vector<std::string> sync_args{"--repofrompath",
                                       "modular," + server.url("/"),
                                       "--repo",
                                       "modular",
                                       "-p",
                                       (tmp_ / "rpmirror").string()};
    sync_args.insert(sync_args.end(), modular.options.begin(), modular.options.end());
    // dnf publishes upstream's metadata even when filters left packages out: so does
    // --upstream-metadata (without it a filtered mirror's metadata is rewritten).
    sync_args.push_back("--upstream-metadata");
    const CommandResult by_rpmirror = sync(sync_args);
    ASSERT_EQ(by_rpmirror.exit_code, 0) << by_rpmirror.out << by_rpmirror.err;

    const auto expected = tree_digests(tmp_ / "dnf");
    EXPECT_FALSE(expected.empty());
    EXPECT_EQ(tree_digests(tmp_ / "rpmirror"), expected);
}

INSTANTIATE_TEST_SUITE_P(
    Options, SyncModularCompat,
    ::testing::Values(ModularCase{"NewestOnly", {"--newest-only"}},
                      ModularCase{"NewestOnlyWithMetadata",
                                  {"--newest-only", "--download-metadata"}},
                      ModularCase{"EveryStream", {}},
                      ModularCase{"NewestOnlyIncludepkgs",
                                  {"--newest-only", "--setopt=modular.includepkgs=labirinto"}}),
    [](const ::testing::TestParamInfo<ModularCase>& info) { return info.param.name; });

TEST_F(SyncModular, NewestOnlyKeepsTheNewestPackagesOfEveryModuleStream) {
    NginxServer& server = serve(upstream());
    const CommandResult synced =
        sync({"--repofrompath", "modular," + server.url("/"), "--repo", "modular", "-p",
              (tmp_ / "mirror").string(), "--newest-only"});
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    EXPECT_EQ(packages_in(tmp_ / "mirror" / "modular"), kNewestByDnf);
    // Without --download-metadata, modules.yaml is read from the staging area: the mirror holds
    // packages only, as dnf's does.
    EXPECT_FALSE(fs::exists(tmp_ / "mirror" / "modular" / "repodata"));
}

TEST_F(SyncModular, VerifyOfANewestOnlyModularMirrorPasses) {
    NginxServer& server = serve(upstream());
    const fs::path mirror = tmp_ / "mirror";
    const CommandResult synced =
        sync({"--repofrompath", "modular," + server.url("/"), "--repo", "modular", "-p",
              mirror.string(), "--newest-only", "--download-metadata"});
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    const CommandResult verified =
        run_to_end({rpmirror_binary(), "verify", "-p", mirror.string()}, tmp_ / "logs");
    EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;
    EXPECT_NE(verified.out.find("modular: selection: --newest-only (recorded by sync)"),
              std::string::npos)
        << verified.out;
}

}  // namespace
}  // namespace rpmirror::test
