// `rpmirror sync` as one library call, in either of its modes: the repositories of dnf's
// configuration (dnf mode: each a job named by its repo id, run one after the other) or the jobs
// of rpmirror.conf (job mode: run concurrently). The command line parses its options into a
// SyncRun, calls run_sync, and prints what SyncRunEvents tell; every step of the workflow is
// here:
//
//   jobs ─► shard ─► dependency closures ─► overlap check ─► each job: sync ─► snapshot ─► hook
//                                                                      └─► metrics file
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/jobs/jobs.hpp"
#include "rpmirror/jobs/jobs_config.hpp"
#include "rpmirror/snapshot/snapshot.hpp"
#include "rpmirror/sync/job.hpp"
#include "rpmirror/util/error.hpp"

namespace rpmirror {

// What a run's jobs are: they name its messages ("repositories" / "jobs") and decide what is
// checked before anything runs.
enum class RunKind {
    Repositories,  // dnf mode: jobs made by repository_run_jobs (rpmirror/run/sync_jobs.hpp)
    Jobs,          // job mode: jobs of rpmirror.conf (its loading checked their trees)
};

struct SyncRun {
    RunKind kind = RunKind::Jobs;
    std::vector<JobConfig> jobs;
    // Only this worker's share of `jobs` (by name) runs; nullopt: all of them.
    std::optional<Shard> shard;
    JobRunnerOptions runner;
    // --on-change: run after every job that changed its mirror instead of its exec-on-change.
    std::string on_change;
    // The name of every snapshot a job asks for without naming it (`snapshot = 1`,
    // `--snapshot`): the run's start; default_snapshot_name() when empty.
    std::string snapshot_name;
    // Written (write_metrics_file) at the end of the run; empty: none.
    std::string metrics_file;
};

// What a run tells besides the runner's events (JobEvents). Called from the runner's threads
// (the steps after a job run on its thread): implementations must be thread-safe.
class SyncRunEvents : public JobEvents {
  public:
    // The shard kept its own jobs and skipped `skipped` (names, possibly none).
    virtual void shard_skipped(const Shard& shard, std::span<const std::string> skipped) {
        (void)shard;
        (void)skipped;
    }
    // A dependency closure left `left_out` out (a package spec it cannot satisfy).
    virtual void closure_left_out(std::string_view left_out) { (void)left_out; }
    // After finished(job, outcome): the snapshot the job asked for was taken (or found
    // unchanged) and pruned.
    virtual void snapshot_taken(const JobConfig& job, const SnapshotAndPrune& done) {
        (void)job;
        (void)done;
    }
    // After finished(job, outcome): a step after the sync failed (the on-change
    // hook: the line to print, "JOB: exec-on-change 'CMD' failed: exit status N";
    // the snapshot: "snapshot: " and its error). The outcome then carries `line` in errors.
    virtual void step_failed(const JobConfig& job, const std::string& line) {
        (void)job;
        (void)line;
    }
};

struct SyncRunResult {
    // Why nothing ran, each found before anything was written: a dependency closure that cannot
    // be solved (its error), or trees of the run inside one another (a usage error).
    std::optional<Error> closure_failed;
    std::optional<Error> overlap;
    // One per job that ran or was due to run (the shard's own), in the order of the run's jobs.
    std::vector<JobOutcome> outcomes;
    // Why the metrics file could not be written (the run then failed); nullopt iff written or
    // none was asked for.
    std::optional<Error> metrics_error;
};

// Runs `run`: keeps the shard's jobs; solves each group of jobs' dependency closure
// (assign_job_closures) before any job runs; makes an on-demand job that takes a snapshot fetch
// every listed package (Prefetch::everything); for RunKind::Repositories checks that no
// repository's tree (with its snapshots) lies inside another's (check_tree_overlaps); then runs
// the jobs (run_jobs); after each job that succeeded and asks for one, takes its snapshot
// (snapshot_after_sync) and, after each that changed its mirror, runs its hook
// (run_hook_after_job); a failed step fails the job (outcome.errors). Nothing after the sync runs
// for a -u run (urls_only); then writes the metrics file. A closure or overlap refusal ends the
// run before any job (no outcomes); each job's failure is in its outcome.
SyncRunResult run_sync(SyncRun run, SyncRunEvents* events = nullptr, std::stop_token stop = {});

}  // namespace rpmirror
