// The output of `rpmirror sync` and `rpmirror reposync` for the repositories of the command line
// (cli/reposync_output.cpp): dnf reposync's lines, or rpmirror's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "command.hpp"
#include "rpmirror/jobs/jobs.hpp"
#include "rpmirror/report/report.hpp"
#include "rpmirror/run/sync_run.hpp"
#include "rpmirror/sync/sync_report.hpp"
#include "snapshot.hpp"
#include "sync.hpp"

namespace rpmirror::cli {

// dnf mode's output, each repository a job named by its repo id, run one after the other by
// run_jobs (one slot: every call on the calling thread). `reposync` prints a line per package as
// dnf does; otherwise a progress bar on a terminal. After each repository: its problems and
// summary, then what the steps after it did (the snapshot, --on-change).
class DnfModeLines final : public SyncRunEvents {
  public:
    DnfModeLines(const SyncArgs& args, bool as_dnf, std::FILE* human);

    void started(const JobConfig& job) override;

    void package(const JobConfig& job, const PackageEvent& event) override;

    void comps_saved(const JobConfig& job, const std::filesystem::path& path) override;

    void progress(const JobConfig& job, const TransferProgress& progress) override;

    void finished(const JobConfig& job, JobOutcome& outcome) override;

    void shard_skipped(const Shard& shard, std::span<const std::string> skipped) override;

    void closure_left_out(std::string_view left_out) override;

    void snapshot_taken(const JobConfig& job, const SnapshotAndPrune& done) override;

    void step_failed(const JobConfig& job, const std::string& line) override;

    // Prints what the whole run says at its end (ignored repositories, --gpgcheck's error).
    void finish() const;

    int exit_code() const { return exit_code_; }

  private:
    // rpmirror's lines after a repository: problems, deletions and the summary.
    void print_report(const RepoSyncReport& report) const;

    const SyncArgs& args_;
    const bool as_dnf_;
    const bool dnf_lines_;
    const bool draw_progress_;
    std::FILE* const human_;
    std::optional<TerminalProgress> bar_;     // the running repository's
    std::vector<std::string> ignored_repos_;  // skip_if_unavailable=1 and unreachable
    bool signature_removals_ = false;         // reposync: --gpgcheck removed a package
    int exit_code_ = kExitOk;
};

}  // namespace rpmirror::cli
