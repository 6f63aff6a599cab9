// The report stage: what a sync tells its user. One line per failure, one summary line per
// repository, a machine-readable JSON report, and a progress bar for terminals.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/download/download.hpp"
#include "rpmirror/sync/sync.hpp"

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

// dnf reposync's words (dnf 4.14's MultiFileProgressMeter, on a pipe: 80 columns), for
// `rpmirror reposync`:
//   Downloaded:     "(n/N): <file>   <rate>B/s | <size>B     mm:ss    " (no "(n/N): " when N is 1)
//   AlreadyPresent: "[SKIPPED] <file>: Already downloaded" padded with spaces
//   MirrorFailed:   "[MIRROR] <file>: Status code: 404 for <url>" (or the failure, for <url>)
//   Failed:         "[FAILED] <file>: No more mirrors to try - All mirrors were already tried
//                   without success" (after remote failures; else the local error)
// Returns the line without its newline.
std::string format_dnf_package_line(const PackageEvent& event);

// Returns `bytes` as dnf's format_number does (1024 steps, e.g. "6.4 k", "3.0 M", "335  ").
std::string format_dnf_number(double number);

// Returns one progress line (no control characters): `label`, a bar, percent, bytes, files
// finished, rate over `seconds` and ETA. What TerminalProgress draws, and job mode's lines.
std::string format_progress_line(std::string_view label, std::uint64_t bytes_done,
                                 std::uint64_t bytes_total, std::size_t files_done, double seconds);

// A progress bar on a terminal: overall bytes and files, current rate and ETA, redrawn at most
// ten times a second on one line of `fd`, erased by finish(). Not thread-safe (the downloader
// calls it from its loop thread only).
class TerminalProgress : public ProgressSink {
  public:
    TerminalProgress(int fd, std::string label);
    void file_finished(std::size_t request_index, const FileResult& result) override;
    void progress(std::uint64_t bytes_done, std::uint64_t bytes_total) override;
    // Erases the bar (call before printing anything else).
    void finish();

  private:
    void draw();
    int fd_;
    std::string label_;
    std::uint64_t bytes_done_ = 0;
    std::uint64_t bytes_total_ = 0;
    std::size_t files_done_ = 0;
    std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
    std::chrono::steady_clock::time_point last_draw_{};
    bool drawn_ = false;
};

}  // namespace rpmirror
