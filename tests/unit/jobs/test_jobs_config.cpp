#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <string>

#include "jobs/jobs_config.hpp"
#include "jobs_config_fixture.hpp"
#include "rpmirror/jobs/jobs.hpp"
#include "unit/config/config_test_support.hpp"

namespace rpmirror {
namespace {

using test::count_warnings;
using test::job_named;
using test::JobsConfigTest;

TEST_F(JobsConfigTest, JobKeysBecomeSyncOptionsAndRepoKeysTheRepository) {
    auto config = load(
        "[main]\n"
        "destination = /srv/mirror\n"
        "parallel-jobs = 3\n"
        "parallel = 20\n"
        "max_per_host = 2\n"
        "newest-only = 1\n"
        "sslverify = 0\n"
        "\n"
        "[base]\n"
        "baseurl = http://example.com/base/\n"
        "arch = x86_64, noarch\n"
        "download_metadata = yes\n"
        "delete = 1\n"
        "excludepkgs = foo*\n"
        "parallel = 5\n"
        "\n"
        "[updates]\n"
        "name = Updates\n"
        "metalink = http://example.com/metalink\n"
        "destination = /srv/other/updates\n"
        "metadata-path = /srv/meta/updates\n"
        "newest-only = 0\n"
        "keep-versions = 3\n"
        "gpgcheck = 1\n"
        "gpgcheck-keys = repo\n"
        "min-buildtime = 2020-01-01\n"
        "source = 1\n"
        "remote-time = on\n"
        "downloadcomps = true\n"
        "zchunk = off\n"
        "exec-on-change = echo changed\n"
        "sslverify = 1\n");
    ASSERT_TRUE(config) << config.error().to_string();
    EXPECT_EQ(config->parallel_jobs, 3U);
    EXPECT_EQ(config->parallel, 20U);
    EXPECT_EQ(config->max_per_host, 2U);
    ASSERT_EQ(config->jobs.size(), 2U);
    const JobConfig& base = config->jobs[0];
    EXPECT_EQ(base.name, "base");
    EXPECT_TRUE(base.errors.empty()) << base.errors.front();
    EXPECT_EQ(base.repo.id, "base");
    EXPECT_EQ(base.repo.baseurls, std::vector<std::string>{"http://example.com/base/"});
    EXPECT_FALSE(base.repo.sslverify);  // [main]'s default
    EXPECT_EQ(base.repo.excludepkgs, std::vector<std::string>{"foo*"});
    EXPECT_EQ(base.options.download_path, "/srv/mirror/base");
    EXPECT_TRUE(base.options.norepopath);
    EXPECT_EQ(base.options.selection.arches, (std::vector<std::string>{"x86_64", "noarch"}));
    EXPECT_TRUE(base.options.selection.newest_only);
    EXPECT_EQ(base.options.selection.keep_versions, 1U);
    EXPECT_TRUE(base.options.download_metadata);
    EXPECT_TRUE(base.options.delete_unlisted);
    EXPECT_EQ(base.options.parallel, 5U);
    EXPECT_FALSE(base.options.check_package_signatures);

    const JobConfig& updates = config->jobs[1];
    EXPECT_TRUE(updates.errors.empty()) << updates.errors.front();
    EXPECT_EQ(updates.repo.name, "Updates");
    EXPECT_EQ(updates.repo.metalink, "http://example.com/metalink");
    EXPECT_TRUE(updates.repo.sslverify);
    EXPECT_EQ(updates.options.download_path, "/srv/other/updates");
    EXPECT_EQ(updates.options.metadata_path, "/srv/meta/updates");
    EXPECT_TRUE(updates.options.selection.newest_only);
    EXPECT_EQ(updates.options.selection.keep_versions, 3U);
    EXPECT_TRUE(updates.repo.gpgcheck);
    EXPECT_TRUE(updates.options.check_package_signatures);
    EXPECT_EQ(updates.options.package_keys, PackageKeySource::Repository);
    EXPECT_EQ(updates.options.selection.min_build_time, 1577836800);
    EXPECT_TRUE(updates.options.selection.source_only);
    EXPECT_TRUE(updates.options.remote_time);
    EXPECT_TRUE(updates.options.download_comps);
    EXPECT_FALSE(updates.options.zchunk);
    EXPECT_TRUE(base.options.zchunk) << "on by default";
    EXPECT_EQ(updates.exec_on_change, "echo changed");
    EXPECT_FALSE(updates.options.parallel);
    EXPECT_TRUE(warnings_.empty());
}

// The metrics file: [main]'s, else RPMIRROR_METRICS_FILE of the environment (what the systemd
// unit sets, so that [main] can name another), else none.
TEST_F(JobsConfigTest, MetricsFileOfMainOverridesTheEnvironmentsDefault) {
    const std::string job = "[a]\nbaseurl = http://example.org/a/\ndestination = /srv/a\n";
    auto config = load(job);
    ASSERT_TRUE(config) << config.error().to_string();
    EXPECT_FALSE(config->metrics_file);

    environment_["RPMIRROR_METRICS_FILE"] = "/var/lib/rpmirror/rpmirror.prom";
    config = load(job);
    ASSERT_TRUE(config) << config.error().to_string();
    EXPECT_EQ(config->metrics_file, std::filesystem::path("/var/lib/rpmirror/rpmirror.prom"));

    config = load("[main]\nmetrics-file = /srv/metrics/rpmirror.prom\n" + job);
    ASSERT_TRUE(config) << config.error().to_string();
    EXPECT_EQ(config->metrics_file, std::filesystem::path("/srv/metrics/rpmirror.prom"));

    environment_["RPMIRROR_METRICS_FILE"] = "";  // set but empty: none
    config = load(job);
    ASSERT_TRUE(config) << config.error().to_string();
    EXPECT_FALSE(config->metrics_file);
}

TEST_F(JobsConfigTest, UnknownKeyIsAWarningWithFileAndLineAndTheJobRuns) {
    auto config = load("[base]\nbaseurl = http://example.com/\ndestination = /srv/b\nnewest = 1\n");
    ASSERT_TRUE(config) << config.error().to_string();
    ASSERT_EQ(warnings_.size(), 1U);
    EXPECT_EQ(warnings_[0].kind, ConfigWarningKind::UnknownKey);
    EXPECT_EQ(warnings_[0].to_string(), main_file() + ":4: unknown key 'newest' in job 'base'");
    EXPECT_TRUE(config->jobs[0].errors.empty());
}

TEST_F(JobsConfigTest, BadValueFailsThatJobOnlyNamingFileLineAndKey) {
    auto config = load(
        "[main]\ndestination = /srv\n"
        "[bad]\nbaseurl = http://example.com/\nnewest-only = maybe\n"
        "[badrepo]\nbaseurl = http://example.com/\nsslverify = perhaps\n"
        "[good]\nbaseurl = http://example.com/\n");
    ASSERT_TRUE(config) << config.error().to_string();
    ASSERT_EQ(config->jobs.size(), 3U);
    const JobConfig& bad = job_named(config->jobs, "bad");
    ASSERT_EQ(bad.errors.size(), 1U);
    EXPECT_TRUE(bad.errors[0].starts_with(main_file() + ":5: job 'bad': newest-only: invalid "
                                                        "boolean 'maybe'"))
        << bad.errors[0];
    const JobConfig& bad_repo = job_named(config->jobs, "badrepo");
    ASSERT_EQ(bad_repo.errors.size(), 1U);
    EXPECT_TRUE(bad_repo.errors[0].starts_with(main_file() + ":8: job 'badrepo': sslverify: "))
        << bad_repo.errors[0];
    EXPECT_NE(bad_repo.errors[0].find("perhaps"), std::string::npos);
    EXPECT_TRUE(job_named(config->jobs, "good").errors.empty());
}

TEST_F(JobsConfigTest, AdvisoryKeysSelectAsTheirOptionsAndBadValuesFailTheJob) {
    auto config = load(
        "[main]\ndestination = /srv\n"
        "[security]\nbaseurl = http://example.com/\nadvisories = security, EX-1\n"
        "advisory-severity = critical important\nas-of = 2026-03-01\n"
        "[badseverity]\nbaseurl = http://example.com/\nadvisory-severity = urgent\n"
        "[baddate]\nbaseurl = http://example.com/\nas-of = soon\n");
    ASSERT_TRUE(config) << config.error().to_string();
    const JobConfig& security = job_named(config->jobs, "security");
    ASSERT_TRUE(security.errors.empty()) << security.errors.front();
    const SelectionOptions& selection = security.options.selection;
    EXPECT_EQ(selection.advisories.types, std::vector<std::string>{"security"});
    EXPECT_EQ(selection.advisories.ids, std::vector<std::string>{"EX-1"});
    EXPECT_EQ(selection.advisories.severities, (std::vector<std::string>{"Critical", "Important"}));
    EXPECT_EQ(selection.as_of, 1772409599);
    const JobConfig& severity = job_named(config->jobs, "badseverity");
    ASSERT_EQ(severity.errors.size(), 1U);
    EXPECT_TRUE(
        severity.errors[0].starts_with(main_file() + ":10: job 'badseverity': advisory-severity: "))
        << severity.errors[0];
    EXPECT_NE(severity.errors[0].find("urgent"), std::string::npos) << severity.errors[0];
    const JobConfig& date = job_named(config->jobs, "baddate");
    ASSERT_EQ(date.errors.size(), 1U);
    EXPECT_TRUE(date.errors[0].starts_with(main_file() + ":13: job 'baddate': as-of: invalid "
                                                         "date 'soon'"))
        << date.errors[0];
}

TEST_F(JobsConfigTest, DuplicateJobAcrossFilesNamesBothPlaces) {
    auto config = load("[main]\ndestination = /srv\n[base]\nbaseurl = http://a/\n",
                       {{"10-more.conf", "\n[base]\nbaseurl = http://b/\n"}});
    ASSERT_FALSE(config);
    const std::string message = config.error().to_string();
    EXPECT_NE(message.find("conf.d/10-more.conf"), std::string::npos) << message;
    EXPECT_NE(message.find("line 2"), std::string::npos) << message;
    EXPECT_NE(message.find(main_file() + ":3"), std::string::npos) << message;
}

TEST_F(JobsConfigTest, ConfDFilesAreReadInNameOrderAndOnlyDotConf) {
    auto config = load("[main]\ndestination = /srv\n[a]\nbaseurl = http://a/\n",
                       {{"20-c.conf", "[c]\nbaseurl = http://c/\n"},
                        {"10-b.conf", "[b]\nbaseurl = http://b/\n"},
                        {"x.conf.disabled", "[x]\nbaseurl = http://x/\n"}});
    ASSERT_TRUE(config) << config.error().to_string();
    ASSERT_EQ(config->jobs.size(), 3U);
    EXPECT_EQ(config->jobs[0].name, "a");
    EXPECT_EQ(config->jobs[1].name, "b");
    EXPECT_EQ(config->jobs[2].name, "c");
}

TEST_F(JobsConfigTest, MainInConfDIsAnError) {
    auto config = load("[main]\ndestination = /srv\n[a]\nbaseurl = http://a/\n",
                       {{"a.conf", "# x\n[main]\nparallel = 3\n"}});
    ASSERT_FALSE(config);
    const std::string message = config.error().to_string();
    EXPECT_NE(message.find("conf.d/a.conf"), std::string::npos) << message;
    EXPECT_NE(message.find("line 2"), std::string::npos) << message;
}

TEST_F(JobsConfigTest, NoSourceOrTwoSourcesFailTheJob) {
    auto config = load(
        "[main]\ndestination = /srv\n"
        "[none]\narch = x86_64\n"
        "[two]\nbaseurl = http://a/\nrepo = fedora\n"
        "[ok]\nbaseurl = http://a/\n");
    ASSERT_TRUE(config) << config.error().to_string();
    const JobConfig& none = job_named(config->jobs, "none");
    ASSERT_EQ(none.errors.size(), 1U);
    EXPECT_EQ(none.errors[0], main_file() +
                                  ":3: job 'none': source: no source: give repo = ID, or baseurl, "
                                  "mirrorlist or metalink");
    const JobConfig& two = job_named(config->jobs, "two");
    ASSERT_FALSE(two.errors.empty());
    EXPECT_TRUE(two.errors[0].starts_with(main_file() + ":7: job 'two': repo: two sources"))
        << two.errors[0];
    EXPECT_TRUE(job_named(config->jobs, "ok").errors.empty());
}

TEST_F(JobsConfigTest, NoDestinationFailsTheJob) {
    auto config = load("[a]\nbaseurl = http://a/\n");
    ASSERT_TRUE(config);
    ASSERT_EQ(config->jobs[0].errors.size(), 1U);
    EXPECT_TRUE(
        config->jobs[0].errors[0].starts_with(main_file() + ":1: job 'a': destination: not set"));
}

TEST_F(JobsConfigTest, NoJobAtAllAndSyntaxErrorsAreLoadErrors) {
    auto empty = load("[main]\ndestination = /srv\n");
    ASSERT_FALSE(empty);
    EXPECT_NE(empty.error().to_string().find(main_file()), std::string::npos);
    auto syntax = load("[main\n");
    ASSERT_FALSE(syntax);
    EXPECT_NE(syntax.error().to_string().find(main_file()), std::string::npos);
    JobsLoadOptions missing;
    missing.config_file = dir_.path() / "nowhere.conf";
    std::vector<ConfigWarning> warnings;
    auto not_found = load_jobs_config(missing, warnings);
    ASSERT_FALSE(not_found);
    EXPECT_EQ(not_found.error().code, ErrorCode::NotFound);
}

TEST_F(JobsConfigTest, BadMainValueIsALoadError) {
    auto config =
        load("[main]\ndestination = /srv\nparallel-jobs = many\n[a]\nbaseurl = http://a/\n");
    ASSERT_FALSE(config);
    EXPECT_NE(config.error().to_string().find("line 3"), std::string::npos);
    auto default_value =
        load("[main]\ndestination = /srv\ndelete = sure\n[a]\nbaseurl = http://a/\n");
    ASSERT_FALSE(default_value);
    EXPECT_NE(default_value.error().to_string().find(main_file() + ":3: [main]: delete:"),
              std::string::npos)
        << default_value.error().to_string();
}

TEST_F(JobsConfigTest, ShardInMain) {
    auto config = load("[main]\ndestination = /srv\nshard = 2/3\n[a]\nbaseurl = http://a/\n");
    ASSERT_TRUE(config) << config.error().to_string();
    ASSERT_TRUE(config->shard);
    EXPECT_EQ(config->shard->index, 2U);
    EXPECT_EQ(config->shard->count, 3U);
    auto none = load("[main]\ndestination = /srv\n[a]\nbaseurl = http://a/\n");
    ASSERT_TRUE(none);
    EXPECT_FALSE(none->shard);
    auto bad = load("[main]\ndestination = /srv\nshard = 4/3\n[a]\nbaseurl = http://a/\n");
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().code, ErrorCode::BadInput);
    EXPECT_NE(
        bad.error().to_string().find(main_file() + ": line 3: [main]: shard: invalid shard '4/3'"),
        std::string::npos)
        << bad.error().to_string();
}

TEST_F(JobsConfigTest, EnabledZeroIsSkippedUnlessJobNamesIt) {
    auto config = load(
        "[main]\ndestination = /srv\n"
        "[a]\nbaseurl = http://a/\n"
        "[b-debug]\nbaseurl = http://b/\nenabled = 0\n"
        "[c-debug]\nbaseurl = http://c/\n");
    ASSERT_TRUE(config);
    auto all = select_jobs(config->jobs, {});
    ASSERT_TRUE(all);
    ASSERT_EQ(all->size(), 2U);
    EXPECT_EQ((*all)[0].name, "a");
    EXPECT_EQ((*all)[1].name, "c-debug");
    const std::vector<std::string> debug = {"*-debug"};
    auto named = select_jobs(config->jobs, debug);
    ASSERT_TRUE(named);
    ASSERT_EQ(named->size(), 2U);
    EXPECT_EQ((*named)[0].name, "b-debug");
    const std::vector<std::string> none = {"a", "zzz*"};
    auto unmatched = select_jobs(config->jobs, none);
    ASSERT_FALSE(unmatched);
    EXPECT_NE(unmatched.error().to_string().find("zzz*"), std::string::npos);
}

TEST_F(JobsConfigTest, VariablesFromMainAndVarsdir) {
    dir_.write("vars/mirrorhost", "mirror.example.com\n");
    auto config = load(
        "[main]\n"
        "releasever = 40\n"
        "varsdir = " +
        (dir_.path() / "vars").string() +
        "\n"
        "destination = /srv/$releasever\n"
        "[fedora]\n"
        "baseurl = http://$mirrorhost/fedora/$releasever/$basearch/\n"
        "[bad]\n"
        "baseurl = http://$nosuchvar/\n");
    ASSERT_TRUE(config) << config.error().to_string();
    const JobConfig& fedora = job_named(config->jobs, "fedora");
    EXPECT_TRUE(fedora.errors.empty());
    EXPECT_EQ(fedora.repo.baseurls,
              std::vector<std::string>{"http://mirror.example.com/fedora/40/x86_64/"});
    EXPECT_EQ(fedora.options.download_path, "/srv/40/fedora");
    const JobConfig& bad = job_named(config->jobs, "bad");
    ASSERT_EQ(bad.errors.size(), 1U);
    EXPECT_TRUE(bad.errors[0].starts_with(main_file() + ":8: job 'bad': baseurl: undefined "
                                                        "variable 'nosuchvar'"))
        << bad.errors[0];
}

TEST_F(JobsConfigTest, RepoIdLoadsDnfConfigurationAndJobKeysOverrideIt) {
    dir_.write("dnf.conf", "[main]\nsslverify = 0\n");
    dir_.write("repos/fedora.repo",
               "[fedora]\nname = Fedora\nbaseurl = http://dl.example.com/f/\nenabled = 0\n"
               "gpgcheck = 1\nexcludepkgs = kernel*\ntimeout = 5\n");
    auto config = load(
        "[main]\n"
        "dnf-config = " +
        (dir_.path() / "dnf.conf").string() +
        "\n"
        "reposdir = " +
        (dir_.path() / "repos").string() +
        "\n"
        "destination = /srv\n"
        "[f]\n"
        "repo = fedora\n"
        "timeout = 9\n"
        "[missing]\n"
        "repo = nosuch\n");
    ASSERT_TRUE(config) << config.error().to_string();
    const JobConfig& f = job_named(config->jobs, "f");
    EXPECT_TRUE(f.errors.empty()) << f.errors.front();
    EXPECT_EQ(f.repo.id, "f");
    EXPECT_EQ(f.repo.name, "Fedora");
    EXPECT_EQ(f.repo.baseurls, std::vector<std::string>{"http://dl.example.com/f/"});
    EXPECT_TRUE(f.repo.enabled);
    EXPECT_TRUE(f.repo.gpgcheck);
    EXPECT_FALSE(f.repo.sslverify);  // dnf.conf's [main]
    EXPECT_EQ(f.repo.excludepkgs, std::vector<std::string>{"kernel*"});
    EXPECT_EQ(f.repo.timeout_seconds, 9U);
    EXPECT_EQ(f.options.download_path, "/srv/f");
    const JobConfig& missing = job_named(config->jobs, "missing");
    ASSERT_EQ(missing.errors.size(), 1U);
    EXPECT_TRUE(missing.errors[0].starts_with(main_file() + ":9: job 'missing': repo: no "
                                                            "repository 'nosuch'"))
        << missing.errors[0];
}

TEST_F(JobsConfigTest, DashAndUnderscoreAreTheSameAndIgnoredDnfKeysWarn) {
    auto config = load(
        "[main]\ndestination = /srv\n"
        "[a]\nbaseurl = http://a/\nskip-if-unavailable = 1\nmax_parallel_downloads = 4\n"
        "countme = 1\n");
    ASSERT_TRUE(config);
    const JobConfig& a = config->jobs[0];
    EXPECT_TRUE(a.errors.empty());
    EXPECT_TRUE(a.repo.skip_if_unavailable);
    EXPECT_EQ(a.repo.max_parallel_downloads, 4U);
    EXPECT_EQ(count_warnings(warnings_, ConfigWarningKind::IgnoredKey), 1U);
    EXPECT_EQ(count_warnings(warnings_, ConfigWarningKind::UnknownKey), 0U);
}

TEST_F(JobsConfigTest, KeyGivenTwiceWarnsAndTheLaterWins) {
    auto config = load(
        "[main]\ndestination = /srv\n[a]\nbaseurl = http://a/\nnewest-only = 1\n"
        "newest_only = 0\n");
    ASSERT_TRUE(config);
    EXPECT_FALSE(config->jobs[0].options.selection.newest_only);
    ASSERT_EQ(warnings_.size(), 1U);
    EXPECT_EQ(warnings_[0].kind, ConfigWarningKind::DuplicateKey);
    EXPECT_EQ(warnings_[0].where.line, 6U);
}

// upstream-layout / mirror-url: the job's options; mirror-url alone fails the job at its section.
TEST_F(JobsConfigTest, UpstreamLayoutAndMirrorUrl) {
    auto config = load(
        "[main]\ndestination = /srv\n[a]\nbaseurl = http://a/\nupstream-layout = 1\n"
        "mirror-url = https://mirror.example/amzn/\n[b]\nbaseurl = http://b/\n"
        "mirror-url = https://mirror.example/\n");
    ASSERT_TRUE(config);
    ASSERT_EQ(config->jobs.size(), 2U);
    EXPECT_TRUE(config->jobs[0].errors.empty());
    EXPECT_TRUE(config->jobs[0].options.upstream_layout);
    EXPECT_EQ(config->jobs[0].options.mirror_url, "https://mirror.example/amzn/");
    ASSERT_EQ(config->jobs[1].errors.size(), 1U);
    EXPECT_TRUE(config->jobs[1].errors[0].starts_with(main_file() + ":7: job 'b': mirror-url: "))
        << config->jobs[1].errors[0];
    EXPECT_NE(config->jobs[1].errors[0].find("needs --upstream-layout"), std::string::npos);
}

TEST_F(JobsConfigTest, KeepReleasesNeedsUpstreamLayoutAndDelete) {
    auto config = load(
        "[main]\ndestination = /srv\n[a]\nbaseurl = http://a/\nupstream-layout = 1\n"
        "delete = 1\nkeep-releases = 3\n[b]\nbaseurl = http://b/\nupstream-layout = 1\n"
        "keep-releases = 2\n[c]\nbaseurl = http://c/\nupstream-layout = 1\ndelete = 1\n"
        "keep-releases = 0\n");
    ASSERT_TRUE(config);
    ASSERT_EQ(config->jobs.size(), 3U);
    EXPECT_TRUE(config->jobs[0].errors.empty());
    EXPECT_EQ(config->jobs[0].options.keep_releases, 3U);
    ASSERT_EQ(config->jobs[1].errors.size(), 1U);
    EXPECT_TRUE(config->jobs[1].errors[0].starts_with(main_file() + ":8: job 'b': keep-releases: "))
        << config->jobs[1].errors[0];
    EXPECT_NE(config->jobs[1].errors[0].find("needs --upstream-layout and --delete"),
              std::string::npos);
    ASSERT_EQ(config->jobs[2].errors.size(), 1U);
    EXPECT_NE(config->jobs[2].errors[0].find("keep-releases: invalid number '0'"),
              std::string::npos)
        << config->jobs[2].errors[0];
}

TEST_F(JobsConfigTest, ReleasesMakeOneJobPerReleaseSharingTheDestination) {
    auto config = load(
        "[main]\ndestination = /srv\n[amzn]\nmirrorlist = http://a/$releasever/x86_64/ml\n"
        "upstream-layout = 1\nreleases = 2023.6 latest\n[b]\nbaseurl = http://b/$releasever/\n"
        "upstream-layout = 1\ndelete = 1\nkeep-releases = 1\nreleases = 1 2\n");
    ASSERT_TRUE(config) << config.error().to_string();
    ASSERT_EQ(config->jobs.size(), 4U);
    const JobConfig& first = job_named(config->jobs, "amzn:2023.6");
    const JobConfig& latest = job_named(config->jobs, "amzn:latest");
    EXPECT_TRUE(first.errors.empty()) << first.errors.front();
    EXPECT_EQ(first.release, "2023.6");
    EXPECT_EQ(first.repo.id, "amzn:2023.6");
    EXPECT_EQ(*first.repo.mirrorlist, "http://a/2023.6/x86_64/ml");
    EXPECT_EQ(*latest.repo.mirrorlist, "http://a/latest/x86_64/ml");
    EXPECT_EQ(first.options.download_path, latest.options.download_path);
    EXPECT_EQ(first.options.download_path, std::filesystem::path("/srv/amzn"));
    ASSERT_TRUE(latest.options.lock_wait.has_value());  // one after the other
    auto in_main = load("[main]\ndestination = /srv\nreleases = 1 2\n[a]\nbaseurl = http://a/\n");
    ASSERT_FALSE(in_main);
    EXPECT_NE(in_main.error().to_string().find("releases: belongs in a job"), std::string::npos)
        << in_main.error().to_string();
    const JobConfig& b = job_named(config->jobs, "b:1");
    ASSERT_EQ(b.errors.size(), 1U);
    EXPECT_NE(b.errors[0].find("job 'b': releases: 2 releases, but keep-releases = 1"),
              std::string::npos)
        << b.errors[0];
}

TEST_F(JobsConfigTest, SignKeyNeedsDownloadMetadata) {
    auto config = load("[main]\ndestination = /srv\n[a]\nbaseurl = http://a/\nsign-key = ABC\n");
    ASSERT_TRUE(config);
    ASSERT_EQ(config->jobs[0].errors.size(), 1U);
    EXPECT_TRUE(config->jobs[0].errors[0].starts_with(main_file() + ":5: job 'a': sign-key: "));
}

}  // namespace
}  // namespace rpmirror
