// The Prometheus metrics file: read back by prometheus_client's parser, values asserted; written
// by rename (nothing else left in the directory), merged with the previous file.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "report/metrics.hpp"
#include "support/child_process.hpp"
#include "support/prometheus.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror {
namespace {

namespace stdfs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;
using std::chrono::system_clock;

const system_clock::time_point kFirstRun{seconds(1'700'000'000)};
const system_clock::time_point kSecondRun{seconds(1'700'086'400)};

// A job that ran from `started` for 2.5 s and downloaded 3 packages (12345 bytes), kept 2 and
// deleted 1 of the 5 it selected.
JobOutcome changed_job(const std::string& name, system_clock::time_point started) {
    JobOutcome outcome;
    outcome.job = name;
    outcome.report.repo_id = name;
    outcome.report.selected = 5;
    outcome.report.downloaded = 3;
    outcome.report.bytes_downloaded = 12345;
    outcome.report.kept = 2;
    outcome.report.deleted = {"Packages/old-1.0-1.noarch.rpm"};
    outcome.report.metadata_published = true;
    outcome.started = started;
    outcome.finished = started + milliseconds(2500);
    return outcome;
}

// A job whose repository failed (one package could not be fetched).
JobOutcome failed_job(const std::string& name, system_clock::time_point started) {
    JobOutcome outcome = changed_job(name, started);
    outcome.report.downloaded = 2;
    outcome.report.failures.push_back({"foo-1.0-1.x86_64", "404", {}});
    return outcome;
}

// A run that found nothing to do.
JobOutcome noop_job(const std::string& name, system_clock::time_point started) {
    JobOutcome outcome;
    outcome.job = name;
    outcome.report.repo_id = name;
    outcome.report.noop = true;
    outcome.report.selected = 7;
    outcome.report.kept = 7;
    outcome.started = started;
    outcome.finished = started + milliseconds(40);
    return outcome;
}

std::vector<std::string> names_in(const stdfs::path& dir) {
    std::vector<std::string> names;
    for (const auto& entry : stdfs::directory_iterator(dir)) {
        names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
}

class Metrics : public ::testing::Test {
  protected:
    test::ParsedMetrics write_and_parse(const std::vector<JobOutcome>& outcomes) {
        const auto written = write_metrics_file(file_, outcomes);
        EXPECT_TRUE(written) << written.error().to_string();
        return test::parse_metrics_file(file_, tmp_ / "parse");
    }

    test::TempDir tmp_;
    stdfs::path dir_ = tmp_ / "textfile";
    stdfs::path file_ = dir_ / "rpmirror.prom";
    void SetUp() override { stdfs::create_directories(dir_); }
};

TEST_F(Metrics, FileParsesWithPrometheusClientAndHoldsEachJobsValues) {
    const mode_t old_umask = ::umask(077);  // the file is 0644 whatever the umask
    const auto parsed =
        write_and_parse({changed_job("base", kFirstRun), failed_job("updates", kFirstRun),
                         noop_job("extras", kFirstRun)});
    ::umask(old_umask);

    for (const char* family :
         {"rpmirror_job_last_run_timestamp_seconds", "rpmirror_job_last_success_timestamp_seconds",
          "rpmirror_job_duration_seconds", "rpmirror_job_success", "rpmirror_job_up_to_date",
          "rpmirror_job_downloaded_bytes", "rpmirror_job_packages",
          "rpmirror_job_selected_packages"}) {
        ASSERT_EQ(parsed.types.count(family), 1U) << family;
        EXPECT_EQ(parsed.types.at(family), "gauge") << family;
        EXPECT_FALSE(parsed.help.at(family).empty()) << family;
    }
    const auto& samples = parsed.samples;
    EXPECT_EQ(samples.size(), 3U * 11U);
    EXPECT_DOUBLE_EQ(samples.at("rpmirror_job_last_run_timestamp_seconds{job=base}"),
                     1'700'000'002.5);
    EXPECT_DOUBLE_EQ(samples.at("rpmirror_job_last_success_timestamp_seconds{job=base}"),
                     1'700'000'002.5);
    EXPECT_DOUBLE_EQ(samples.at("rpmirror_job_duration_seconds{job=base}"), 2.5);
    EXPECT_EQ(samples.at("rpmirror_job_success{job=base}"), 1);
    EXPECT_EQ(samples.at("rpmirror_job_up_to_date{job=base}"), 0);
    EXPECT_EQ(samples.at("rpmirror_job_downloaded_bytes{job=base}"), 12345);
    EXPECT_EQ(samples.at("rpmirror_job_packages{job=base,result=downloaded}"), 3);
    EXPECT_EQ(samples.at("rpmirror_job_packages{job=base,result=kept}"), 2);
    EXPECT_EQ(samples.at("rpmirror_job_packages{job=base,result=deleted}"), 1);
    EXPECT_EQ(samples.at("rpmirror_job_packages{job=base,result=failed}"), 0);
    EXPECT_EQ(samples.at("rpmirror_job_selected_packages{job=base}"), 5);
    // A failed job that never succeeded before: success 0, last success 0 ("never").
    EXPECT_EQ(samples.at("rpmirror_job_success{job=updates}"), 0);
    EXPECT_EQ(samples.at("rpmirror_job_up_to_date{job=updates}"), 0);
    EXPECT_EQ(samples.at("rpmirror_job_last_success_timestamp_seconds{job=updates}"), 0);
    EXPECT_EQ(samples.at("rpmirror_job_packages{job=updates,result=failed}"), 1);
    // A no-op: up to date.
    EXPECT_EQ(samples.at("rpmirror_job_success{job=extras}"), 1);
    EXPECT_EQ(samples.at("rpmirror_job_up_to_date{job=extras}"), 1);
    EXPECT_EQ(samples.at("rpmirror_job_packages{job=extras,result=kept}"), 7);
    EXPECT_DOUBLE_EQ(samples.at("rpmirror_job_duration_seconds{job=extras}"), 0.04);

    // Renamed into place: nothing but the file is left, and node_exporter (another user) can
    // read it.
    EXPECT_EQ(names_in(dir_), std::vector<std::string>{"rpmirror.prom"});
    struct stat st {};
    ASSERT_EQ(::stat(file_.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0644U);
}

TEST_F(Metrics, JobsOfEarlierRunsKeepTheirLinesAndAFailedJobKeepsItsLastSuccess) {
    write_and_parse({changed_job("base", kFirstRun), noop_job("extras", kFirstRun)});
    const std::string first = test::read_file(file_);

    const auto parsed = write_and_parse({failed_job("base", kSecondRun)});

    const auto& samples = parsed.samples;
    EXPECT_DOUBLE_EQ(samples.at("rpmirror_job_last_run_timestamp_seconds{job=base}"),
                     1'700'086'402.5);
    EXPECT_DOUBLE_EQ(samples.at("rpmirror_job_last_success_timestamp_seconds{job=base}"),
                     1'700'000'002.5);
    EXPECT_EQ(samples.at("rpmirror_job_success{job=base}"), 0);
    EXPECT_EQ(samples.at("rpmirror_job_packages{job=base,result=failed}"), 1);
    // extras did not run: every line as the first run wrote it.
    std::vector<std::string> extras_before;
    std::vector<std::string> extras_after;
    for (const auto& [text, lines] :
         {std::pair{first, &extras_before}, std::pair{test::read_file(file_), &extras_after}}) {
        for (const std::string& line : test::lines_of(text)) {
            if (line.find("job=\"extras\"") != std::string::npos) {
                lines->push_back(line);
            }
        }
    }
    EXPECT_EQ(extras_before.size(), 11U);
    EXPECT_EQ(extras_after, extras_before);

    // It succeeds again: its last success moves on.
    const auto again = write_and_parse({noop_job("base", kSecondRun + seconds(60))});
    EXPECT_DOUBLE_EQ(again.samples.at("rpmirror_job_last_success_timestamp_seconds{job=base}"),
                     1'700'086'460.04);
    EXPECT_EQ(again.samples.at("rpmirror_job_up_to_date{job=base}"), 1);
    EXPECT_EQ(names_in(dir_), std::vector<std::string>{"rpmirror.prom"});
}

TEST_F(Metrics, JobErrorsOutsideTheReportMakeItFailed) {
    JobOutcome hook_failed = changed_job("base", kFirstRun);
    hook_failed.errors.push_back("base: exec-on-change 'false' failed: exit status 1");
    const auto parsed = write_and_parse({hook_failed});
    EXPECT_EQ(parsed.samples.at("rpmirror_job_success{job=base}"), 0);
    EXPECT_EQ(parsed.samples.at("rpmirror_job_last_success_timestamp_seconds{job=base}"), 0);
}

TEST_F(Metrics, LabelValuesAreEscapedAndSurviveTheMerge) {
    const std::string odd = "we\"ird\\na\nme";
    write_and_parse({changed_job(odd, kFirstRun)});
    const auto parsed = write_and_parse({noop_job("base", kSecondRun)});
    EXPECT_EQ(parsed.samples.at("rpmirror_job_success{job=" + odd + "}"), 1);
    EXPECT_EQ(parsed.samples.at("rpmirror_job_packages{job=" + odd + ",result=downloaded}"), 3);
    EXPECT_EQ(parsed.samples.at("rpmirror_job_success{job=base}"), 1);
    EXPECT_NE(test::read_file(file_).find("job=\"we\\\"ird\\\\na\\nme\""), std::string::npos)
        << test::read_file(file_);
}

TEST_F(Metrics, OrderIsFixedWhateverTheOrderOfTheJobs) {
    const std::vector<JobOutcome> forward{changed_job("alpha", kFirstRun),
                                          noop_job("beta", kFirstRun)};
    const std::vector<JobOutcome> backward{forward[1], forward[0]};
    const std::string text = format_metrics("", forward);
    EXPECT_EQ(format_metrics("", backward), text);
    // Re-merging a file with itself changes nothing.
    EXPECT_EQ(format_metrics(text, {}), text);
    const std::size_t alpha = text.find("rpmirror_job_success{job=\"alpha\"}");
    const std::size_t beta = text.find("rpmirror_job_success{job=\"beta\"}");
    ASSERT_NE(alpha, std::string::npos);
    EXPECT_LT(alpha, beta);
}

TEST_F(Metrics, ForeignLinesOfThePreviousFileAreDropped) {
    test::TempDir::write_at(file_,
                            "# a comment\nnode_load1 3\nrpmirror_job_success 1\n"
                            "rpmirror_job_success{job=\"old\"} 1\ngarbage{\n");
    const auto parsed = write_and_parse({noop_job("base", kFirstRun)});
    EXPECT_EQ(parsed.samples.at("rpmirror_job_success{job=old}"), 1);
    EXPECT_EQ(parsed.samples.count("node_load1{}"), 0U);
    EXPECT_EQ(parsed.samples.size(), 12U);  // 11 of base, 1 of old
}

TEST_F(Metrics, MissingDirectoryIsAnErrorNamingTheFile) {
    const stdfs::path file = tmp_ / "no-such-dir" / "rpmirror.prom";
    const auto written =
        write_metrics_file(file, std::vector<JobOutcome>{noop_job("a", kFirstRun)});
    ASSERT_FALSE(written);
    EXPECT_EQ(written.error().to_string(),
              file.string() + ": cannot write the metrics file: No such file or directory");
}

TEST_F(Metrics, UnwritableDirectoryIsAnErrorNamingTheFileAndLeavesItAsItWas) {
    write_and_parse({noop_job("base", kFirstRun)});
    const std::string before = test::read_file(file_);
    // Root writes anywhere: the check runs in a child that gives up root for nobody (65534).
    stdfs::permissions(tmp_.path(), stdfs::perms::owner_all | stdfs::perms::others_exec |
                                        stdfs::perms::group_exec);
    // Read-only for everyone (root is the exception, hence nobody).
    stdfs::permissions(dir_, stdfs::perms::owner_read | stdfs::perms::owner_exec |
                                 stdfs::perms::others_read | stdfs::perms::others_exec);
    const stdfs::path file = file_;
    const int outcome = test::run_in_child([&] {
        if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) {
            return 10;
        }
        if (::getuid() == 0) {
            return 11;
        }
        const std::vector<JobOutcome> outcomes{changed_job("base", kSecondRun)};
        const auto written = write_metrics_file(file, outcomes);
        if (written) {
            return 12;
        }
        return written.error().to_string() ==
                       file.string() + ": cannot write the metrics file: Permission denied"
                   ? 0
                   : 13;
    });
    stdfs::permissions(dir_, stdfs::perms::owner_all);
    EXPECT_EQ(outcome, 0);
    EXPECT_EQ(test::read_file(file_), before);
    EXPECT_EQ(names_in(dir_), std::vector<std::string>{"rpmirror.prom"});
}

}  // namespace
}  // namespace rpmirror
