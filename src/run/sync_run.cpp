// One `rpmirror sync` run, either mode (rpmirror/run/sync_run.hpp).
#include "rpmirror/run/sync_run.hpp"

#include <algorithm>
#include <chrono>
#include <utility>

#include "jobs/closures.hpp"
#include "jobs/hooks.hpp"
#include "jobs/jobs_config.hpp"
#include "jobs/overlap.hpp"
#include "report/metrics.hpp"
#include "sync/sync.hpp"

namespace rpmirror {

namespace {

// The runner's events passed on to the caller's, each job's steps after its sync run between
// finished() and the next job on its slot.
class StepsAfterJob final : public JobEvents {
  public:
    StepsAfterJob(const SyncRun& run, SyncRunEvents* events) : run_(run), events_(events) {}

    void started(const JobConfig& job) override {
        if (events_ != nullptr) {
            events_->started(job);
        }
    }
    void package(const JobConfig& job, const PackageEvent& event) override {
        if (events_ != nullptr) {
            events_->package(job, event);
        }
    }
    void comps_saved(const JobConfig& job, const std::filesystem::path& path) override {
        if (events_ != nullptr) {
            events_->comps_saved(job, path);
        }
    }
    void progress(const JobConfig& job, const TransferProgress& progress) override {
        if (events_ != nullptr) {
            events_->progress(job, progress);
        }
    }

    void finished(const JobConfig& job, JobOutcome& outcome) override {
        if (job.snapshot && outcome.report.partial) {
            // A snapshot is a state clients pin: only a complete one is taken.
            outcome.report.warnings.push_back(
                "snapshot not taken: the metadata was published without the packages that failed "
                "(--publish-partial); the next complete sync takes it");
        }
        if (events_ != nullptr) {
            events_->finished(job, outcome);
        }
        SyncOptions options = job.options;  // as the job ran
        if (run_.runner.prepare_sync) {
            run_.runner.prepare_sync(job, options);
        }
        if (options.urls_only) {
            return;
        }
        if (job.snapshot && outcome.ok()) {
            snapshot(job, options, outcome);
        }
        const std::string& hook = run_.on_change.empty() ? job.exec_on_change : run_.on_change;
        if (const auto failed = run_hook_after_job(
                hook, outcome, metadata_directory(options, outcome.report.repo_id))) {
            failed_step(job, *failed);
        }
    }

  private:
    // Takes the snapshot `job` asks for (`snapshot =`, --snapshot) under its snapshot directory
    // (default: the directory above its mirror), then prunes to its keep-snapshots.
    void snapshot(const JobConfig& job, const SyncOptions& options, JobOutcome& outcome) {
        SnapshotAfterSync policy;
        policy.name = job.snapshot->empty() ? run_.snapshot_name : *job.snapshot;
        policy.only_if_changed = job.snapshot->empty();  // a dated name: only on change
        policy.base = job.snapshot_dir;
        if (job.keep_snapshots > 0) {
            policy.keep = job.keep_snapshots;
        }
        policy.lock = SnapshotLock{options.state_dir, options.lock_wait};
        policy.use_checksum_cache = options.use_checksum_cache;
        policy.s3 = options.s3;
        auto done = snapshot_after_sync(outcome.report, policy);
        if (!done) {
            std::string line = "snapshot: " + done.error().to_string();
            outcome.errors.push_back(line);
            failed_step(job, line);
        } else if (events_ != nullptr) {
            events_->snapshot_taken(job, *done);
        }
    }

    void failed_step(const JobConfig& job, const std::string& line) {
        if (events_ != nullptr) {
            events_->step_failed(job, line);
        }
    }

    const SyncRun& run_;
    SyncRunEvents* const events_;
};

// Keeps the jobs of `shard`, in order; tells the others' names.
void keep_own_shard(std::vector<JobConfig>& jobs, const Shard& shard, SyncRunEvents* events) {
    std::vector<JobConfig> own;
    std::vector<std::string> skipped;
    for (JobConfig& job : jobs) {
        if (in_shard(job.name, shard)) {
            own.push_back(std::move(job));
        } else {
            skipped.push_back(job.name);
        }
    }
    jobs = std::move(own);
    if (events != nullptr) {
        events->shard_skipped(shard, skipped);
    }
}

// RunKind::Repositories: the trees the run writes (repositories, metadata, snapshots), none
// inside another. The jobs share one SyncOptions but for their repository.
Result<void> check_repository_trees(std::span<const JobConfig> jobs) {
    if (jobs.empty() || jobs.front().options.urls_only) {
        return {};  // -u writes nothing
    }
    std::vector<std::string> repo_ids;
    for (const JobConfig& job : jobs) {
        // A repository's releases share its directory, one after the other.
        if (std::find(repo_ids.begin(), repo_ids.end(), job.repo.id) == repo_ids.end()) {
            repo_ids.push_back(job.repo.id);
        }
    }
    const JobConfig& first = jobs.front();
    return check_tree_overlaps(sync_command_trees(repo_ids, first.options,
                                                  first.snapshot.has_value(), first.snapshot_dir));
}

}  // namespace

SyncRunResult run_sync(SyncRun run, SyncRunEvents* events, std::stop_token stop) {
    SyncRunResult result;
    if (run.shard) {
        // After --job: every worker is given the same command line and file.
        keep_own_shard(run.jobs, *run.shard, events);
    }
    // Each group's closure solved before any job runs; what it fetched is kept for the jobs to
    // copy their records from.
    auto closures = assign_job_closures(run.jobs, stop, run.kind == RunKind::Jobs);
    if (!closures) {
        result.closure_failed = std::move(closures.error());
        return result;
    }
    if (events != nullptr) {
        for (const ClosureMetadata& closure : *closures) {
            for (const std::string& left_out : closure.left_out()) {
                events->closure_left_out(left_out);
            }
        }
    }
    if (run.kind == RunKind::Repositories) {
        if (auto checked = check_repository_trees(run.jobs); !checked) {
            result.overlap = std::move(checked.error());
            return result;
        }
    }
    if (run.snapshot_name.empty()) {
        run.snapshot_name = default_snapshot_name(std::chrono::system_clock::now());
    }
    // A snapshot pins what its mirror lists: an on-demand job that takes one fetches every listed
    // package first, so that upstream deleting one can never make the snapshot 404.
    for (JobConfig& job : run.jobs) {
        if (job.snapshot && job.options.download_policy == DownloadPolicy::OnDemand) {
            job.options.prefetch.everything = true;
        }
    }
    StepsAfterJob steps(run, events);
    result.outcomes = run_jobs(run.jobs, run.runner, &steps, stop);
    if (!run.metrics_file.empty()) {
        if (auto written = write_metrics_file(run.metrics_file, result.outcomes); !written) {
            result.metrics_error = std::move(written.error());
        }
    }
    return result;
}

}  // namespace rpmirror
