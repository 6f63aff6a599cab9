// The runner of configuration jobs (`rpmirror sync --config-file FILE`, "job mode"): syncs the
// jobs of rpmirror/jobs/jobs_config.hpp concurrently; dnf mode runs its repositories through the
// same runner, one at a time, each a job named by its repo id.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <stop_token>
#include <vector>

#include "rpmirror/download/download_options.hpp"
#include "rpmirror/jobs/jobs_config.hpp"
#include "rpmirror/sync/job.hpp"
#include "rpmirror/sync/sync_report.hpp"

namespace rpmirror {

// What the runner tells while jobs run. Called from the runner's threads, concurrently for
// different jobs: implementations must be thread-safe.
class JobEvents {
  public:
    virtual ~JobEvents() = default;
    // `job` starts (not called for a job whose configuration failed).
    virtual void started(const JobConfig& job) { (void)job; }
    // A package of `job` was downloaded, found present or failed.
    virtual void package(const JobConfig& job, const PackageEvent& event) {
        (void)job;
        (void)event;
    }
    // -m: `job`'s comps.xml was written to `path` (before any package is downloaded).
    virtual void comps_saved(const JobConfig& job, const std::filesystem::path& path) {
        (void)job;
        (void)path;
    }
    // `job`'s downloads so far, of every downloader run it announced (ProgressSink): files and
    // bytes done of their totals.
    virtual void progress(const JobConfig& job, const TransferProgress& progress) {
        (void)job;
        (void)progress;
    }
    // `job` ended (also for a job that never ran). What the handler adds to `outcome` (e.g. the
    // error of a failed exec-on-change hook it ran) is kept: the outcome is final after this.
    virtual void finished(const JobConfig& job, JobOutcome& outcome) {
        (void)job;
        (void)outcome;
    }
};

struct JobRunnerOptions {
    unsigned parallel_jobs = 4;  // jobs at once (>= 1)
    // The connections of every job's transfers (a slot runs one job at a time and keeps its
    // connections for its next job): at most `parallel` transfers in flight over all jobs (0: no
    // run-wide bound) and `max_per_host` to one host (0: no bound), shared fairly. A job's own
    // `parallel` caps it further.
    unsigned parallel = 0;
    unsigned max_per_host = 0;
    // Called for every job before it runs, with the options it runs with (events excepted);
    // may be empty. Called from the runner's threads: must be thread-safe.
    std::function<void(const JobConfig&, SyncOptions&)> prepare_sync;
};

// Runs `jobs`, at most `options.parallel_jobs` at once, each on one slot's Syncer. A failing job
// never stops the others; a job with configuration errors does not run (its outcome carries
// them). When `stop` is requested, running jobs stop (as a sync stops) and jobs not yet started
// do not start (their outcome says so). Returns one outcome per job, in the order of `jobs`.
// `events` may be null.
std::vector<JobOutcome> run_jobs(std::span<const JobConfig> jobs, const JobRunnerOptions& options,
                                 JobEvents* events = nullptr, std::stop_token stop = {});

}  // namespace rpmirror
