// Job mode of `rpmirror sync` (rpmirror.conf) end to end: real nginx, real repositories, the real
// binary.
#include <gtest/gtest.h>

#include <mutex>
#include <set>
#include <sstream>

#include "integration/sync/sync_fixture.hpp"
#include "jobs/jobs_config.hpp"
#include "rpmirror/jobs/jobs.hpp"
#include "rpmirror/report/report.hpp"
#include "support/http_server.hpp"

namespace rpmirror::test {
namespace {

class JobModeTest : public SyncFixture {
  protected:
    // Runs `rpmirror sync ARGS` as it is, without the fixture's dnf isolation options (job mode
    // refuses them).
    CommandResult run_sync(const std::vector<std::string>& args) {
        CommandResult result = run_to_end(rpmirror_sync_argv(args), tmp_ / "logs");
        expect_no_sanitizer_report(result.err);
        return result;
    }

    // The file names of the packages under `dir` (recursively), sorted.
    static std::set<std::string> rpms_under(const std::filesystem::path& dir) {
        std::set<std::string> names;
        if (!std::filesystem::exists(dir)) {
            return names;
        }
        for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
            if (entry.path().extension() == ".rpm") {
                names.insert(entry.path().filename().string());
            }
        }
        return names;
    }

    std::filesystem::path write_config(const std::string& text) {
        return TempDir::write_at(tmp_ / "etc" / "rpmirror.conf", text);
    }

    std::filesystem::path mirror() const { return tmp_ / "mirror"; }

