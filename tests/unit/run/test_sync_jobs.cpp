// The jobs of a sync run made from a command line's request (rpmirror/run/sync_jobs.hpp): dnf
// mode's repositories and packages, job mode's configuration under the command line's settings.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "rpmirror/run/sync_jobs.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror {
namespace {

// Remembers what making the jobs told.
class Heard final : public SyncSetupEvents {
  public:
    void config_warning(const ConfigWarning& warning) override { warnings.push_back(warning); }
    void note(const std::string& line) override { notes.push_back(line); }

    std::vector<ConfigWarning> warnings;
    std::vector<std::string> notes;
};

std::vector<std::string> names_of(const std::vector<JobConfig>& jobs) {
    std::vector<std::string> names;
    for (const JobConfig& job : jobs) {
        names.push_back(job.name);
    }
    return names;
}

// A dnf configuration of its own in a temporary directory: repositories `alpha` and `gamma`
// enabled, `beta` disabled, each with gpgcheck on and a $releasever baseurl; nothing of the
// host's read but its variables directories.
class RepositoryJobsTest : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_.write("dnf.conf", "[main]\n");
        dir_.write("repos/test.repo",
                   "[alpha]\nbaseurl=http://127.0.0.1/$releasever/alpha/\ngpgcheck=1\n"
                   "repo_gpgcheck=1\n"
                   "[beta]\nbaseurl=http://127.0.0.1/$releasever/beta/\nenabled=0\n"
                   "[gamma]\nbaseurl=http://127.0.0.1/$releasever/gamma/\n");
        RepositoryRequest& repositories = request_.repositories;
        repositories.sources.config_file = (dir_ / "dnf.conf").string();
        repositories.sources.reposdirs = {(dir_ / "repos").string()};
        repositories.sources.releasevers = {"40"};
        repositories.download_path = (dir_ / "mirror").string();
        request_.each.options.download_path = dir_ / "mirror";
    }

    auto jobs() { return repository_run_jobs(request_, &heard_); }

    test::TempDir dir_;
    RepositoryRunRequest request_;
    Heard heard_;
};

TEST_F(RepositoryJobsTest, EachEnabledRepositoryIsAJobNamedByItsIdSharingTheOptions) {
    request_.each.options.selection.newest_only = true;
    auto made = jobs();
    ASSERT_TRUE(made) << made.error().error.to_string();
    EXPECT_EQ(names_of(*made), (std::vector<std::string>{"alpha", "gamma"}));
    for (const JobConfig& job : *made) {
        EXPECT_EQ(job.repo.id, job.name);
        EXPECT_TRUE(job.options.selection.newest_only);
        EXPECT_EQ(job.options.download_path, dir_ / "mirror");
        EXPECT_FALSE(job.with_dependencies);
    }
    EXPECT_EQ(made->front().repo.baseurls, std::vector<std::string>{"http://127.0.0.1/40/alpha/"});
    EXPECT_TRUE(made->front().repo.gpgcheck);
}

TEST_F(RepositoryJobsTest, TogglesApplyInTheirOrder) {
    request_.repositories.toggles = {
        {false, "*"}, {true, "beta"}, {true, "gamma"}, {false, "gamma"}};
    auto made = jobs();
    ASSERT_TRUE(made) << made.error().error.to_string();
    EXPECT_EQ(names_of(*made), std::vector<std::string>{"beta"});
}

TEST_F(RepositoryJobsTest, NogpgcheckTurnsBothChecksOff) {
    request_.repositories.nogpgcheck = true;
    auto made = jobs();
    ASSERT_TRUE(made) << made.error().error.to_string();
    ASSERT_FALSE(made->empty());
    EXPECT_FALSE(made->front().repo.gpgcheck);
    EXPECT_FALSE(made->front().repo.repo_gpgcheck);
}

TEST_F(RepositoryJobsTest, IpResolveOfMinus4ComesBeforeTheSetoptsWhichWin) {
    request_.repositories.ip_resolve = "4";
    auto made = jobs();
    ASSERT_TRUE(made) << made.error().error.to_string();
    EXPECT_EQ(made->front().repo.ip_resolve, IpResolve::V4);
    request_.repositories.sources.setopts = {"ip_resolve=6"};
    made = jobs();
    ASSERT_TRUE(made) << made.error().error.to_string();
    EXPECT_EQ(made->front().repo.ip_resolve, IpResolve::V6);
}

