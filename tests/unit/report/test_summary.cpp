// The one-line summary of a repository's sync: every selected package accounted for.
#include <gtest/gtest.h>

#include "rpmirror/report/report.hpp"
#include "sync/sync.hpp"

namespace rpmirror {
namespace {

// A run stopped by a full disk: two packages failed, six were never started. The summary says
// so instead of counts that do not add up to what was selected.
TEST(Summary, PackagesNeverStartedAreCounted) {
    RepoSyncReport report;
    report.repo_id = "base";
    report.upstream_packages = 8;
    report.selected = 8;
    report.failures = {{"a-1-1.noarch", "No space left on device", {}},
                       {"b-1-1.noarch", "No space left on device", {}}};
    EXPECT_NE(format_summary(report).find("failed 2, not started 6 of 8 selected"),
              std::string::npos)
        << format_summary(report);

    report.failures.clear();
    report.downloaded = 5;
    report.kept = 3;
    EXPECT_EQ(format_summary(report).find("not started"), std::string::npos)
        << format_summary(report);
}

// The progress line counts files and bytes done of their totals, as dnf does ("(3/7)" and the
// total size), not only what is done.
TEST(Summary, ProgressLineShowsFilesAndBytesOfTheirTotals) {
    TransferProgress progress;
    progress.bytes_done = 163'900'000;
    progress.bytes_total = 327'800'000;
    progress.files_done = 3;
    progress.files_total = 7;
    const std::string line = format_progress_line("base", progress, 10.0);
    EXPECT_EQ(line,
              "base [############            ]  50% (3/7 files) 163.9 MB / 327.8 MB "
              "16.4 MB/s ETA 10s");
    // Nothing announced yet: zeros, no division by zero.
    EXPECT_EQ(format_progress_line("base", TransferProgress{}, 0.0),
              "base [                        ]   0% (0/0 files) 0.0 MB / 0.0 MB 0.0 MB/s ETA 0s");
}

// A job run's closing line: succeeded (changed, unchanged) and failed jobs.
TEST(Summary, JobsTallyCountsChangedUnchangedAndFailedJobs) {
    std::vector<JobOutcome> outcomes(4);
    outcomes[0].report.downloaded = 2;  // changed
    outcomes[1].report.noop = true;     // unchanged
    outcomes[2].report.error = Error{ErrorCode::Network, "refused", "http://x/", 0};
    outcomes[3].errors = {"rpmirror.conf:3: job 'd': parallel: 'x' is not a number"};
    const JobsTally tally = tally_jobs(outcomes);
    EXPECT_EQ(format_jobs_tally(tally), "jobs: 2 succeeded (1 changed, 1 unchanged), 2 failed");
}

}  // namespace
}  // namespace rpmirror
