// `rpmirror sync --metrics-file FILE --on-change CMD` end to end: real repositories over nginx,
// the metrics file read by prometheus_client's parser, hooks that write what they saw.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "integration/sync/sync_fixture.hpp"
#include "support/env_dump.hpp"
#include "support/prometheus.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

std::uintmax_t package_bytes(const fs::path& repo) {
    std::uintmax_t bytes = 0;
    for (const auto& entry : fs::directory_iterator(repo / "Packages")) {
        bytes += entry.file_size();
    }
    return bytes;
}

using SyncUnattended = SyncFixture;

TEST_F(SyncUnattended, MetricsFileHoldsEachRepositoryAsAJobAndANoOpIsUpToDate) {
    const fs::path upstream = test_repo("sample-repo");
    NginxServer& server = serve(upstream);
    const fs::path mirror = tmp_ / "mirror";
    const fs::path metrics = tmp_ / "textfile" / "rpmirror.prom";
    fs::create_directories(metrics.parent_path());
    const std::vector<std::string> args{
        "--repofrompath", "sample," + server.url("/"), "--repo",         "sample",        "-p",
        mirror.string(),  "--download-metadata",       "--metrics-file", metrics.string()};

    const CommandResult first = sync(args);
    ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
    const ParsedMetrics after_first = parse_metrics_file(metrics, tmp_ / "parse-1");
    const auto& samples = after_first.samples;
    EXPECT_EQ(samples.at("rpmirror_job_success{job=sample}"), 1);
    EXPECT_EQ(samples.at("rpmirror_job_up_to_date{job=sample}"), 0);
    EXPECT_EQ(samples.at("rpmirror_job_packages{job=sample,result=downloaded}"), 5);
    EXPECT_EQ(samples.at("rpmirror_job_packages{job=sample,result=kept}"), 0);
    EXPECT_EQ(samples.at("rpmirror_job_packages{job=sample,result=failed}"), 0);
    EXPECT_EQ(samples.at("rpmirror_job_selected_packages{job=sample}"), 5);
    EXPECT_EQ(samples.at("rpmirror_job_downloaded_bytes{job=sample}"),
              static_cast<double>(package_bytes(upstream)));
    const double first_success =
        samples.at("rpmirror_job_last_success_timestamp_seconds{job=sample}");
    EXPECT_EQ(first_success, samples.at("rpmirror_job_last_run_timestamp_seconds{job=sample}"));
    EXPECT_GT(first_success, 1.7e9);
    EXPECT_GE(samples.at("rpmirror_job_duration_seconds{job=sample}"), 0);
    // Renamed into place: the directory holds the file only.
    EXPECT_EQ(
        std::distance(fs::directory_iterator(metrics.parent_path()), fs::directory_iterator()), 1);

    const CommandResult second = sync(args);
    ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
    const auto again = parse_metrics_file(metrics, tmp_ / "parse-2").samples;
    EXPECT_EQ(again.at("rpmirror_job_success{job=sample}"), 1);
    EXPECT_EQ(again.at("rpmirror_job_up_to_date{job=sample}"), 1);
    EXPECT_EQ(again.at("rpmirror_job_packages{job=sample,result=downloaded}"), 0);
    EXPECT_EQ(again.at("rpmirror_job_packages{job=sample,result=kept}"), 5);
    EXPECT_EQ(again.at("rpmirror_job_downloaded_bytes{job=sample}"), 0);
    EXPECT_GE(again.at("rpmirror_job_last_success_timestamp_seconds{job=sample}"), first_success);
}

TEST_F(SyncUnattended, RepositoriesNotSyncedKeepTheirMetricsAndAFailureKeepsTheLastSuccess) {
    const fs::path upstream = test_repo("sample-repo");
    NginxServer& server = serve(upstream);
    const fs::path mirror = tmp_ / "mirror";
    const fs::path metrics = tmp_ / "rpmirror.prom";

    const CommandResult both = sync({"--repofrompath", "one," + server.url("/"), "--repofrompath",
                                     "two," + server.url("/"), "--repo", "one,two", "-p",
                                     mirror.string(), "--metrics-file", metrics.string()});
    ASSERT_EQ(both.exit_code, 0) << both.out << both.err;
    const auto before = parse_metrics_file(metrics, tmp_ / "parse-1").samples;
    EXPECT_EQ(before.at("rpmirror_job_success{job=one}"), 1);
    EXPECT_EQ(before.at("rpmirror_job_success{job=two}"), 1);

    // `one` now points at a path that is not a repository: it fails.
    const CommandResult failed =
        sync({"--repofrompath", "one," + server.url("/gone/"), "--repo", "one", "-p",
              mirror.string(), "--metrics-file", metrics.string()});
    ASSERT_EQ(failed.exit_code, 1) << failed.out << failed.err;
    const auto after = parse_metrics_file(metrics, tmp_ / "parse-2").samples;
    EXPECT_EQ(after.at("rpmirror_job_success{job=one}"), 0);
    EXPECT_EQ(after.at("rpmirror_job_last_success_timestamp_seconds{job=one}"),
              before.at("rpmirror_job_last_success_timestamp_seconds{job=one}"));
    EXPECT_GE(after.at("rpmirror_job_last_run_timestamp_seconds{job=one}"),
              before.at("rpmirror_job_last_run_timestamp_seconds{job=one}"));
    // `two` did not run: all its values as they were.
    for (const auto& [series, value] : before) {
        if (series.find("job=two") != std::string::npos) {
            EXPECT_EQ(after.at(series), value) << series;
        }
    }
}