TEST_F(RepositoryJobsTest, AnUnknownKeyIsToldAsAWarningAndTheRepositoryStillRuns) {
    dir_.write("repos/test.repo", "[alpha]\nbaseurl=http://127.0.0.1/alpha/\nbogus_key=1\n");
    auto made = jobs();
    ASSERT_TRUE(made) << made.error().error.to_string();
    EXPECT_EQ(names_of(*made), std::vector<std::string>{"alpha"});
    ASSERT_EQ(heard_.warnings.size(), 1U);
    EXPECT_EQ(heard_.warnings.front().kind, ConfigWarningKind::UnknownKey);
    EXPECT_EQ(heard_.warnings.front().key, "bogus_key");
}

TEST_F(RepositoryJobsTest, SeveralReleasesEachLoadedInTurnOnlyWithUpstreamLayout) {
    request_.repositories.sources.releasevers = {"40", "41"};
    request_.repositories.repo_patterns = {"alpha"};
    auto refused = jobs();
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().step, RepositoryRunRefusal::Step::Request);
    EXPECT_EQ(refused.error().error.subject, "--releasever");

    request_.each.options.upstream_layout = true;
    auto made = jobs();
    ASSERT_TRUE(made) << made.error().error.to_string();
    ASSERT_EQ(names_of(*made), (std::vector<std::string>{"alpha", "alpha"}));
    EXPECT_EQ((*made)[0].repo.baseurls, std::vector<std::string>{"http://127.0.0.1/40/alpha/"});
    EXPECT_EQ((*made)[1].repo.baseurls, std::vector<std::string>{"http://127.0.0.1/41/alpha/"});

    // Releases of one repository share its directory: --norepopath is no "several".
    request_.each.options.norepopath = true;
    EXPECT_TRUE(jobs());

    request_.each.options.keep_releases = 1;
    refused = jobs();
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().step, RepositoryRunRefusal::Step::Request);
    EXPECT_EQ(refused.error().error.subject, "--keep-releases");
    EXPECT_EQ(refused.error().error.message,
              "2 releases given with --releasever, but only 1 kept: one would remove another "
              "this run syncs");
}

TEST_F(RepositoryJobsTest, ARepoPatternMatchingNoneIsALoadingRefusal) {
    request_.repositories.repo_patterns = {"nothing*"};
    auto refused = jobs();
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().step, RepositoryRunRefusal::Step::Loading);
    EXPECT_NE(refused.error().error.message.find("Unknown repo"), std::string::npos)
        << refused.error().error.to_string();
}

TEST_F(RepositoryJobsTest, NoRepositoryEnabledIsRefusedUnlessAllowed) {
    request_.repositories.toggles = {{false, "*"}};
    auto refused = jobs();
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().step, RepositoryRunRefusal::Step::Request);
    EXPECT_TRUE(refused.error().error.message.starts_with("no repository to mirror"));

    request_.allow_none = true;
    auto made = jobs();
    ASSERT_TRUE(made) << made.error().error.to_string();
    EXPECT_TRUE(made->empty());
}

TEST_F(RepositoryJobsTest, NorepopathWithSeveralRepositoriesIsRefusedInDnfsWords) {
    request_.each.options.norepopath = true;
    auto refused = jobs();
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().step, RepositoryRunRefusal::Step::Norepopath);
    EXPECT_EQ(refused.error().error.message, "Can't use --norepopath with multiple repositories");
}

TEST_F(RepositoryJobsTest, PackagesAloneAreAFilterOnNamesOfEveryRepository) {
    request_.packages.specs = {"bash"};
    request_.packages.packages_file = dir_.write("packages", "# shells\nzsh\n  fish\n");
    auto made = jobs();
    ASSERT_TRUE(made) << made.error().error.to_string();
    for (const JobConfig& job : *made) {
        EXPECT_EQ(job.repo.includepkgs, (std::vector<std::string>{"bash", "zsh", "fish"}));
        EXPECT_FALSE(job.with_dependencies);
        EXPECT_TRUE(job.packages.empty());
    }
}

