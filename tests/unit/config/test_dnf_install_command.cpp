// What `rpmirror exec --prefetch` reads of dnf: its install command line, [main]'s cachedir and
// install_weak_deps, and the name of a repository's directory in dnf's cache.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/repo_files.hpp"
#include "config_test_support.hpp"
#include "prefetch/prefetch.hpp"
#include "rpmirror/prefetch/prefetch.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror::test {
namespace {

Result<DnfInstallCommand> parse(std::vector<std::string> argv) {
    return parse_dnf_install_command(argv);
}

TEST(DnfInstallCommand, ReadsTheOptionsThatChooseRepositoriesAndTheCache) {
    const auto command = parse({"/usr/bin/dnf",
                                "-y",
                                "--installroot",
                                "/mnt/root",
                                "--releasever=2023",
                                "-c",
                                "/etc/my.conf",
                                "--setopt",
                                "install_weak_deps=0",
                                "install",
                                "--enablerepo=a,b",
                                "--disablerepo",
                                "c",
                                "--repo",
                                "d",
                                "nginx",
                                "--forcearch=aarch64",
                                "-xfoo*",
                                "/usr/bin/curl",
                                "python3-pip-23.0"});
    ASSERT_TRUE(command) << command.error().to_string();
    EXPECT_EQ(command->packages,
              (std::vector<std::string>{"nginx", "/usr/bin/curl", "python3-pip-23.0"}));
    EXPECT_EQ(command->installroot, "/mnt/root");
    EXPECT_EQ(command->releasevers, std::vector<std::string>{"2023"});
    EXPECT_EQ(command->config_file, "/etc/my.conf");
    EXPECT_EQ(command->setopts, std::vector<std::string>{"install_weak_deps=0"});
    EXPECT_EQ(command->forcearch, "aarch64");
    EXPECT_EQ(command->excludes, std::vector<std::string>{"foo*"});
    ASSERT_EQ(command->selection.toggles.size(), 3U);
    EXPECT_TRUE(command->selection.toggles[0].enable);
    EXPECT_EQ(command->selection.toggles[1].pattern, "b");
    EXPECT_FALSE(command->selection.toggles[2].enable);
    EXPECT_EQ(command->selection.repo_patterns, std::vector<std::string>{"d"});
    EXPECT_FALSE(command->quiet);
    EXPECT_FALSE(command->refresh);

    const auto quiet = parse({"dnf", "in", "-q", "--refresh", "--", "-weird-name"});
    ASSERT_TRUE(quiet) << quiet.error().to_string();
    EXPECT_TRUE(quiet->quiet);
    EXPECT_TRUE(quiet->refresh);
    EXPECT_EQ(quiet->packages, std::vector<std::string>{"-weird-name"});
}

TEST(DnfInstallCommand, GroupsAreReadApartFromPackages) {
    const auto command = parse({"dnf", "install", "-y", "@core", "vim", "@Web Server"});
    ASSERT_TRUE(command) << command.error().to_string();
    EXPECT_EQ(command->packages, std::vector<std::string>{"vim"});
    EXPECT_EQ(command->groups, (std::vector<std::string>{"core", "Web Server"}));
    const auto only = parse({"dnf", "install", "@core"});
    ASSERT_TRUE(only) << only.error().to_string();
    EXPECT_TRUE(only->packages.empty());
}

TEST(DnfInstallCommand, RefusesWhatAPrefetchCannotModelNamingTheWord) {
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {{"apt-get", "install", "x"}, "apt-get: not dnf"},
        {{"dnf", "upgrade"}, "upgrade: not `dnf install`"},
        {{"dnf"}, "dnf: not `dnf install`"},
        {{"dnf", "install"}, "install: no package named"},
        {{"dnf", "-C", "install", "x"}, "-C: dnf will download nothing"},
        {{"dnf", "install", "--assumeno", "x"}, "--assumeno: dnf will install nothing"},
        {{"dnf", "install", "@^server"}, "@^server: environment groups are not prefetched"},
        {{"dnf", "install", "@nodejs:18"}, "@nodejs:18: module specs are not prefetched"},
        {{"dnf", "install", "@nodejs/default"}, "@nodejs/default: module specs"},
        {{"dnf", "install", "@"}, "@: module specs"},
        {{"dnf", "install", "./x-1.0-1.noarch.rpm"}, "./x-1.0-1.noarch.rpm: a local file or URL"},
        {{"dnf", "install", "https://h/x.rpm"}, "https://h/x.rpm: a local file or URL"},
        {{"dnf", "install", "--installroot"}, "--installroot: needs a value"},
        {{"dnf", "install", "--bogus", "x"}, "--bogus: an option the prefetch does not know"},
        {{"dnf", "-yq", "install", "x"}, "-yq: an option the prefetch does not know"},
    };
    for (const auto& [argv, message] : cases) {
        const auto parsed = parse(argv);
        ASSERT_FALSE(parsed) << message;
        EXPECT_EQ(parsed.error().code, ErrorCode::Unsupported) << message;
        EXPECT_TRUE(parsed.error().message.starts_with(message)) << parsed.error().message;
    }
}

