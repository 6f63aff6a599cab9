// dnf mode's output: a line per package as dnf reposync prints it, or a progress bar on a
// terminal; after each repository its problems and summary (in dnf's words for `reposync`), the
// snapshot and --on-change.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include <fmt/core.h>
#include <fmt/format.h>

#include "jobs.hpp"
#include "reposync_output.hpp"
#include "rpmirror/report/report.hpp"
#include "rpmirror/sync/sync_report.hpp"

namespace rpmirror::cli {

namespace {

// What `rpmirror reposync` prints after a repository, in dnf's words: removals as
// "[DELETED] <path>" (stdout), warnings and a repository's failure as "Error: ..." (stderr).
// Package lines were printed as they happened.
// Returns true iff --gpgcheck removed a package (dnf then ends with "Error: GPG signature check
// failed.").
bool print_as_dnf(const RepoSyncReport& report, bool quiet) {
    for (const std::string& warning : report.warnings) {
        fmt::print(stderr, "{}: warning: {}\n", report.repo_id, warning);
    }
    bool removed = false;
    for (const PackageFailure& failure : report.failures) {
        if (!failure.dnf_message.empty()) {
            fmt::print(stderr, "{}\n", failure.dnf_message);
            removed = true;
        }
    }
    if (!quiet) {
        for (const auto& deleted : report.deleted) {
            fmt::print("[DELETED] {}\n", describe_in_mirror(report, deleted));
        }
    }
    if (!report.error) {
        return removed;
    }
    const Error& error = *report.error;
    if (error.code == ErrorCode::Network || error.code == ErrorCode::NotFound) {
        fmt::print(stderr, "Error: Failed to download metadata for repo '{}': {}\n", report.repo_id,
                   error.to_string());
    } else {
        fmt::print(stderr, "Error: {}\n", error.to_string());
    }
    return removed;
}

}  // namespace

DnfModeLines::DnfModeLines(const SyncArgs& args, bool as_dnf, std::FILE* human)
    : args_(args),
      as_dnf_(as_dnf),
      dnf_lines_(as_dnf && !args.quiet && !args.urls),
      draw_progress_(!as_dnf && !args.quiet && !args.urls && ::isatty(STDERR_FILENO) == 1),
      human_(human) {}

void DnfModeLines::started(const JobConfig& job) {
    bar_.emplace(STDERR_FILENO, job.name);
}

void DnfModeLines::package(const JobConfig& job, const PackageEvent& event) {
    (void)job;
    if (dnf_lines_) {
        fmt::print("{}\n", format_dnf_package_line(event));
        std::fflush(stdout);
    }
}

void DnfModeLines::comps_saved(const JobConfig& job, const std::filesystem::path& path) {
    (void)path;
    if (dnf_lines_) {
        fmt::print("comps.xml for repository {} saved\n", job.repo.id);
        std::fflush(stdout);
    }
}

void DnfModeLines::progress(const JobConfig& job, const TransferProgress& progress) {
    (void)job;
    if (!draw_progress_ || !bar_) {
        return;
    }
    bar_->update(progress);
}

void DnfModeLines::finished(const JobConfig& job, JobOutcome& outcome) {
    if (!bar_) {
        return;  // not started: interrupted (left out of the run's outcomes)
    }
    bar_->finish();
    bar_.reset();
    const RepoSyncReport& report = outcome.report;
    if (report.error && report.metadata_unavailable && job.repo.skip_if_unavailable) {
        // As dnf 4 with skip_if_unavailable=1: a warning, the repository is left out; rpmirror
        // says which setting made it one.
        const auto set_at = job.repo.set_at.find("skip_if_unavailable");
        fmt::print(stderr, "{}Failed to download metadata for repo '{}': {}{}\n",
                   as_dnf_ ? "" : "rpmirror: warning: ", job.repo.id, report.error->to_string(),
                   as_dnf_ ? ""
                   : set_at == job.repo.set_at.end()
                       ? " (skipped: skip_if_unavailable=1)"
                       : fmt::format(" (skipped: skip_if_unavailable=1 from {})",
                                     set_at->second.to_string()));
        ignored_repos_.push_back(job.repo.id);
        return;
    }
    for (const std::string& url : report.urls) {
        fmt::print("{}\n", url);
    }
    if (report.comps_saved && !args_.quiet && !dnf_lines_) {
        // (`reposync` printed it when it happened, before the packages, as dnf does.)
        fmt::print(human_, "comps.xml for repository {} saved\n", report.repo_id);
    }
    if (as_dnf_) {
        signature_removals_ = print_as_dnf(report, args_.quiet) || signature_removals_;
    } else {
        print_report(report);
    }
    exit_code_ = worse_exit_code(exit_code_, outcome_exit_code(outcome));
}

void DnfModeLines::shard_skipped(const Shard& shard, std::span<const std::string> skipped) {
    if (args_.verbose) {
        print_shard_skipped(shard, skipped, "repositories");
    }
}

void DnfModeLines::closure_left_out(std::string_view left_out) {
    fmt::print(stderr, "rpmirror: warning: --with-dependencies: {}\n", left_out);
}

void DnfModeLines::snapshot_taken(const JobConfig& job, const SnapshotAndPrune& done) {
    if (!args_.quiet) {
        for (const std::string& line : format_snapshot_done(job.repo.id, done)) {
            fmt::print(human_, "{}\n", line);
        }
    }
}

void DnfModeLines::step_failed(const JobConfig& job, const std::string& line) {
    // (A hook's line names the job already.)
    if (line.starts_with(job.name + ": ")) {
        fmt::print(stderr, "{}\n", line);
    } else {
        fmt::print(stderr, "rpmirror: {}: {}\n", job.name, line);
    }
    exit_code_ = worse_exit_code(exit_code_, kExitFailure);
}

void DnfModeLines::finish() const {
    if (!ignored_repos_.empty()) {
        fmt::print(stderr, "{}Ignoring repositories: {}\n",
                   as_dnf_ ? "" : "rpmirror: warning: ", fmt::join(ignored_repos_, ", "));
    }
    if (signature_removals_) {
        fmt::print(stderr, "Error: GPG signature check failed.\n");
    }
}

void DnfModeLines::print_report(const RepoSyncReport& report) const {
    for (const std::string& line : format_problems(report)) {
        fmt::print(stderr, "{}\n", line);
    }
    if (args_.verbose) {
        for (const std::string& line : report.zck_fallbacks) {
            fmt::print(stderr, "{}: {}\n", report.repo_id, line);
        }
    }
    if (!args_.quiet) {
        for (const auto& deleted : report.deleted) {
            fmt::print(human_, "{}: deleted {}\n", report.repo_id, deleted.string());
        }
    }
    if (!args_.quiet || report.error) {
        // With -u, stdout carries the URLs only (as dnf's), so it can be piped.
        fmt::print(report.error || args_.urls ? stderr : human_, "{}\n", format_summary(report));
    }
}

}  // namespace rpmirror::cli