TEST_F(RepositoryJobsTest, APackagesFileThatCannotBeReadIsRefusedNamingIt) {
    request_.packages.packages_file = dir_ / "missing";
    auto refused = jobs();
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().step, RepositoryRunRefusal::Step::Request);
    EXPECT_NE(refused.error().error.to_string().find((dir_ / "missing").string()),
              std::string::npos)
        << refused.error().error.to_string();
}

TEST_F(RepositoryJobsTest, WithDependenciesTheSpecsAreEveryJobsClosureKeys) {
    request_.packages.specs = {"bash"};
    request_.packages.with_dependencies = true;
    request_.packages.weak_dependencies = false;
    request_.packages.modules = {"nodejs:20"};
    request_.packages.closure_repos = {"beta"};
    auto made = jobs();
    ASSERT_TRUE(made) << made.error().error.to_string();
    ASSERT_EQ(names_of(*made), (std::vector<std::string>{"alpha", "gamma"}));
    for (const JobConfig& job : *made) {
        EXPECT_TRUE(job.repo.includepkgs.empty());
        EXPECT_EQ(job.packages, std::vector<std::string>{"bash"});
        EXPECT_TRUE(job.with_dependencies);
        EXPECT_FALSE(job.weak_dependencies);
        EXPECT_EQ(job.modules, std::vector<std::string>{"nodejs:20"});
        ASSERT_EQ(job.closure_repos.size(), 1U);
        EXPECT_EQ(job.closure_repos.front().id, "beta");  // disabled, yet solved over
    }
}

TEST_F(RepositoryJobsTest, WithDependenciesNeedsPackagesOrAdvisories) {
    request_.packages.with_dependencies = true;
    auto refused = jobs();
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().step, RepositoryRunRefusal::Step::Request);
    EXPECT_EQ(refused.error().error.to_string(),
              "--with-dependencies: needs --packages, --packages-file or --advisories");
}

TEST_F(RepositoryJobsTest, ClosureReposErrorsNameTheOption) {
    request_.packages.specs = {"bash"};
    request_.packages.with_dependencies = true;
    request_.packages.closure_repos = {"nothing*"};
    auto refused = jobs();
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().step, RepositoryRunRefusal::Step::Request);
    EXPECT_EQ(refused.error().error.subject, "--closure-repos");

    request_.packages.closure_repos = {"bet*"};  // matches beta, but is no repository's id
    refused = jobs();
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().error.to_string(),
              "--closure-repos: no repository 'bet*' in dnf's configuration");
}

// rpmirror.conf in a temporary directory: two jobs, [main] settings the request overrides.
class JobRunTest : public ::testing::Test {
  protected:
    void SetUp() override {
        request_.config_file = dir_.write("rpmirror.conf",
                                          "[main]\n"
                                          "destination = " +
                                              (dir_ / "mirror").string() +
                                              "\n"
                                              "parallel-jobs = 3\n"
                                              "parallel = 20\n"
                                              "max-per-host = 2\n"
                                              "shard = 1/2\n"
                                              "metrics-file = " +
                                              (dir_ / "main.prom").string() +
                                              "\n"
                                              "s3-region = main-region\n"
                                              "s3-profile = main-profile\n"
                                              "\n"
                                              "[base]\n"
                                              "baseurl = http://127.0.0.1/base/\n"
                                              "\n"
                                              "[updates]\n"
                                              "baseurl = http://127.0.0.1/updates/\n"
                                              "parallel = 5\n"
                                              "exec-on-change = true\n");
    }

    test::TempDir dir_;
    JobRunRequest request_;
};