    // Three jobs with different options over two servers.
    std::filesystem::path three_jobs(const std::string& extra = "") {
        const std::string versions = serve(test_repo("versions-repo")).url("/");
        const std::string sample = serve(test_repo("sample-repo")).url("/");
        return write_config(
            "[main]\n"
            "destination = " +
            mirror().string() +
            "\n"
            "parallel-jobs = 3\n"
            "\n"
            "[newest]\n"
            "baseurl = " +
            versions +
            "\n"
            "newest-only = 1\n"
            "\n"
            "[noarch]\n"
            "baseurl = " +
            versions +
            "\n"
            "arch = noarch\n"
            "\n"
            "[meta]\n"
            "baseurl = " +
            sample +
            "\n"
            "download-metadata = 1\n" +
            extra);
    }
};

// (gamma-1.0-1 has epoch 1.)
const std::set<std::string> kNewest = {"alpha-2.0-2.x86_64.rpm", "beta-0.5-1.noarch.rpm",
                                       "gamma-1.0-1.x86_64.rpm"};
const std::set<std::string> kNoarch = {"beta-0.1-1.noarch.rpm", "beta-0.2-1.noarch.rpm",
                                       "beta-0.3-1.noarch.rpm", "beta-0.4-1.noarch.rpm",
                                       "beta-0.5-1.noarch.rpm"};

// Every line of `text` starts with "JOB: " for one of `jobs`, but the run's closing line
// ("rpmirror: jobs: ..."), which may end it.
void expect_job_lines(const std::string& text, const std::set<std::string>& jobs) {
    std::vector<std::string> lines = lines_of(text);
    if (!lines.empty() && lines.back().starts_with("rpmirror: jobs: ")) {
        lines.pop_back();
    }
    for (const std::string& line : lines) {
        const std::string job = line.substr(0, line.find(": "));
        EXPECT_TRUE(jobs.contains(job) && line.size() > job.size() + 2) << "line: " << line;
    }
}

TEST_F(JobModeTest, ThreeJobsWithDifferentOptionsEachGiveTheirTree) {
    const auto config = three_jobs();
    const auto result = run_sync({"--config-file", config.string()});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_EQ(rpms_under(mirror() / "newest"), kNewest);
    EXPECT_EQ(rpms_under(mirror() / "noarch"), kNoarch);
    EXPECT_EQ(rpms_under(mirror() / "meta"), rpms_under(test_repo("sample-repo")));
    EXPECT_TRUE(std::filesystem::exists(mirror() / "meta" / "repodata" / "repomd.xml"));
    EXPECT_FALSE(std::filesystem::exists(mirror() / "newest" / "repodata"));
    // Not under <destination>/<job>/<job>: a job's directory is the repository itself.
    EXPECT_FALSE(std::filesystem::exists(mirror() / "newest" / "newest"));
    const std::set<std::string> jobs = {"newest", "noarch", "meta"};
    expect_job_lines(result.out, jobs);
    expect_job_lines(result.err, jobs);
    for (const std::string& job : jobs) {
        EXPECT_NE(result.out.find(job + ": started: "), std::string::npos) << result.out;
        EXPECT_NE(result.out.find(job + ": downloaded "), std::string::npos) << result.out;
    }
}

// A job run ends with one line counting its jobs (succeeded: changed or unchanged; failed), and
// the JSON report counts them too.
TEST_F(JobModeTest, RunEndsWithALineCountingSucceededUnchangedAndFailedJobs) {
    const auto config = three_jobs("\n[down]\nbaseurl = http://127.0.0.1:1/\nretries = 1\n");
    const auto json = tmp_ / "report.json";
    const auto first = run_sync({"--config-file", config.string(), "--json", json.string()});
    ASSERT_EQ(first.exit_code, 1) << first.out << first.err;
    ASSERT_FALSE(lines_of(first.out).empty()) << first.err;
    EXPECT_EQ(lines_of(first.out).back(),
              "rpmirror: jobs: 3 succeeded (3 changed, 0 unchanged), 1 failed");
    const auto counted = nlohmann::json::parse(read_file(json))["jobs"];
    EXPECT_EQ(counted,
              nlohmann::json({{"succeeded", 3}, {"changed", 3}, {"unchanged", 0}, {"failed", 1}}));

    // Again, the down job left out: nothing changed upstream, every job a no-op.
    const auto again = run_sync({"--config-file", config.string(), "--job", "newest,noarch,meta"});
    ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
    ASSERT_FALSE(lines_of(again.out).empty()) << again.err;
    EXPECT_EQ(lines_of(again.out).back(),
              "rpmirror: jobs: 3 succeeded (0 changed, 3 unchanged), 0 failed");
    // -q: errors only; the failed job's own line says it failed.
    const auto quiet = run_sync({"--config-file", config.string(), "-q"});
    EXPECT_EQ(quiet.exit_code, 1);
    EXPECT_EQ(quiet.out.find("rpmirror: jobs: "), std::string::npos) << quiet.out;
    EXPECT_NE(quiet.err.find("down: FAILED: "), std::string::npos) << quiet.err;
}

// The metrics file: --metrics-file, else [main]'s metrics-file, else $RPMIRROR_METRICS_FILE (the
// systemd unit's default, which must not hide [main]'s).
TEST_F(JobModeTest, MetricsFileFromTheEnvironmentIsTheDefaultThatMainAndTheOptionOverride) {
    const std::string sample = serve(test_repo("sample-repo")).url("/");
    const auto from_env = tmp_ / "env" / "rpmirror.prom";
    const auto from_main = tmp_ / "main" / "rpmirror.prom";
    const auto from_option = tmp_ / "option" / "rpmirror.prom";
    for (const auto& file : {from_env, from_main, from_option}) {
        std::filesystem::create_directories(file.parent_path());
    }
    const std::string job = "[sample]\nbaseurl = " + sample + "\n";
    const std::string destination = "[main]\ndestination = " + mirror().string() + "\n";
    const auto written = [](const std::filesystem::path& file) {
        return std::filesystem::exists(file) &&
               read_file(file).find("rpmirror_job_success{job=\"sample\"} 1") != std::string::npos;
    };
    ::setenv("RPMIRROR_METRICS_FILE", from_env.c_str(), 1);
    const auto env_only = run_sync({"--config-file", write_config(destination + job).string()});
    EXPECT_EQ(env_only.exit_code, 0) << env_only.err;
    EXPECT_TRUE(written(from_env));
    std::filesystem::remove(from_env);

    const auto main_config =
        write_config(destination + "metrics-file = " + from_main.string() + "\n" + job);
    const auto with_main = run_sync({"--config-file", main_config.string()});
    EXPECT_EQ(with_main.exit_code, 0) << with_main.err;
    EXPECT_TRUE(written(from_main));
    EXPECT_FALSE(std::filesystem::exists(from_env)) << "[main] overrides the environment";
    std::filesystem::remove(from_main);

    const auto with_option =
        run_sync({"--config-file", main_config.string(), "--metrics-file", from_option.string()});
    ::unsetenv("RPMIRROR_METRICS_FILE");
    EXPECT_EQ(with_option.exit_code, 0) << with_option.err;
    EXPECT_TRUE(written(from_option));
    EXPECT_FALSE(std::filesystem::exists(from_main)) << "--metrics-file overrides [main]";
    EXPECT_FALSE(std::filesystem::exists(from_env));
}

// What a job's progress line draws: files and bytes done of the totals its downloads announced
// (ProgressSink::run_started), ending at every package and every byte of them.
TEST_F(JobModeTest, ProgressCountsFilesAndBytesOfTheirTotals) {
    const std::filesystem::path upstream = test_repo("sample-repo");
    const auto config = write_config("[sample]\nbaseurl = " + serve(upstream).url("/") +
                                     "\ndestination = " + mirror().string() + "\n");
    std::vector<ConfigWarning> warnings;
    auto loaded = load_jobs_config({config, {}}, warnings);
    ASSERT_TRUE(loaded) << loaded.error().to_string();
    struct Recorder final : JobEvents {
        void progress(const JobConfig&, const TransferProgress& now) override {
            const std::lock_guard lock(mutex);
            EXPECT_LE(now.files_done, now.files_total);
            last = now;
            ++calls;
        }
        std::mutex mutex;
        TransferProgress last;
        std::size_t calls = 0;
    } recorder;
    const std::vector<JobOutcome> outcomes = run_jobs(loaded->jobs, {}, &recorder);
    ASSERT_EQ(outcomes.size(), 1U);
    ASSERT_TRUE(outcomes[0].ok()) << format_summary(outcomes[0].report);
    std::uint64_t bytes = 0;
    for (const auto& [path, digest] : package_digests(upstream)) {
        bytes += std::filesystem::file_size(upstream / path);
    }
    EXPECT_GT(recorder.calls, 0U);
    EXPECT_EQ(recorder.last.files_total, package_digests(upstream).size());
    EXPECT_EQ(recorder.last.files_done, recorder.last.files_total);
    EXPECT_EQ(recorder.last.bytes_total, bytes);
    EXPECT_EQ(recorder.last.bytes_done, bytes);
}

TEST_F(JobModeTest, SnapshotKeyTakesSnapshotsOfItsJobAndPrunes) {
    // (The extra keys belong to the last job, [meta].)
    auto config = three_jobs("snapshot = first\nkeep-snapshots = 1\n");
    auto result = run_sync({"--config-file", config.string()});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    const auto snapshots = mirror() / "snapshots";
    EXPECT_TRUE(std::filesystem::exists(snapshots / "meta" / "first" / "repodata" / "repomd.xml"));
    EXPECT_EQ(rpms_under(snapshots / "meta" / "first"), rpms_under(test_repo("sample-repo")));
    EXPECT_FALSE(std::filesystem::exists(snapshots / "newest"));
    EXPECT_FALSE(std::filesystem::exists(snapshots / "noarch"));
    EXPECT_NE(result.out.find("meta: snapshot first: "), std::string::npos) << result.out;
    expect_job_lines(result.out, {"newest", "noarch", "meta"});

    config = three_jobs("snapshot = second\nkeep-snapshots = 1\n");
    result = run_sync({"--config-file", config.string()});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    std::set<std::string> kept;
    for (const auto& entry : std::filesystem::directory_iterator(snapshots / "meta")) {
        kept.insert(entry.path().filename().string());
    }
    EXPECT_EQ(kept, std::set<std::string>{"second"});
    EXPECT_NE(result.out.find("meta: removed snapshot first"), std::string::npos) << result.out;
}

TEST_F(JobModeTest, SnapshotThatCannotBeTakenFailsItsJob) {
    // A snapshot directory that is a file: the job synced but its snapshot fails, exit 1.
    TempDir::write_at(tmp_ / "not-a-dir", "x");
    const auto config =
        three_jobs("snapshot = 1\nsnapshot-dir = " + (tmp_ / "not-a-dir").string() + "\n");
    const auto result = run_sync({"--config-file", config.string()});
    ASSERT_EQ(result.exit_code, 1) << result.out << result.err;
    EXPECT_EQ(rpms_under(mirror() / "meta"), rpms_under(test_repo("sample-repo")));
    EXPECT_NE(result.err.find("meta: snapshot: "), std::string::npos) << result.err;
    expect_job_lines(result.err, {"newest", "noarch", "meta"});
}

TEST_F(JobModeTest, RefusedConnectionsFailOneJobAndTheOthersComplete) {
    const auto config = three_jobs("\n[down]\nbaseurl = http://127.0.0.1:1/\nretries = 1\n");
    const auto json = tmp_ / "report.json";
    const auto result = run_sync({"--config-file", config.string(), "--json", json.string()});
    ASSERT_EQ(result.exit_code, 1) << result.out << result.err;
    EXPECT_EQ(rpms_under(mirror() / "newest"), kNewest);
    EXPECT_EQ(rpms_under(mirror() / "noarch"), kNoarch);
    EXPECT_EQ(rpms_under(mirror() / "meta"), rpms_under(test_repo("sample-repo")));
    EXPECT_NE(result.err.find("down: FAILED: "), std::string::npos) << result.err;
    expect_job_lines(result.out, {"newest", "noarch", "meta", "down"});
    expect_job_lines(result.err, {"newest", "noarch", "meta", "down"});
    const auto report = nlohmann::json::parse(read_file(json));
    EXPECT_EQ(report["exit_code"], 1);
    ASSERT_EQ(report["repositories"].size(), 4U);
    std::map<std::string, bool> ok;
    for (const auto& entry : report["repositories"]) {
        ok[entry["job"].get<std::string>()] = entry["ok"].get<bool>();
    }
    EXPECT_EQ(ok, (std::map<std::string, bool>{
                      {"newest", true}, {"noarch", true}, {"meta", true}, {"down", false}}));
}

TEST_F(JobModeTest, BadValueFailsItsJobOnlyAndUnknownKeyWarns) {
    const auto config =
        three_jobs("\n[typo]\nbaseurl = http://127.0.0.1:1/\nnewest-only = perhaps\nfoo = 1\n");
    const auto result = run_sync({"--config-file", config.string(), "--job", "typo,newest"});
    ASSERT_EQ(result.exit_code, 1) << result.out << result.err;
    EXPECT_EQ(rpms_under(mirror() / "newest"), kNewest);
    EXPECT_NE(result.err.find(config.string() + ":19: job 'typo': newest-only: invalid boolean"),
              std::string::npos)
        << result.err;
    EXPECT_NE(result.err.find(config.string() + ":20: unknown key 'foo' in job 'typo'"),
              std::string::npos)
        << result.err;
}

TEST_F(JobModeTest, JobGlobsChooseASubsetAndAGlobMatchingNothingIsUsage) {
    const auto config = three_jobs();
    const auto result =
        run_sync({"--config-file", config.string(), "--job", "new*", "--job", "meta"});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_EQ(rpms_under(mirror() / "newest"), kNewest);
    EXPECT_TRUE(rpms_under(mirror() / "meta").size() > 0);
    EXPECT_FALSE(std::filesystem::exists(mirror() / "noarch"));

    const auto none = run_sync({"--config-file", config.string(), "--job", "nosuch*"});
    EXPECT_EQ(none.exit_code, 2) << none.err;
    EXPECT_NE(none.err.find("nosuch*"), std::string::npos) << none.err;
}

// Four jobs for two workers: by the shard function, newest and meta are shard 1 of 2, one and
// two shard 2 (pinned in tests/unit/config/test_shard.cpp's way: SHA-256 + jump hash).
TEST_F(JobModeTest, TwoShardWorkersSyncDisjointJobsCoveringAll) {
    const std::string versions = serve(test_repo("versions-repo")).url("/");
    const std::string sample = serve(test_repo("sample-repo")).url("/");
    const auto config = write_config(
        "[main]\ndestination = " + mirror().string() + "\n[newest]\nbaseurl = " + versions +
        "\nnewest-only = 1\n[meta]\nbaseurl = " + sample + "\n[one]\nbaseurl = " + versions +
        "\narch = noarch\n[two]\nbaseurl = " + sample + "\n");
    const auto first_json = tmp_ / "first.json";
    const auto first = run_sync(
        {"--config-file", config.string(), "--shard", "1/2", "-v", "--json", first_json.string()});
    ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
    EXPECT_EQ(rpms_under(mirror() / "newest"), kNewest);
    EXPECT_EQ(rpms_under(mirror() / "meta"), rpms_under(test_repo("sample-repo")));
    EXPECT_FALSE(std::filesystem::exists(mirror() / "one"));
    EXPECT_FALSE(std::filesystem::exists(mirror() / "two"));
    EXPECT_NE(first.err.find("rpmirror: shard 1/2: skipped 2 jobs of other workers: one, two\n"),
              std::string::npos)
        << first.err;
    // The report counts only this worker's jobs.
    const auto report = nlohmann::json::parse(read_file(first_json));
    ASSERT_EQ(report["repositories"].size(), 2U) << report.dump();
    EXPECT_EQ(report["repositories"][0]["job"], "newest");
    EXPECT_EQ(report["repositories"][1]["job"], "meta");

    const auto second = run_sync({"--config-file", config.string(), "--shard", "2/2"});
    ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
    EXPECT_EQ(rpms_under(mirror() / "one"), kNoarch);
    EXPECT_EQ(rpms_under(mirror() / "two"), rpms_under(test_repo("sample-repo")));
    expect_job_lines(second.out, {"one", "two"});
    EXPECT_EQ(second.err.find("skipped"), std::string::npos) << "only with -v: " << second.err;
}

TEST_F(JobModeTest, ShardFromMainAndInvalidShardIsUsage) {
    const auto config =
        three_jobs("[two]\nbaseurl = " + serve(test_repo("sample-repo")).url("/") + "\n");
    // [main] shard = 2/2: of newest, noarch, meta (all shard 1) and two, only two runs.
    std::string text = read_file(config);
    text.replace(text.find("[main]\n"), 7, "[main]\nshard = 2/2\n");
    write_config(text);
    const auto from_main = run_sync({"--config-file", config.string()});
    ASSERT_EQ(from_main.exit_code, 0) << from_main.out << from_main.err;
    EXPECT_TRUE(std::filesystem::exists(mirror() / "two"));
    EXPECT_FALSE(std::filesystem::exists(mirror() / "newest"));
    // --shard overrides it.
    const auto overridden = run_sync({"--config-file", config.string(), "--shard", "1/2"});
    ASSERT_EQ(overridden.exit_code, 0) << overridden.out << overridden.err;
    EXPECT_EQ(rpms_under(mirror() / "newest"), kNewest);

    const auto invalid = run_sync({"--config-file", config.string(), "--shard", "3/2"});
    EXPECT_EQ(invalid.exit_code, 2) << invalid.err;
    EXPECT_NE(invalid.err.find("--shard: invalid shard '3/2'"), std::string::npos) << invalid.err;
    text.replace(text.find("shard = 2/2"), 11, "shard = two");
    write_config(text);
    const auto bad_main = run_sync({"--config-file", config.string()});
    EXPECT_EQ(bad_main.exit_code, 2) << bad_main.err;
    EXPECT_NE(bad_main.err.find(config.string() + ": line 2: [main]: shard: invalid shard 'two'"),
              std::string::npos)
        << bad_main.err;
}

TEST_F(JobModeTest, ShardSplitsTheRepositoriesOfDnfMode) {
    const std::string sample = serve(test_repo("sample-repo")).url("/");
    // r2 is shard 1 of 2, r1 and r3 shard 2.
    const std::vector<std::string> repos = {
        "--repofrompath", "r1," + sample, "--repofrompath", "r2," + sample, "--repofrompath",
        "r3," + sample,   "--repo",       "r1,r2,r3",       "-p",           mirror().string()};
    std::vector<std::string> first = repos;
    first.insert(first.end(), {"--shard", "1/2", "-v"});
    const auto one = sync(first);
    ASSERT_EQ(one.exit_code, 0) << one.out << one.err;
    EXPECT_TRUE(std::filesystem::exists(mirror() / "r2"));
    EXPECT_FALSE(std::filesystem::exists(mirror() / "r1"));
    EXPECT_FALSE(std::filesystem::exists(mirror() / "r3"));
    EXPECT_NE(one.err.find("shard 1/2: skipped 2 repositories of other workers: r1, r3"),
              std::string::npos)
        << one.err;
    std::vector<std::string> second = repos;
    second.insert(second.end(), {"--shard", "2/2"});
    const auto two = sync(second);
    ASSERT_EQ(two.exit_code, 0) << two.out << two.err;
    EXPECT_EQ(rpms_under(mirror() / "r1"), rpms_under(test_repo("sample-repo")));
    EXPECT_EQ(rpms_under(mirror() / "r3"), rpms_under(test_repo("sample-repo")));

    std::vector<std::string> invalid = repos;
    invalid.insert(invalid.end(), {"--shard", "0/2"});
    const auto refused = sync(invalid);
    EXPECT_EQ(refused.exit_code, 2) << refused.err;
    EXPECT_NE(refused.err.find("--shard: invalid shard '0/2'"), std::string::npos) << refused.err;
}

TEST_F(JobModeTest, OptionsThatBelongInTheFileAreUsageErrors) {
    const auto config = three_jobs();
    for (const std::vector<std::string>& option :
         {std::vector<std::string>{"-p", mirror().string()},
          {"--repo", "x"},
          {"-n"},
          {"--delete"},
          {"-a", "x86_64"},
          {"--repofrompath", "x,/tmp"},
          {"--download-metadata"}}) {
        std::vector<std::string> args = {"--config-file", config.string()};
        args.insert(args.end(), option.begin(), option.end());
        const auto result = run_sync(args);
        EXPECT_EQ(result.exit_code, 2) << option.front() << ": " << result.err;
        EXPECT_NE(result.err.find("belong in the configuration file"), std::string::npos)
            << result.err;
    }
    EXPECT_FALSE(std::filesystem::exists(mirror()));
    const auto missing = run_sync({"--config-file", (tmp_ / "nowhere.conf").string()});
    EXPECT_EQ(missing.exit_code, 2) << missing.err;
}

TEST_F(JobModeTest, SigintStopsEveryRunningJobAndStartsNoOther) {
    // repomd.xml trickles in (2 bytes a second): both running jobs are mid-transfer when the
    // signal comes; the third job waits for a slot that never frees before it.
    FaultServer slow(test_repo("sample-repo"),
                     {{"paths", {{"/repodata/repomd.xml", {{{"trickle", {1, 0.5}}}}}}}},
                     tmp_.path());
    const std::string fast = serve(test_repo("sample-repo")).url("/");
    const auto config = write_config(
        "[main]\ndestination = " + mirror().string() +
        "\ntimeout = 600\nparallel-jobs = 2\n[slow1]\nbaseurl = " + slow.url("/") +
        "\n[slow2]\nbaseurl = " + slow.url("/") + "\n[later]\nbaseurl = " + fast + "\n");
    RunningCommand running(rpmirror_sync_argv({"--config-file", config.string()}),
                           tmp_ / "interrupted");
    ASSERT_TRUE(wait_until([&] { return slow.requests_for("/repodata/repomd.xml").size() == 2; }))
        << running.err();
    running.signal(SIGINT);
    std::optional<int> exit_code;
    ASSERT_TRUE(wait_until([&] {
        exit_code = running.try_wait();
        return exit_code.has_value();
    })) << "still running after SIGINT";
    expect_no_sanitizer_report(running.err());
    EXPECT_EQ(*exit_code, 130) << running.out() << running.err();
    EXPECT_NE(running.err().find("slow1: FAILED: "), std::string::npos) << running.err();
    EXPECT_NE(running.err().find("slow2: FAILED: "), std::string::npos) << running.err();
    EXPECT_NE(running.err().find("later: not started: interrupted"), std::string::npos)
        << running.err();
    EXPECT_FALSE(std::filesystem::exists(mirror() / "later"));
    expect_job_lines(running.out(), {"slow1", "slow2", "later"});
    expect_job_lines(running.err(), {"slow1", "slow2", "later"});
}

// Two jobs on a server whose first request on each port waits for the other port's first
// request: they meet only when the jobs run at the same time.
class JobConcurrencyTest : public JobModeTest {
  protected:
    // Starts the rendezvous server (held requests give up after `timeout` seconds) and writes a
    // configuration of two jobs, one per port.
    std::filesystem::path rendezvous_jobs(int timeout) {
        const auto script = source_root() / "tests" / "integration" / "rendezvous_server.py";
        server_ = ChildProcess(
            {"python3", script.string(), "--root", test_repo("versions-repo").string(), "--root",
             test_repo("sample-repo").string(), "--timeout", std::to_string(timeout)},
            /*capture_stdout=*/true);
        std::istringstream ports(server_.read_line(std::chrono::seconds(20)));
        int first = 0;
        int second = 0;
        ports >> first >> second;
        if (first == 0 || second == 0) {
            throw std::runtime_error("rendezvous_server.py did not report its ports");
        }
        const auto url = [](int port) { return "http://127.0.0.1:" + std::to_string(port) + "/"; };
        return write_config("[main]\ndestination = " + mirror().string() +
                            "\nretries = 1\n[one]\nbaseurl = " + url(first) +
                            "\n[two]\nbaseurl = " + url(second) + "\n");
    }

    ChildProcess server_;
};

TEST_F(JobConcurrencyTest, TwoParallelJobsRunAtTheSameTime) {
    // 120 s: only ever reached when the jobs do not run concurrently (the test then fails).
    const auto config = rendezvous_jobs(120);
    const auto result = run_sync({"--config-file", config.string(), "--parallel-jobs", "2"});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_EQ(rpms_under(mirror() / "one"), rpms_under(test_repo("versions-repo")));
    EXPECT_EQ(rpms_under(mirror() / "two"), rpms_under(test_repo("sample-repo")));
}

TEST_F(JobConcurrencyTest, OneJobAtATimeNeverMeets) {
    // One after the other, the first job's first request waits in vain; the second one finds
    // the first port already visited. (The timeout only bounds how long the failure takes.)
    const auto config = rendezvous_jobs(2);
    const auto result = run_sync({"--config-file", config.string(), "--parallel-jobs", "1"});
    EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
    EXPECT_NE(result.err.find("one: FAILED: "), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("repomd.xml: HTTP 503"), std::string::npos)
        << "the held request gave up: " << result.err;
    EXPECT_EQ(rpms_under(mirror() / "two"), rpms_under(test_repo("sample-repo")));
}

}  // namespace
}  // namespace rpmirror::test
