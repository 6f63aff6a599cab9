// The report stage: what a sync tells its user. One line per failure, one summary line per
// repository, a machine-readable JSON report, and a progress bar for terminals.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/download/download_options.hpp"
#include "rpmirror/sync/job.hpp"
#include "rpmirror/sync/sync_report.hpp"

namespace rpmirror {

// Returns the summary line of one repository, e.g.
// "base: downloaded 12 files / 34.5 MB in 1.2 s at 28.7 MB/s, kept 1988, resumed 0, deleted 0,
// failed 0" (or "base: up to date (no-op) ..." / "base: FAILED: <error>").
std::string format_summary(const RepoSyncReport& report);

// Returns one line per failed package ("base: foo-1.0-1.x86_64: <reason>") followed by an
// indented line per URL tried, and one line per warning ("base: warning: ...").
std::vector<std::string> format_problems(const RepoSyncReport& report);

// Returns the JSON report of a run: {"exit_code": N, "repositories": [{...}, ...]} with the same
// facts as the summary and problem lines (sizes in bytes, times in seconds).
std::string format_json_report(std::span<const RepoSyncReport> reports, int exit_code);

// How the jobs of a job run ended: `succeeded` (ok()), of them `changed` (what the mirror serves
// changed) and `unchanged`, and `failed`.
struct JobsTally {
    std::size_t succeeded = 0;
    std::size_t changed = 0;
    std::size_t unchanged = 0;
    std::size_t failed = 0;
};
JobsTally tally_jobs(std::span<const JobOutcome> outcomes);

// Returns the JSON report of a job run: format_json_report's of the jobs' reports, each entry
// also naming its "job" and its "errors" (a job that did not run: its name as "repo", its first
// error as "error"), and "jobs": the tally (tally_jobs).
std::string format_jobs_json_report(std::span<const JobOutcome> outcomes, int exit_code);

// Returns the closing line of a job run: "jobs: 3 succeeded (2 changed, 1 unchanged), 1 failed".
std::string format_jobs_tally(const JobsTally& tally);

// dnf reposync's words (dnf 4.14's MultiFileProgressMeter, on a pipe: 80 columns), for
// `rpmirror reposync`:
//   Downloaded:     "(n/N): <file>   <rate>B/s | <size>B     mm:ss    " (no "(n/N): " when N is 1)
//   AlreadyPresent: "[SKIPPED] <file>: Already downloaded" padded with spaces
//   MirrorFailed:   "[MIRROR] <file>: Status code: 404 for <url>" (or the failure, for <url>)
//   Failed:         "[FAILED] <file>: No more mirrors to try - All mirrors were already tried
//                   without success" (after remote failures; else the local error)
// Returns the line without its newline.
std::string format_dnf_package_line(const PackageEvent& event);

// Returns one progress line (no control characters): `label`, a bar and percent of the bytes,
// files done of their total as dnf counts them, bytes done of their total, rate over `seconds`
// and ETA, e.g. "base [######                  ]  25% (3/12 files) 1.2 MB / 4.8 MB 0.6 MB/s
// ETA 6s". What TerminalProgress draws, and job mode's lines.
std::string format_progress_line(std::string_view label, const TransferProgress& progress,
                                 double seconds);

// A progress bar on a terminal: a sync's files and bytes of their totals, current rate and ETA,
// redrawn at most ten times a second on one line of `fd`, erased by finish(). Not thread-safe.
class TerminalProgress {
  public:
    TerminalProgress(int fd, std::string label);
    // Draws `progress` (unless the last drawing is less than 100 ms old).
    void update(const TransferProgress& progress);
    // Erases the bar (call before printing anything else).
    void finish();

  private:
    int fd_;
    std::string label_;
    std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
    std::chrono::steady_clock::time_point last_draw_{};
    bool drawn_ = false;
};

}  // namespace rpmirror
