// Modular repositories: `rpmirror sync --newest-only` keeps what dnf 4's reposync keeps (the
// newest packages of every module stream, dnf-plugins-core #375), checked side by side with
// `dnf reposync` on a modular repository built by scripts/make-modular-test-repo.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "index/index.hpp"
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
        const fs::path work = tmp_ / ("dnf-state-" + std::to_string(++dnf_runs_));
        fs::create_directories(work / "log");
        std::vector<std::string> argv = isolated_dnf(work);
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

    // The modules record file in `repo`/repodata (whatever its compression).
    static fs::path modules_file(const fs::path& repo) {
        for (const auto& entry : fs::directory_iterator(repo / "repodata")) {
            if (entry.path().filename().string().find("modules.yaml") != std::string::npos) {
                return entry.path();
            }
        }
        ADD_FAILURE() << "no modules.yaml in " << repo / "repodata";
        return {};
    }

    // The stream builds of a modules.yaml as "name:stream:version:context", sorted.
    static std::vector<std::string> stream_builds(const fs::path& file) {
        auto builds = parse_modules_file(file, file.string());
        EXPECT_TRUE(builds) << (builds ? "" : builds.error().message);
        std::vector<std::string> found;
        for (const ModuleStreamBuild& build : builds ? *builds : std::vector<ModuleStreamBuild>{}) {
            found.push_back(build.name + ":" + build.stream + ":" + std::to_string(build.version) +
                            ":" + build.context);
        }
        std::sort(found.begin(), found.end());
        return found;
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

// --with-dependencies filters modular packages as dnf does: a module's default stream (or the one
// --modules enables) gives its packages, which replace the non-modular ones of their names; other
// streams' packages are no candidates. dnf itself, on an empty installroot, is the oracle.
TEST_F(SyncModular, TheClosureChoosesModularPackagesAsDnfDoes) {
    // The machines' platform, which the streams require (an empty installroot has none).
    const std::string kPlatform = "--setopt=module_platform_id=platform:f29";
    NginxServer& server = serve(upstream());
    const Names wanted{"nodejs", "labirinto", "plain"};
    const auto rpms = [](const fs::path& dir) {
        Names names;
        for (const auto& entry : fs::recursive_directory_iterator(dir)) {
            if (entry.path().extension() == ".rpm") {
                names.push_back(entry.path().filename().string());
            }
        }
        std::sort(names.begin(), names.end());
        return names;
    };
    for (const std::string& modules : {std::string(), std::string("nodejs:8")}) {
        const fs::path root = tmp_ / ("root-" + std::to_string(++dnf_runs_));
        if (!modules.empty()) {
            const CommandResult enabled =
                dnf(server.url("/"), {"--installroot", root.string(), "--forcearch=x86_64",
                                      kPlatform, "module", "enable", modules});
            ASSERT_EQ(enabled.exit_code, 0) << enabled.out << enabled.err;
        }
        std::vector<std::string> download{"--installroot", root.string(), "--forcearch=x86_64",
                                          kPlatform,       "download",    "--url",
                                          "--resolve",     "--alldeps"};
        download.insert(download.end(), wanted.begin(), wanted.end());
        const CommandResult by_dnf = dnf(server.url("/"), download);
        ASSERT_EQ(by_dnf.exit_code, 0) << by_dnf.out << by_dnf.err;
        Names expected;
        for (const std::string& url : lines_of(by_dnf.out)) {
            expected.push_back(url.substr(url.rfind('/') + 1));
        }
        std::sort(expected.begin(), expected.end());
        EXPECT_EQ(expected.size(), 3U) << by_dnf.out;

        const fs::path mirror = tmp_ / ("mirror-" + std::to_string(dnf_runs_));
        std::vector<std::string> args{"--repofrompath",
                                      "modular," + server.url("/"),
                                      "--repo",
                                      "modular",
                                      "-p",
                                      mirror.string(),
                                      "-a",
                                      "x86_64",
                                      "--packages",
                                      "nodejs,labirinto,plain",
                                      "--with-dependencies",
                                      "--download-metadata"};
        if (!modules.empty()) {
            args.insert(args.end(), {"--modules", modules});
        }
        const CommandResult by_rpmirror = sync(args);
        ASSERT_EQ(by_rpmirror.exit_code, 0) << by_rpmirror.out << by_rpmirror.err;
        EXPECT_EQ(rpms(mirror), expected) << "--modules '" << modules << "'";
        // The published modules.yaml keeps the streams whose packages are mirrored.
        const Names streams = stream_builds(modules_file(mirror / "modular"));
        EXPECT_FALSE(streams.empty());
        for (const std::string& build : streams) {
            EXPECT_TRUE(build.starts_with(modules.empty() ? "nodejs:5:" : "nodejs:8:")) << build;
        }
    }

    // A stream no modules.yaml has, two streams of one module: errors naming them, nothing
    // published.
    for (const auto& [modules, message] : std::vector<std::pair<std::string, std::string>>{
             {"nodejs:9", "module stream nodejs:9 is in no modules.yaml of modular"},
             {"nodejs:5,nodejs:8", "conflicting module streams: nodejs:5 and nodejs:8"},
             {"nodejs", "a module stream is NAME:STREAM"}}) {
        const fs::path mirror = tmp_ / "refused";
        const CommandResult refused = sync(
            {"--repofrompath", "modular," + server.url("/"), "--repo", "modular", "-p",
             mirror.string(), "--packages", "nodejs", "--with-dependencies", "--modules", modules});
        EXPECT_EQ(refused.exit_code, 1) << modules << refused.out << refused.err;
        EXPECT_NE(refused.err.find(message), std::string::npos) << refused.err;
        EXPECT_FALSE(fs::exists(mirror / "modular" / "repodata")) << modules;
    }
}

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

// A filtered mirror's modules.yaml lists the stream versions that have a mirrored package and
// no other: -n leaves out badlatest:stream 2019 and nodejs:5 version 1 (both contexts).
TEST_F(SyncModular, NewestOnlyWithMetadataTrimsModulesYamlToTheMirroredStreamVersions) {
    NginxServer& server = serve(upstream());
    const fs::path mirror = tmp_ / "mirror";
    const std::vector<std::string> args{
        "--repofrompath", "modular," + server.url("/"), "--repo", "modular", "-p", mirror.string(),
        "--newest-only",  "--download-metadata"};
    const CommandResult synced = sync(args);
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    const fs::path repo = mirror / "modular";
    EXPECT_EQ(packages_in(repo), kNewestByDnf);
    EXPECT_EQ(stream_builds(modules_file(upstream())).size(), 8U);
    EXPECT_EQ(stream_builds(modules_file(repo)),
              (Names{"badlatest:stream:2018:aaaaaaaa", "badlatest:stream:2020:aaaaaaaa",
                     "nodejs:5:2:aaaaaaaa", "nodejs:5:2:bbbbbbbb", "nodejs:8:1:cccccccc"}));

    // dnf reads the mirror's modules and packages.
    const CommandResult modules = dnf("file://" + repo.string(), {"module", "list"});
    EXPECT_EQ(modules.exit_code, 0) << modules.out << modules.err;
    EXPECT_NE(modules.out.find("nodejs"), std::string::npos) << modules.out;
    const CommandResult query = dnf("file://" + repo.string(), {"repoquery", "-a"});
    EXPECT_EQ(query.exit_code, 0) << query.out << query.err;
    EXPECT_NE(query.out.find("plain-0:2.0-1.x86_64"), std::string::npos) << query.out;

    const CommandResult verified =
        run_to_end({rpmirror_binary(), "verify", "-p", mirror.string()}, tmp_ / "logs");
    EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;

    const auto published = tree_digests(repo / "repodata");
    const CommandResult second = sync(args);
    ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
    EXPECT_NE(second.out.find("up to date"), std::string::npos) << second.out;
    EXPECT_EQ(tree_digests(repo / "repodata"), published);
}

// A filter that leaves out no modular package keeps upstream's modules record byte for byte.
TEST_F(SyncModular, AFilterKeepingEveryModularPackageKeepsModulesYamlVerbatim) {
    NginxServer& server = serve(upstream());
    const fs::path mirror = tmp_ / "mirror";
    const CommandResult synced =
        sync({"--repofrompath", "modular," + server.url("/"), "--repo", "modular", "-p",
              mirror.string(), "-x", "plain", "--download-metadata"});
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    const fs::path published = modules_file(mirror / "modular");
    EXPECT_EQ(published.filename(), modules_file(upstream()).filename());
    EXPECT_EQ(read_file(published), read_file(modules_file(upstream())));
    const CommandResult verified =
        run_to_end({rpmirror_binary(), "verify", "-p", mirror.string()}, tmp_ / "logs");
    EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;
}

// A filter that leaves out every modular package leaves the modules record out.
TEST_F(SyncModular, AFilterLeavingOutEveryModularPackageLeavesModulesOut) {
    NginxServer& server = serve(upstream());
    const fs::path mirror = tmp_ / "mirror";
    const CommandResult synced =
        sync({"--repofrompath", "modular," + server.url("/"), "--repo", "modular", "-p",
              mirror.string(), "--setopt=modular.includepkgs=plain", "--download-metadata"});
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    const fs::path repo = mirror / "modular";
    EXPECT_EQ(packages_in(repo), (Names{"plain-1.0-1.x86_64.rpm", "plain-2.0-1.x86_64.rpm"}));
    const std::string repomd = read_file(repo / "repodata" / "repomd.xml");
    EXPECT_EQ(repomd.find("modules"), std::string::npos) << repomd;
    for (const auto& entry : fs::directory_iterator(repo / "repodata")) {
        EXPECT_EQ(entry.path().filename().string().find("modules"), std::string::npos)
            << entry.path();
    }
    const CommandResult query = dnf("file://" + repo.string(), {"repoquery", "-a"});
    EXPECT_EQ(query.exit_code, 0) << query.out << query.err;
    EXPECT_NE(query.out.find("plain-0:2.0-1.x86_64"), std::string::npos) << query.out;
    const CommandResult verified =
        run_to_end({rpmirror_binary(), "verify", "-p", mirror.string()}, tmp_ / "logs");
    EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;
}

}  // namespace
}  // namespace rpmirror::test