TEST_F(SyncUnattended, UnwritableMetricsFileFailsTheRunNamingItAfterTheSync) {
    const fs::path upstream = test_repo("sample-repo");
    NginxServer& server = serve(upstream);
    const fs::path mirror = tmp_ / "mirror";
    const fs::path metrics = tmp_ / "no-such-dir" / "rpmirror.prom";

    const CommandResult result =
        sync({"--repofrompath", "sample," + server.url("/"), "--repo", "sample", "-p",
              mirror.string(), "--metrics-file", metrics.string(), "-q"});

    EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
    EXPECT_EQ(result.err, "rpmirror: " + metrics.string() +
                              ": cannot write the metrics file: No such file or directory\n");
    EXPECT_FALSE(fs::exists(metrics.parent_path()));
    // The mirror itself was synced.
    EXPECT_EQ(tree_digests(mirror / "sample"), package_digests(upstream));
}

TEST_F(SyncUnattended, OnChangeRunsAfterAChangeWithTheJobsEnvironmentAndNotAfterANoOp) {
    const fs::path upstream = test_repo("sample-repo");
    NginxServer& server = serve(upstream);
    const fs::path mirror = tmp_ / "mirror";
    const fs::path hook_dir = tmp_ / "hook";
    fs::create_directories(hook_dir);
    const std::vector<std::string> args{"--repofrompath",
                                        "sample," + server.url("/"),
                                        "--repo",
                                        "sample",
                                        "-p",
                                        mirror.string(),
                                        "--metadata-path",
                                        (tmp_ / "meta").string(),
                                        "--download-metadata",
                                        "--on-change",
                                        "env > '" + hook_dir.string() + "'/env-\"$RPMIRROR_JOB\""};

    const CommandResult first = sync(args);
    ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
    const fs::path dump = hook_dir / "env-sample";
    ASSERT_TRUE(fs::exists(dump)) << first.out << first.err;
    EXPECT_EQ(variables_of(read_file(dump)),
              (std::map<std::string, std::string>{
                  {"RPMIRROR_JOB", "sample"},
                  {"RPMIRROR_REPO_ID", "sample"},
                  {"RPMIRROR_DESTINATION", (mirror / "sample").string()},
                  {"RPMIRROR_METADATA_DIR", (tmp_ / "meta" / "sample").string()},
              }));
    // The hook ran after the metadata was published.
    EXPECT_TRUE(fs::exists(tmp_ / "meta" / "sample" / "repodata" / "repomd.xml"));

    fs::remove(dump);
    const CommandResult noop = sync(args);
    ASSERT_EQ(noop.exit_code, 0) << noop.out << noop.err;
    EXPECT_NE(noop.out.find("up to date"), std::string::npos) << noop.out;
    EXPECT_FALSE(fs::exists(dump)) << "the hook ran after a no-op";
}

TEST_F(SyncUnattended, FailingHookIsAnErrorLineEvenWithQuietAndFailsTheRunAndTheJob) {
    const fs::path upstream = test_repo("sample-repo");
    NginxServer& server = serve(upstream);
    const fs::path mirror = tmp_ / "mirror";
    const fs::path metrics = tmp_ / "rpmirror.prom";

    const CommandResult result =
        sync({"--repofrompath", "sample," + server.url("/"), "--repo", "sample", "-p",
              mirror.string(), "-q", "--on-change", "exit 7", "--metrics-file", metrics.string()});

    EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
    EXPECT_EQ(result.out, "");
    EXPECT_EQ(result.err, "sample: exec-on-change 'exit 7' failed: exit status 7\n");
    // The packages are there; the job counts as failed.
    EXPECT_EQ(tree_digests(mirror / "sample"), package_digests(upstream));
    const auto samples = parse_metrics_file(metrics, tmp_ / "parse").samples;
    EXPECT_EQ(samples.at("rpmirror_job_success{job=sample}"), 0);
    EXPECT_EQ(samples.at("rpmirror_job_packages{job=sample,result=downloaded}"), 5);
}

TEST_F(SyncUnattended, FailedSnapshotMakesTheJobFailedInTheMetrics) {
    const fs::path upstream = test_repo("sample-repo");
    NginxServer& server = serve(upstream);
    const fs::path metrics = tmp_ / "rpmirror.prom";

    // A snapshot needs the metadata: without --download-metadata it fails after the sync.
    const CommandResult result =
        sync({"--repofrompath", "sample," + server.url("/"), "--repo", "sample", "-p",
              (tmp_ / "mirror").string(), "--snapshot", "--metrics-file", metrics.string()});

    EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
    const auto samples = parse_metrics_file(metrics, tmp_ / "parse").samples;
    EXPECT_EQ(samples.at("rpmirror_job_success{job=sample}"), 0);
    EXPECT_EQ(samples.at("rpmirror_job_last_success_timestamp_seconds{job=sample}"), 0);
}

}  // namespace
}  // namespace rpmirror::test