TEST(DnfCacheDirectory, IsNamedAsLibdnfNamesIt) {
    RepoConfig repo;
    repo.id = "amazonlinux";
    repo.baseurls = {"base"};
    EXPECT_EQ(dnf_cache_directory_name(repo), "amazonlinux-cae662172fd450bb");
    repo.mirrorlist = "https://cdn.amazonlinux.com/al2023/core/mirrors/2023.6/x86_64/mirror.list";
    EXPECT_EQ(dnf_cache_directory_name(repo), "amazonlinux-172c0d4b93550351");
    repo.metalink = "http://example.com/metalink?repo=x";
    EXPECT_EQ(dnf_cache_directory_name(repo), "amazonlinux-e67c82bee31379fc");
}

TEST(PackageStepConnections, TheLargestShareMayUseAllTheOthersTheirPart) {
    // The boot benchmark's shares: 385 packages in one repository, 28 in the other.
    const std::vector<std::size_t> shares{385, 28};
    EXPECT_EQ(package_step_connections(shares, 32), (std::vector<unsigned>{32, 4}));
    const std::vector<std::size_t> reversed{28, 385};
    EXPECT_EQ(package_step_connections(reversed, 32), (std::vector<unsigned>{4, 32}));
    // A share's part, when above the floor; a few large files still side by side; never 0.
    const std::vector<std::size_t> three{100, 60, 2, 0};
    EXPECT_EQ(package_step_connections(three, 32), (std::vector<unsigned>{32, 12, 2, 1}));
    const std::vector<std::size_t> equal{50, 50};
    EXPECT_EQ(package_step_connections(equal, 32), (std::vector<unsigned>{32, 16}));
    const std::vector<std::size_t> alone{7};
    EXPECT_EQ(package_step_connections(alone, 0), (std::vector<unsigned>{1}));
}

TEST(DnfMainSettings, CachedirBeneathTheInstallrootAndSetoptsWin) {
    TempDir dir;
    const auto conf = TempDir::write_at(dir.path() / "dnf.conf",
                                        "[main]\ncachedir=/srv/cache/$basearch\n"
                                        "install_weak_deps=False\n[other]\ncachedir=/nowhere\n");
    ConfigSources sources = isolated_sources();
    sources.config_file = conf;
    auto settings = load_dnf_main_settings(sources, fedora_vars());
    ASSERT_TRUE(settings) << settings.error().to_string();
    EXPECT_EQ(settings->cachedir, "/srv/cache/x86_64");
    EXPECT_FALSE(settings->install_weak_deps);

    sources.installroot = "/mnt/root";
    sources.setopts = {"install_weak_deps=1", "cachedir = /var/tmp/c"};
    settings = load_dnf_main_settings(sources, fedora_vars());
    ASSERT_TRUE(settings) << settings.error().to_string();
    EXPECT_EQ(settings->cachedir, "/var/tmp/c");  // a --setopt is not moved
    EXPECT_TRUE(settings->install_weak_deps);
    sources.setopts.clear();
    settings = load_dnf_main_settings(sources, fedora_vars());
    ASSERT_TRUE(settings) << settings.error().to_string();
    EXPECT_EQ(settings->cachedir, "/mnt/root/srv/cache/x86_64");

    sources = isolated_sources();  // no config file: dnf's defaults
    settings = load_dnf_main_settings(sources, fedora_vars());
    ASSERT_TRUE(settings) << settings.error().to_string();
    EXPECT_EQ(settings->cachedir, "/var/cache/dnf");
    EXPECT_TRUE(settings->install_weak_deps);
}

TEST(DnfMainSettings, BadValuesNameWhereTheyAre) {
    TempDir dir;
    ConfigSources sources = isolated_sources();
    sources.config_file =
        TempDir::write_at(dir.path() / "dnf.conf", "[main]\n\ninstall_weak_deps=maybe\n");
    auto settings = load_dnf_main_settings(sources, fedora_vars());
    ASSERT_FALSE(settings);
    EXPECT_EQ(settings.error().code, ErrorCode::BadInput);
    EXPECT_EQ(settings.error().subject, (dir.path() / "dnf.conf").string() + ":3");
    EXPECT_NE(settings.error().message.find("'maybe' is not a boolean"), std::string::npos);

    sources.config_file = dir.path() / "missing.conf";
    settings = load_dnf_main_settings(sources, fedora_vars());
    ASSERT_FALSE(settings);
    EXPECT_EQ(settings.error().code, ErrorCode::NotFound);

    sources.config_file.reset();
    sources.setopts = {"cachedir=relative/dir"};
    settings = load_dnf_main_settings(sources, fedora_vars());
    ASSERT_FALSE(settings);
    EXPECT_EQ(settings.error().subject, "--setopt cachedir=relative/dir");
}

}  // namespace
}  // namespace rpmirror::test
