#include <gtest/gtest.h>

#include "config/repo_files.hpp"
#include "config_test_support.hpp"
#include "rpmirror/config/config.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror {
namespace {

using test::count_warnings;
using test::fedora_vars;
using test::isolated_sources;
using test::repo_ids;

const RepoConfig& repo_named(const std::vector<RepoConfig>& repos, std::string_view id) {
    for (const RepoConfig& repo : repos) {
        if (repo.id == id) {
            return repo;
        }
    }
    throw std::runtime_error("no repo " + std::string(id));
}

TEST(ConfigSources, ReposdirFilesAreReadSortedByNameAndOnlyDotRepo) {
    test::TempDir dir;
    dir.write("repos/zz.repo", "[zeta]\nbaseurl=http://127.0.0.1/z/\n");
    dir.write("repos/aa.repo",
              "[alpha2]\nbaseurl=http://127.0.0.1/a2/\n[alpha1]\nbaseurl=http://127.0.0.1/a1/\n");
    dir.write("repos/mm.repo.rpmsave", "[saved]\nbaseurl=http://127.0.0.1/s/\n");
    dir.write("repos/notes.txt", "[notes]\nbaseurl=http://127.0.0.1/n/\n");
    std::filesystem::create_directories(dir / "repos" / "dir.repo");  // a directory: skipped
    ConfigSources sources = isolated_sources();
    sources.reposdirs = std::vector<std::filesystem::path>{dir / "repos", dir / "missing"};
    std::vector<ConfigWarning> warnings;
    auto repos = load_repo_configs(sources, fedora_vars(), warnings);
    ASSERT_TRUE(repos) << repos.error().to_string();
    EXPECT_EQ(repo_ids(*repos), (std::vector<std::string>{"alpha2", "alpha1", "zeta"}));
    EXPECT_TRUE(warnings.empty());
}

TEST(ConfigSources, TreeReposdirWithVarsdir) {
    VariableOptions options;
    options.machine = "aarch64";
    options.environment = std::map<std::string, std::string>{};
    options.varsdirs = {test::config_data_dir() / "vars"};
    auto vars = make_variable_context(options);
    ASSERT_TRUE(vars) << vars.error().to_string();
    ConfigSources sources = isolated_sources();
    sources.reposdirs = std::vector<std::filesystem::path>{test::config_data_dir() / "yum.repos.d"};
    std::vector<ConfigWarning> warnings;
    auto repos = load_repo_configs(sources, *vars, warnings);
    ASSERT_TRUE(repos) << repos.error().to_string();
    // amazonlinux.repo sorts before fedora.repo; README is not a .repo file.
    EXPECT_EQ(repo_ids(*repos),
              (std::vector<std::string>{"amazonlinux", "amazonlinux-source", "fedora",
                                        "fedora-debuginfo", "fedora-source"}));
    EXPECT_EQ(
        repo_named(*repos, "fedora").metalink,
        "https://mirrors.fedoraproject.org/metalink?repo=fedora-2023.6.20241010&arch=aarch64");
    EXPECT_EQ(count_warnings(warnings, ConfigWarningKind::UnknownKey), 0u);
}

TEST(ConfigSources, ConfigFileMainGivesDefaultsAndItsReposAreRead) {
    test::TempDir dir;
    dir.write("repos/a.repo",
              "[plain]\nbaseurl=http://127.0.0.1/plain/\n"
              "[own]\nbaseurl=http://127.0.0.1/own/\ngpgcheck=0\nexcludepkgs=foo\n"
              "max_parallel_downloads=4\nproxy=_none_\n");
    ConfigSources sources = isolated_sources();
    sources.config_file = test::config_data_dir() / "dnf.conf";
    sources.reposdirs = std::vector<std::filesystem::path>{dir / "repos"};
    std::vector<ConfigWarning> warnings;
    auto repos = load_repo_configs(sources, fedora_vars(), warnings);
    ASSERT_TRUE(repos) << repos.error().to_string();
    EXPECT_EQ(repo_ids(*repos), (std::vector<std::string>{"local-extras", "plain", "own"}));

    const RepoConfig& extras = repo_named(*repos, "local-extras");
    EXPECT_EQ(extras.baseurls, std::vector<std::string>{"file:///srv/repos/extras/x86_64"});
    EXPECT_TRUE(extras.gpgcheck);
    EXPECT_EQ(extras.defined_at.file, sources.config_file->string());
    EXPECT_EQ(extras.defined_at.line, 13u);

    const RepoConfig& plain = repo_named(*repos, "plain");
    EXPECT_TRUE(plain.gpgcheck);
    EXPECT_TRUE(plain.skip_if_unavailable);
    EXPECT_FALSE(plain.sslverify);
    EXPECT_EQ(plain.max_parallel_downloads, 10u);
    EXPECT_EQ(plain.proxy, "http://127.0.0.1:3128");
    EXPECT_EQ(plain.excludepkgs, std::vector<std::string>{"kernel*"});

    const RepoConfig& own = repo_named(*repos, "own");
    EXPECT_FALSE(own.gpgcheck);
    EXPECT_EQ(own.max_parallel_downloads, 4u);
    EXPECT_EQ(own.proxy, std::string());
    EXPECT_EQ(own.excludepkgs, (std::vector<std::string>{"kernel*", "foo"}));

    // installonly_limit, clean_requirements_on_remove, best: known dnf keys, ignored with a
    // warning.
    EXPECT_EQ(count_warnings(warnings, ConfigWarningKind::IgnoredKey), 3u);
    EXPECT_EQ(count_warnings(warnings, ConfigWarningKind::UnknownKey), 0u);
}

TEST(ConfigSources, MainSectionWarnsOnUnknownAndRepoOnlyKeys) {
    test::TempDir dir;
    const auto conf =
        dir.write("dnf.conf", "[main]\nbaseurl=http://127.0.0.1/\nincludepkgs=a\nfrobnicate=1\n");
    ConfigSources sources = isolated_sources();
    sources.config_file = conf;
    std::vector<ConfigWarning> warnings;
    auto repos = load_repo_configs(sources, fedora_vars(), warnings);
    ASSERT_TRUE(repos) << repos.error().to_string();
    EXPECT_TRUE(repos->empty());
    ASSERT_EQ(warnings.size(), 3u);
    EXPECT_EQ(warnings[0].to_string(),
              conf.string() + ":2: key 'baseurl' has no meaning in [main]; ignored");
    EXPECT_EQ(warnings[1].kind, ConfigWarningKind::IgnoredKey);
    EXPECT_EQ(warnings[1].key, "includepkgs");
    EXPECT_EQ(warnings[2].to_string(),
              conf.string() + ":4: unknown key 'frobnicate' in [main]; ignored");
}

TEST(ConfigSources, BadValueInMainIsAnError) {
    test::TempDir dir;
    const auto conf = dir.write("dnf.conf", "[main]\ngpgcheck=sometimes\n");
    ConfigSources sources = isolated_sources();
    sources.config_file = conf;
    std::vector<ConfigWarning> warnings;
    auto repos = load_repo_configs(sources, fedora_vars(), warnings);
    ASSERT_FALSE(repos);
    EXPECT_EQ(repos.error().to_string(),
              conf.string() +
                  ": line 2: invalid boolean 'sometimes' for key 'gpgcheck' (expected 1/0, yes/no, "
                  "true/false, on/off)");
}

TEST(ConfigSources, ConfigFileReposdirIsHonouredUnlessGivenExplicitly) {
    test::TempDir dir;
    dir.write("from-main/m.repo", "[from-main]\nbaseurl=http://127.0.0.1/m/\n");
    dir.write("explicit/e.repo", "[explicit]\nbaseurl=http://127.0.0.1/e/\n");
    const auto conf =
        dir.write("dnf.conf", "[main]\nreposdir=" + (dir / "from-main").string() + "\n");
    ConfigSources sources = isolated_sources();
    sources.config_file = conf;
    sources.reposdirs.reset();
    std::vector<ConfigWarning> warnings;
    auto repos = load_repo_configs(sources, fedora_vars(), warnings);
    ASSERT_TRUE(repos) << repos.error().to_string();
    EXPECT_EQ(repo_ids(*repos), std::vector<std::string>{"from-main"});

    sources.reposdirs = std::vector<std::filesystem::path>{dir / "explicit"};
    repos = load_repo_configs(sources, fedora_vars(), warnings);
    ASSERT_TRUE(repos) << repos.error().to_string();
    EXPECT_EQ(repo_ids(*repos), std::vector<std::string>{"explicit"});

    sources.setopts = {"reposdir=" + (dir / "from-main").string() + "," +
                       (dir / "explicit").string()};
    repos = load_repo_configs(sources, fedora_vars(), warnings);
    ASSERT_TRUE(repos) << repos.error().to_string();
    EXPECT_EQ(repo_ids(*repos), (std::vector<std::string>{"from-main", "explicit"}));
}

TEST(ConfigSources, MissingConfigFileIsNotFound) {
    test::TempDir dir;
    ConfigSources sources = isolated_sources();
    sources.config_file = dir / "nope.conf";
    std::vector<ConfigWarning> warnings;
    auto repos = load_repo_configs(sources, fedora_vars(), warnings);
    ASSERT_FALSE(repos);
    EXPECT_EQ(repos.error().code, ErrorCode::NotFound);
    EXPECT_EQ(repos.error().to_string(),
              (dir / "nope.conf").string() + ": config file not found: No such file or directory");
}

TEST(ConfigSources, DefaultConfigFileIsReadOnlyIfItExists) {
    test::TempDir dir;
    ConfigSources sources = isolated_sources();
    sources.default_config_file = dir / "absent.conf";
    std::vector<ConfigWarning> warnings;
    auto repos = load_repo_configs(sources, fedora_vars(), warnings);
    ASSERT_TRUE(repos) << repos.error().to_string();
    EXPECT_TRUE(repos->empty());

    sources.default_config_file =
        dir.write("present.conf", "[main]\n[in-default]\nbaseurl=http://127.0.0.1/\n");
    repos = load_repo_configs(sources, fedora_vars(), warnings);
    ASSERT_TRUE(repos) << repos.error().to_string();
    EXPECT_EQ(repo_ids(*repos), std::vector<std::string>{"in-default"});
}

TEST(ConfigSources, DuplicateIdsAcrossFilesNameBothPlaces) {
    test::TempDir dir;
    const auto first = dir.write("repos/a.repo", "[x]\nbaseurl=http://127.0.0.1/1/\n");
    const auto second = dir.write(
        "repos/b.repo",
        "# comment\n\n[y]\nbaseurl=http://127.0.0.1/y/\n[x]\nbaseurl=http://127.0.0.1/2/\n");
    ConfigSources sources = isolated_sources();
    sources.reposdirs = std::vector<std::filesystem::path>{dir / "repos"};
    std::vector<ConfigWarning> warnings;
    auto repos = load_repo_configs(sources, fedora_vars(), warnings);
    ASSERT_FALSE(repos);
    EXPECT_EQ(repos.error().code, ErrorCode::BadInput);
    EXPECT_EQ(
        repos.error().to_string(),
        second.string() + ": line 5: repo id 'x' is already defined at " + first.string() + ":1");
}

TEST(ConfigSources, RepofrompathLocalRelativePathBecomesAnAbsoluteFileUrl) {
    auto repo = repo_from_path("local,../mirror/./el9", "/srv/work");
    ASSERT_TRUE(repo) << repo.error().to_string();
    EXPECT_EQ(repo->id, "local");
    EXPECT_EQ(repo->name, "local");
    EXPECT_EQ(repo->baseurls, std::vector<std::string>{"file:///srv/mirror/el9"});
    EXPECT_TRUE(repo->enabled);
    EXPECT_FALSE(repo->gpgcheck);
    EXPECT_EQ(repo->defined_at.file, "--repofrompath");

    auto absolute = repo_from_path("abs,/data/repo/");
    ASSERT_TRUE(absolute);
    EXPECT_EQ(absolute->baseurls, std::vector<std::string>{"file:///data/repo/"});

    auto cwd_relative = repo_from_path("here,sub");
    ASSERT_TRUE(cwd_relative);
    EXPECT_EQ(
        cwd_relative->baseurls,
        std::vector<std::string>{"file://" + (std::filesystem::current_path() / "sub").string()});
}

TEST(ConfigSources, RepofrompathUrlIsKeptAndCommaSplitsOnlyOnce) {
    auto repo = repo_from_path("web,http://127.0.0.1:8080/repo/?a=1,2");
    ASSERT_TRUE(repo) << repo.error().to_string();
    EXPECT_EQ(repo->baseurls, std::vector<std::string>{"http://127.0.0.1:8080/repo/?a=1,2"});
}

TEST(ConfigSources, RepofrompathBadSyntaxIsAnError) {
    auto no_comma = repo_from_path("justanid");
    ASSERT_FALSE(no_comma);
    EXPECT_EQ(no_comma.error().code, ErrorCode::BadInput);
    EXPECT_EQ(no_comma.error().to_string(),
              "--repofrompath: 'justanid': expected ID,URL (or ID,PATH)");
    auto empty_url = repo_from_path("id,");
    ASSERT_FALSE(empty_url);
    EXPECT_EQ(empty_url.error().to_string(), "--repofrompath: 'id,': empty URL");
    auto bad_id = repo_from_path("a/b,http://127.0.0.1/");
    ASSERT_FALSE(bad_id);
    EXPECT_NE(bad_id.error().message.find("invalid repo id 'a/b'"), std::string::npos);
    EXPECT_FALSE(repo_from_path(",http://127.0.0.1/"));
}

TEST(ConfigSources, RepofrompathReposJoinTheFileReposWithGpgcheckOff) {
    test::TempDir dir;
    dir.write("repos/a.repo", "[fromfile]\nbaseurl=http://127.0.0.1/f/\n");
    const auto conf = dir.write("dnf.conf", "[main]\ngpgcheck=1\nretries=2\n");
    ConfigSources sources = isolated_sources();
    sources.config_file = conf;
    sources.reposdirs = std::vector<std::filesystem::path>{dir / "repos"};
    sources.working_directory = dir.path();
    sources.repofrompath = {"cli,http://127.0.0.1/$releasever/$basearch/", "loc,local-repo"};
    std::vector<ConfigWarning> warnings;
    auto repos = load_repo_configs(sources, fedora_vars(), warnings);
    ASSERT_TRUE(repos) << repos.error().to_string();
    EXPECT_EQ(repo_ids(*repos), (std::vector<std::string>{"fromfile", "cli", "loc"}));
    const RepoConfig& cli = repo_named(*repos, "cli");
    EXPECT_EQ(cli.baseurls, std::vector<std::string>{"http://127.0.0.1/40/x86_64/"});
    EXPECT_FALSE(cli.gpgcheck);
    EXPECT_EQ(cli.retries, 2u);  // other [main] defaults still apply
    EXPECT_TRUE(repo_named(*repos, "fromfile").gpgcheck);
    EXPECT_EQ(repo_named(*repos, "loc").baseurls,
              std::vector<std::string>{"file://" + (dir / "local-repo").string()});

    sources.repofrompath = {"fromfile,http://127.0.0.1/other/"};
    repos = load_repo_configs(sources, fedora_vars(), warnings);
    ASSERT_FALSE(repos);
    EXPECT_EQ(repos.error().to_string(),
              "--repofrompath: repo id 'fromfile' is already defined at " +
                  (dir / "repos" / "a.repo").string() + ":1");

    sources.repofrompath = {"undef,http://127.0.0.1/$nosuchvar/"};
    repos = load_repo_configs(sources, fedora_vars(), warnings);
    ASSERT_FALSE(repos);
    EXPECT_EQ(repos.error().to_string(),
              "--repofrompath: 'undef,http://127.0.0.1/$nosuchvar/': key 'baseurl' of repo 'undef' "
              "uses undefined variable 'nosuchvar'");
}

// Three repos for the --setopt tests.
std::vector<RepoConfig> three_repos(const test::TempDir& dir) {
    const auto file = dir.write("three.repo",
                                "[fedora]\nbaseurl=http://127.0.0.1/f/\n"
                                "[fedora-updates]\nbaseurl=http://127.0.0.1/u/\ngpgcheck=1\n"
                                "[epel]\nbaseurl=http://127.0.0.1/e/\n");
    std::vector<ConfigWarning> warnings;
    auto repos = read_repo_file(file, fedora_vars(), warnings);
    EXPECT_TRUE(repos) << repos.error().to_string();
    return repos ? *repos : std::vector<RepoConfig>{};
}

TEST(ConfigSetopt, KeyWithoutRepoIdOverridesEveryRepo) {
    test::TempDir dir;
    std::vector<RepoConfig> repos = three_repos(dir);
    std::vector<ConfigWarning> warnings;
    const std::vector<std::string> setopts = {"gpgcheck=True", "max_parallel_downloads=12",
                                              "throttle=25%"};
    auto applied = apply_setopts(repos, setopts, fedora_vars(), warnings);
    ASSERT_TRUE(applied) << applied.error().to_string();
    for (const RepoConfig& repo : repos) {
        SCOPED_TRACE(repo.id);
        EXPECT_TRUE(repo.gpgcheck);
        EXPECT_EQ(repo.max_parallel_downloads, 12u);
        EXPECT_EQ(repo.throttle_percent, 25.0);
    }
    EXPECT_TRUE(warnings.empty());
}

TEST(ConfigSetopt, GlobRepoIdOverridesOnlyMatchingRepos) {
    test::TempDir dir;
    std::vector<RepoConfig> repos = three_repos(dir);
    std::vector<ConfigWarning> warnings;
    const std::vector<std::string> setopts = {
        "fedora*.baseurl=http://127.0.0.1/$releasever/a/,http://127.0.0.1/b/",
        "fedora-updates.gpgcheck=0", "epel.enabled=0", "epel.excludepkgs=x* y"};
    auto applied = apply_setopts(repos, setopts, fedora_vars(), warnings);
    ASSERT_TRUE(applied) << applied.error().to_string();
    const std::vector<std::string> overridden = {"http://127.0.0.1/40/a/", "http://127.0.0.1/b/"};
    EXPECT_EQ(repo_named(repos, "fedora").baseurls, overridden);
    EXPECT_EQ(repo_named(repos, "fedora-updates").baseurls, overridden);
    EXPECT_FALSE(repo_named(repos, "fedora-updates").gpgcheck);
    EXPECT_EQ(repo_named(repos, "epel").baseurls, std::vector<std::string>{"http://127.0.0.1/e/"});
    EXPECT_FALSE(repo_named(repos, "epel").enabled);
    EXPECT_EQ(repo_named(repos, "epel").excludepkgs, (std::vector<std::string>{"x*", "y"}));
    EXPECT_TRUE(repo_named(repos, "fedora").enabled);
}

TEST(ConfigSetopt, UnknownKeyIsBadInput) {
    test::TempDir dir;
    std::vector<RepoConfig> repos = three_repos(dir);
    std::vector<ConfigWarning> warnings;
    for (const auto& [argument, expected] : std::vector<std::pair<std::string, std::string>>{
             {"fedora.baseurll=http://x/",
              "--setopt: 'fedora.baseurll=http://x/': unknown repo key 'baseurll'"},
             {"frobnicate=1", "--setopt: 'frobnicate=1': unknown key 'frobnicate'"},
             {"fedora.installonly_limit=3",
              "--setopt: 'fedora.installonly_limit=3': unknown repo key 'installonly_limit'"},
             {"gpgcheck", "--setopt: 'gpgcheck': expected KEY=VALUE or REPOID.KEY=VALUE"},
             {"baseurl=http://127.0.0.1/",
              "--setopt: 'baseurl=http://127.0.0.1/': key 'baseurl' needs a repo id "
              "(REPOID.baseurl=VALUE)"},
             {".gpgcheck=1", "--setopt: '.gpgcheck=1': empty repo id before '.'"},
             {"fedora.=1", "--setopt: 'fedora.=1': missing key before '='"},
         }) {
        SCOPED_TRACE(argument);
        const std::vector<std::string> setopts = {argument};
        auto applied = apply_setopts(repos, setopts, fedora_vars(), warnings);
        ASSERT_FALSE(applied);
        EXPECT_EQ(applied.error().code, ErrorCode::BadInput);
        EXPECT_EQ(applied.error().to_string(), expected);
    }
}

TEST(ConfigSetopt, BadValueNamesTheArgument) {
    test::TempDir dir;
    std::vector<RepoConfig> repos = three_repos(dir);
    std::vector<ConfigWarning> warnings;
    const std::vector<std::string> setopts = {"epel.enabled=perhaps"};
    auto applied = apply_setopts(repos, setopts, fedora_vars(), warnings);
    ASSERT_FALSE(applied);
    EXPECT_EQ(applied.error().to_string(),
              "--setopt: 'epel.enabled=perhaps': invalid boolean 'perhaps' for key 'enabled' "
              "(expected 1/0, yes/no, true/false, on/off)");
}

TEST(ConfigSetopt, UnmatchedGlobAndIgnoredKeysAreWarnings) {
    test::TempDir dir;
    std::vector<RepoConfig> repos = three_repos(dir);
    std::vector<ConfigWarning> warnings;
    const std::vector<std::string> setopts = {"centos*.gpgcheck=1", "fedora.countme=1",
                                              "installonly_limit=3"};
    auto applied = apply_setopts(repos, setopts, fedora_vars(), warnings);
    ASSERT_TRUE(applied) << applied.error().to_string();
    ASSERT_EQ(warnings.size(), 3u);
    EXPECT_EQ(warnings[0].kind, ConfigWarningKind::IgnoredKey);
    EXPECT_EQ(warnings[0].key, "countme");
    EXPECT_EQ(warnings[1].kind, ConfigWarningKind::IgnoredKey);
    EXPECT_EQ(warnings[1].key, "installonly_limit");
    EXPECT_EQ(warnings[2].kind, ConfigWarningKind::NoMatch);
    EXPECT_EQ(warnings[2].to_string(),
              "--setopt: 'centos*.gpgcheck=1': no repository matches 'centos*'; ignored");
    EXPECT_FALSE(repo_named(repos, "fedora").gpgcheck);
}

TEST(ConfigSetopt, AppliedByLoadAfterFilesAndRepofrompath) {
    test::TempDir dir;
    dir.write("repos/a.repo", "[a]\nbaseurl=http://127.0.0.1/a/\ngpgcheck=1\n");
    ConfigSources sources = isolated_sources();
    sources.reposdirs = std::vector<std::filesystem::path>{dir / "repos"};
    sources.repofrompath = {"b,http://127.0.0.1/b/"};
    sources.setopts = {"*.timeout=5", "b.gpgcheck=1", "a.gpgcheck=0"};
    std::vector<ConfigWarning> warnings;
    auto repos = load_repo_configs(sources, fedora_vars(), warnings);
    ASSERT_TRUE(repos) << repos.error().to_string();
    EXPECT_EQ(repo_named(*repos, "a").timeout_seconds, 5u);
    EXPECT_EQ(repo_named(*repos, "b").timeout_seconds, 5u);
    EXPECT_FALSE(repo_named(*repos, "a").gpgcheck);
    EXPECT_TRUE(repo_named(*repos, "b").gpgcheck);

    sources.setopts = {"nonsense_key=1"};
    repos = load_repo_configs(sources, fedora_vars(), warnings);
    ASSERT_FALSE(repos);
    EXPECT_EQ(repos.error().code, ErrorCode::BadInput);
}

}  // namespace
}  // namespace rpmirror