TEST_F(JobRunTest, MainSettingsWithoutTheCommandLines) {
    Heard heard;
    auto run = job_run(request_, &heard);
    ASSERT_TRUE(run) << run.error().to_string();
    EXPECT_EQ(run->kind, RunKind::Jobs);
    EXPECT_EQ(names_of(run->jobs), (std::vector<std::string>{"base", "updates"}));
    ASSERT_TRUE(run->shard);
    EXPECT_EQ(run->shard->to_string(), "1/2");
    EXPECT_EQ(run->metrics_file, (dir_ / "main.prom").string());
    EXPECT_EQ(run->runner.parallel_jobs, 3U);
    EXPECT_EQ(run->runner.max_per_host, 2U);
    EXPECT_EQ(run->runner.parallel, 20U);  // [main] parallel: one budget for every job
    EXPECT_TRUE(run->on_change.empty());
    ASSERT_TRUE(run->runner.prepare_sync);
    SyncOptions base = run->jobs[0].options;
    run->runner.prepare_sync(run->jobs[0], base);
    EXPECT_EQ(base.parallel, 20U);  // [main] parallel for a job without its own
    EXPECT_TRUE(base.use_checksum_cache);
    EXPECT_EQ(base.s3.region, "main-region");
    SyncOptions updates = run->jobs[1].options;
    run->runner.prepare_sync(run->jobs[1], updates);
    EXPECT_EQ(updates.parallel, 5U);  // its own
    EXPECT_TRUE(heard.warnings.empty());
}

TEST_F(JobRunTest, TheCommandLinesSettingsWinOverMain) {
    request_.job_patterns = {"upd*"};
    request_.shard = "2/2";
    request_.parallel_jobs = 7;
    request_.parallel = 9;
    request_.max_per_host = 0;
    request_.use_checksum_cache = false;
    request_.state_dir = dir_ / "state";
    request_.lock_wait = std::chrono::seconds(30);
    request_.s3.region = "given-region";
    request_.on_change = "echo changed";
    request_.metrics_file = (dir_ / "given.prom").string();
    auto run = job_run(request_);
    ASSERT_TRUE(run) << run.error().to_string();
    EXPECT_EQ(names_of(run->jobs), std::vector<std::string>{"updates"});
    ASSERT_TRUE(run->shard);
    EXPECT_EQ(run->shard->to_string(), "2/2");
    EXPECT_EQ(run->metrics_file, (dir_ / "given.prom").string());
    EXPECT_EQ(run->on_change, "echo changed");
    EXPECT_EQ(run->runner.parallel_jobs, 7U);
    EXPECT_EQ(run->runner.max_per_host, 0U);
    EXPECT_EQ(run->runner.parallel, 9U);
    SyncOptions options = run->jobs[0].options;
    options.parallel.reset();
    run->runner.prepare_sync(run->jobs[0], options);
    EXPECT_EQ(options.parallel, 9U);
    EXPECT_FALSE(options.use_checksum_cache);
    EXPECT_EQ(options.state_dir, dir_ / "state");
    EXPECT_EQ(options.lock_wait, std::chrono::seconds(30));
    EXPECT_EQ(options.s3.region, "given-region");
    EXPECT_EQ(options.s3.profile, "main-profile");  // not given: [main]'s
}

TEST_F(JobRunTest, ABadShardOrAJobPatternMatchingNoneIsAnErrorNamingIt) {
    request_.shard = "3/2";
    auto run = job_run(request_);
    ASSERT_FALSE(run);
    EXPECT_EQ(run.error().code, ErrorCode::BadInput);
    EXPECT_EQ(run.error().subject, "--shard");

    request_.shard.reset();
    request_.job_patterns = {"nothing*"};
    run = job_run(request_);
    ASSERT_FALSE(run);
    EXPECT_EQ(run.error().code, ErrorCode::BadInput);
    EXPECT_NE(run.error().to_string().find("nothing*"), std::string::npos)
        << run.error().to_string();
}

TEST_F(JobRunTest, TheConfigurationsWarningsAreToldBeforeItsError) {
    request_.config_file = dir_.write("bad.conf", "[main]\nbogus-key = 1\n");  // and no job
    Heard heard;
    auto run = job_run(request_, &heard);
    ASSERT_FALSE(run);
    ASSERT_EQ(heard.warnings.size(), 1U);
    EXPECT_EQ(heard.warnings.front().kind, ConfigWarningKind::UnknownKey);
}

}  // namespace
}  // namespace rpmirror
