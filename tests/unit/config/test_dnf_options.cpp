// dnf 4's command-line repository options over the config stage: --enablerepo/--disablerepo in
// order with --repo, --source's `-source` repositories, -x, --disableexcludes, --installroot; and
// the keys dnf knows ([main] and repo sections) with their values.
#include <gtest/gtest.h>

#include "config/repo_files.hpp"
#include "config_test_support.hpp"
#include "rpmirror/config/config.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror {
namespace {

using test::count_warnings;
using test::repo_ids;

std::vector<RepoConfig> standard_repos(const test::TempDir& dir) {
    const auto file = dir.write("fedora.repo",
                                "[fedora]\nbaseurl=http://127.0.0.1/f/\n"
                                "[fedora-debuginfo]\nbaseurl=http://127.0.0.1/fd/\nenabled=0\n"
                                "[fedora-source]\nbaseurl=http://127.0.0.1/fs/\nenabled=0\n"
                                "[updates]\nbaseurl=http://127.0.0.1/u/\n"
                                "[updates-source]\nbaseurl=http://127.0.0.1/us/\nenabled=0\n"
                                "[rhel-rpms]\nbaseurl=http://127.0.0.1/r/\nenabled=0\n"
                                "[rhel-source-rpms]\nbaseurl=http://127.0.0.1/rs/\nenabled=0\n");
    std::vector<ConfigWarning> warnings;
    auto repos = read_repo_file(file, test::fedora_vars(), warnings);
    EXPECT_TRUE(repos) << repos.error().to_string();
    return repos ? *repos : std::vector<RepoConfig>{};
}

Result<std::vector<RepoConfig>> select(const test::TempDir& dir, const RepoSelection& selection,
                                       std::vector<ConfigWarning>* warnings_out = nullptr) {
    std::vector<ConfigWarning> warnings;
    auto selected = select_repos(standard_repos(dir), selection, warnings);
    if (warnings_out != nullptr) {
        *warnings_out = warnings;
    }
    return selected;
}

TEST(ConfigEnable, SourceEnablesTheSourceRepositoryOfEachEnabledOne) {
    test::TempDir dir;
    RepoSelection selection;
    selection.repo_patterns = {"fedora"};
    selection.enable_source_repos = true;
    auto selected = select(dir, selection);
    ASSERT_TRUE(selected) << selected.error().to_string();
    EXPECT_EQ(repo_ids(*selected), (std::vector<std::string>{"fedora", "fedora-source"}));
}

TEST(ConfigEnable, SourceWithoutRepoFollowsEveryEnabledRepoAndTheRpmsSpelling) {
    test::TempDir dir;
    RepoSelection selection;
    selection.toggles = {{true, "rhel-rpms"}};
    selection.enable_source_repos = true;
    auto selected = select(dir, selection);
    ASSERT_TRUE(selected) << selected.error().to_string();
    EXPECT_EQ(repo_ids(*selected),
              (std::vector<std::string>{"fedora", "fedora-source", "updates", "updates-source",
                                        "rhel-rpms", "rhel-source-rpms"}));
}

TEST(ConfigEnable, SourceRepositoryNamedDirectlyIsSelected) {
    test::TempDir dir;
    RepoSelection selection;
    selection.repo_patterns = {"fedora-source"};
    selection.enable_source_repos = true;
    auto selected = select(dir, selection);
    ASSERT_TRUE(selected) << selected.error().to_string();
    EXPECT_EQ(repo_ids(*selected), std::vector<std::string>{"fedora-source"});
}

TEST(ConfigEnable, TogglesApplyInCommandLineOrder) {
    test::TempDir dir;
    RepoSelection selection;
    selection.toggles = {{false, "*"}, {true, "fedora*"}, {false, "fedora-debuginfo"}};
    auto selected = select(dir, selection);
    ASSERT_TRUE(selected) << selected.error().to_string();
    EXPECT_EQ(repo_ids(*selected), (std::vector<std::string>{"fedora", "fedora-source"}));

    selection.toggles = {{false, "fedora-debuginfo"}, {true, "fedora*"}};
    selected = select(dir, selection);
    ASSERT_TRUE(selected) << selected.error().to_string();
    EXPECT_EQ(repo_ids(*selected),
              (std::vector<std::string>{"fedora", "fedora-debuginfo", "fedora-source", "updates"}));
}

TEST(ConfigEnable, RepoWinsOverTheToggles) {
    test::TempDir dir;
    RepoSelection selection;
    // dnf reposync (4.14): after dnf's toggles, configure() disables every repository and
    // enables --repo's: --disablerepo cannot take back a --repo, nor --enablerepo add to it.
    selection.repo_patterns = {"updates"};
    selection.toggles = {{false, "updates"}, {true, "fedora"}};
    auto selected = select(dir, selection);
    ASSERT_TRUE(selected) << selected.error().to_string();
    EXPECT_EQ(repo_ids(*selected), std::vector<std::string>{"updates"});
    // The toggles are still checked: an unknown enabled one is an error.
    selection.toggles = {{true, "centos"}};
    selected = select(dir, selection);
    ASSERT_FALSE(selected);
    EXPECT_EQ(selected.error().to_string(), "--enablerepo: Unknown repo: 'centos'");
}

TEST(ConfigEnable, UnknownEnabledRepoIsAnErrorAndUnknownDisabledOneAWarning) {
    test::TempDir dir;
    RepoSelection selection;
    selection.toggles = {{true, "centos*"}};
    auto selected = select(dir, selection);
    ASSERT_FALSE(selected);
    EXPECT_EQ(selected.error().to_string(), "--enablerepo: Unknown repo: 'centos*'");

    selection.toggles = {{false, "centos"}};
    std::vector<ConfigWarning> warnings;
    selected = select(dir, selection, &warnings);
    ASSERT_TRUE(selected) << selected.error().to_string();
    EXPECT_EQ(repo_ids(*selected), (std::vector<std::string>{"fedora", "updates"}));
    ASSERT_EQ(warnings.size(), 1U);
    EXPECT_EQ(warnings[0].kind, ConfigWarningKind::NoMatch);
    EXPECT_EQ(warnings[0].to_string(), "--disablerepo: No repository match: centos");

    RepoSelection repo_only;
    repo_only.repo_patterns = {"nothing-like-it"};
    selected = select(dir, repo_only);
    ASSERT_FALSE(selected);
    EXPECT_EQ(selected.error().to_string(), "--repo: Unknown repo: 'nothing-like-it'");
}

TEST(ConfigEnable, RepofrompathReposStayEnabledWithoutRepo) {
    test::TempDir dir;
    std::vector<RepoConfig> repos = standard_repos(dir);
    auto extra = repo_from_path("extra,http://127.0.0.1/x/");
    ASSERT_TRUE(extra) << extra.error().to_string();
    repos.push_back(*extra);
    RepoSelection selection;
    selection.toggles = {{false, "*"}};
    std::vector<ConfigWarning> warnings;
    auto selected = select_repos(repos, selection, warnings);
    ASSERT_TRUE(selected) << selected.error().to_string();
    EXPECT_EQ(repo_ids(*selected), std::vector<std::string>{"extra"});
}

// A config file with [main] excludes and two repos, one with its own filters.
ConfigSources exclude_sources(const test::TempDir& dir) {
    ConfigSources sources = test::isolated_sources();
    sources.config_file = dir.write("dnf.conf",
                                    "[main]\nexcludepkgs=kernel*\n"
                                    "[a]\nbaseurl=http://127.0.0.1/a/\nexcludepkgs=foo\n"
                                    "includepkgs=bar*\n"
                                    "[b]\nbaseurl=http://127.0.0.1/b/\n");
    return sources;
}

TEST(ConfigExcludes, CommandLineExcludesJoinMainsForEveryRepo) {
    test::TempDir dir;
    ConfigSources sources = exclude_sources(dir);
    sources.exclude_globs = {"x*", "y"};
    std::vector<ConfigWarning> warnings;
    auto repos = load_repo_configs(sources, test::fedora_vars(), warnings);
    ASSERT_TRUE(repos) << repos.error().to_string();
    EXPECT_EQ((*repos)[0].excludepkgs, (std::vector<std::string>{"kernel*", "x*", "y", "foo"}));
    EXPECT_EQ((*repos)[1].excludepkgs, (std::vector<std::string>{"kernel*", "x*", "y"}));
}

TEST(ConfigExcludes, DisableExcludesMainAllOrRepoId) {
    test::TempDir dir;
    ConfigSources sources = exclude_sources(dir);
    sources.exclude_globs = {"x*"};
    std::vector<ConfigWarning> warnings;

    sources.disable_excludes = {"main"};
    auto repos = load_repo_configs(sources, test::fedora_vars(), warnings);
    ASSERT_TRUE(repos) << repos.error().to_string();
    EXPECT_EQ((*repos)[0].excludepkgs, std::vector<std::string>{"foo"});
    EXPECT_EQ((*repos)[0].includepkgs, std::vector<std::string>{"bar*"});
    EXPECT_TRUE((*repos)[1].excludepkgs.empty());

    sources.disable_excludes = {"a"};
    repos = load_repo_configs(sources, test::fedora_vars(), warnings);
    ASSERT_TRUE(repos) << repos.error().to_string();
    EXPECT_EQ((*repos)[0].excludepkgs, (std::vector<std::string>{"kernel*", "x*"}));
    EXPECT_TRUE((*repos)[0].includepkgs.empty());
    EXPECT_EQ((*repos)[1].excludepkgs, (std::vector<std::string>{"kernel*", "x*"}));

    sources.disable_excludes = {"all"};
    repos = load_repo_configs(sources, test::fedora_vars(), warnings);
    ASSERT_TRUE(repos) << repos.error().to_string();
    for (const RepoConfig& repo : *repos) {
        EXPECT_TRUE(repo.excludepkgs.empty()) << repo.id;
        EXPECT_TRUE(repo.includepkgs.empty()) << repo.id;
    }
}

TEST(ConfigExcludes, DisableExcludesFromMainSection) {
    test::TempDir dir;
    ConfigSources sources = test::isolated_sources();
    sources.config_file = dir.write("dnf.conf",
                                    "[main]\nexcludepkgs=kernel*\ndisable_excludes=main\n"
                                    "[a]\nbaseurl=http://127.0.0.1/a/\n");
    std::vector<ConfigWarning> warnings;
    auto repos = load_repo_configs(sources, test::fedora_vars(), warnings);
    ASSERT_TRUE(repos) << repos.error().to_string();
    EXPECT_TRUE((*repos)[0].excludepkgs.empty());
    EXPECT_TRUE(warnings.empty()) << warnings.front().to_string();
}

TEST(ConfigExcludes, BadDisableExcludesValueIsAnError) {
    test::TempDir dir;
    ConfigSources sources = exclude_sources(dir);
    sources.disable_excludes = {"repo/with/slash"};
    std::vector<ConfigWarning> warnings;
    auto repos = load_repo_configs(sources, test::fedora_vars(), warnings);
    ASSERT_FALSE(repos);
    EXPECT_EQ(repos.error().to_string(),
              "--disableexcludes: invalid value 'repo/with/slash' (expected all, main or a repo "
              "id)");
}

TEST(ConfigInstallroot, ConfigReposAndVarsAreReadBeneathTheInstallroot) {
    test::TempDir dir;
    const auto root = dir.path() / "root";
    dir.write("root/etc/dnf/dnf.conf", "[main]\nreposdir=/etc/myrepos\n");
    dir.write("root/etc/myrepos/inside.repo", "[inside]\nbaseurl=http://127.0.0.1/in/\n");
    ConfigSources sources;
    sources.installroot = root;
    auto vars_root = variables_root(sources);
    ASSERT_TRUE(vars_root) << vars_root.error().to_string();
    EXPECT_EQ(*vars_root, root);
    std::vector<ConfigWarning> warnings;
    auto repos = load_repo_configs(sources, test::fedora_vars(), warnings);
    ASSERT_TRUE(repos) << repos.error().to_string();
    EXPECT_EQ(repo_ids(*repos), std::vector<std::string>{"inside"});
    EXPECT_EQ(repos->front().defined_at.file, (root / "etc/myrepos/inside.repo").string());
}

TEST(ConfigInstallroot, CommandLinePathsAreTheHosts) {
    test::TempDir dir;
    const auto root = dir.path() / "root";
    dir.write("root/etc/dnf/dnf.conf", "[main]\n[ignored]\nbaseurl=http://127.0.0.1/no/\n");
    const auto host_repos = dir.path() / "host-repos";
    dir.write("host-repos/host.repo", "[host]\nbaseurl=http://127.0.0.1/host/\n");
    ConfigSources sources;
    sources.installroot = root;
    sources.config_file = dir.write("host.conf", "[main]\n");
    sources.reposdirs = std::vector<std::filesystem::path>{host_repos};
    std::vector<ConfigWarning> warnings;
    auto repos = load_repo_configs(sources, test::fedora_vars(), warnings);
    ASSERT_TRUE(repos) << repos.error().to_string();
    EXPECT_EQ(repo_ids(*repos), std::vector<std::string>{"host"});
    // A reposdir from the command line: dnf takes the variables from the installroot.
    auto vars_root = variables_root(sources);
    ASSERT_TRUE(vars_root) << vars_root.error().to_string();
    EXPECT_EQ(*vars_root, root);
}

TEST(ConfigInstallroot, ReposdirMissingInTheInstallrootIsTheHosts) {
    test::TempDir dir;
    const auto root = dir.path() / "root";
    const auto host_repos = dir.path() / "host-repos";
    dir.write("root/etc/dnf/dnf.conf", "[main]\nreposdir=" + host_repos.string() + "\n");
    dir.write("host-repos/host.repo", "[host]\nbaseurl=http://127.0.0.1/host/\n");
    ConfigSources sources;
    sources.installroot = root;
    std::vector<ConfigWarning> warnings;
    auto repos = load_repo_configs(sources, test::fedora_vars(), warnings);
    ASSERT_TRUE(repos) << repos.error().to_string();
    EXPECT_EQ(repo_ids(*repos), std::vector<std::string>{"host"});
    auto vars_root = variables_root(sources);
    ASSERT_TRUE(vars_root) << vars_root.error().to_string();
    EXPECT_EQ(*vars_root, "/");
}

TEST(ConfigKeys, KeysDnfKnowsAreIgnoredNotUnknown) {
    test::TempDir dir;
    ConfigSources sources = test::isolated_sources();
    sources.config_file =
        dir.write("dnf.conf",
                  "[main]\nlocalpkg_gpgcheck=1\nmodule_platform_id=platform:f40\n"
                  "install_weak_deps=False\nbest=True\nclean_requirements_on_remove=True\n"
                  "installonly_limit=3\nkeepcache=0\ncolor_search_match=bold\nenabled=1\n"
                  "showdupesfromrepos=1\ntransformdb=0\nweakexcludes=x\ndeltarpm=0\n"
                  "[r]\nbaseurl=http://127.0.0.1/r/\ndeltarpm=1\ndeltarpm_percentage=50\n"
                  "basecachedir=/var/cache\nprotected_packages=dnf\nmodule_hotfixes=1\n"
                  "no_such_key=1\n");
    std::vector<ConfigWarning> warnings;
    auto repos = load_repo_configs(sources, test::fedora_vars(), warnings);
    ASSERT_TRUE(repos) << repos.error().to_string();
    EXPECT_EQ(count_warnings(warnings, ConfigWarningKind::UnknownKey), 1U);
    for (const ConfigWarning& warning : warnings) {
        if (warning.kind == ConfigWarningKind::UnknownKey) {
            EXPECT_EQ(warning.key, "no_such_key");
        }
    }
}

TEST(ConfigKeys, ProxyTlsAuthMethodAndOcspKeysAreHonoured) {
    test::TempDir dir;
    const auto file = dir.write(
        "p.repo",
        "[p]\nbaseurl=http://127.0.0.1/p/\nproxy=https://127.0.0.1:3129\nproxy_sslverify=0\n"
        "proxy_sslcacert=/etc/pki/proxy-ca.pem\nproxy_sslclientcert=/etc/pki/c.pem\n"
        "proxy_sslclientkey=/etc/pki/c.key\nproxy_auth_method=Digest\nsslverifystatus=1\n");
    std::vector<ConfigWarning> warnings;
    auto repos = read_repo_file(file, test::fedora_vars(), warnings);
    ASSERT_TRUE(repos) << repos.error().to_string();
    EXPECT_TRUE(warnings.empty()) << warnings.front().to_string();
    const RepoConfig& repo = repos->front();
    EXPECT_FALSE(repo.proxy_sslverify);
    EXPECT_EQ(repo.proxy_sslcacert, "/etc/pki/proxy-ca.pem");
    EXPECT_EQ(repo.proxy_sslclientcert, "/etc/pki/c.pem");
    EXPECT_EQ(repo.proxy_sslclientkey, "/etc/pki/c.key");
    EXPECT_EQ(repo.proxy_auth_method, "digest");
    EXPECT_TRUE(repo.sslverifystatus);
}

TEST(ConfigKeys, BadProxyAuthMethodNamesTheChoices) {
    test::TempDir dir;
    const auto file =
        dir.write("p.repo", "[p]\nbaseurl=http://127.0.0.1/p/\nproxy_auth_method=kerberos\n");
    std::vector<ConfigWarning> warnings;
    auto repos = read_repo_file(file, test::fedora_vars(), warnings);
    ASSERT_FALSE(repos);
    EXPECT_EQ(repos.error().to_string(),
              file.string() +
                  ": line 3: invalid value 'kerberos' for key 'proxy_auth_method' (expected any, "
                  "none, basic, digest, negotiate, ntlm, digest_ie or ntlm_wb)");
}

TEST(ConfigKeys, PlainPathBaseurlIsALocalRepository) {
    test::TempDir dir;
    const auto file =
        dir.write("l.repo", "[l]\nbaseurl=/srv/repos/$basearch/, http://127.0.0.1/l/\n");
    std::vector<ConfigWarning> warnings;
    auto repos = read_repo_file(file, test::fedora_vars(), warnings);
    ASSERT_TRUE(repos) << repos.error().to_string();
    EXPECT_EQ(repos->front().baseurls,
              (std::vector<std::string>{"file:///srv/repos/x86_64/", "http://127.0.0.1/l/"}));
}

}  // namespace
}  // namespace rpmirror
