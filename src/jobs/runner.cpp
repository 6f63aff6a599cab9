// The job runner: rpmirror.conf's jobs synced concurrently, one Syncer per slot.
#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>

#include "download/download.hpp"
#include "rpmirror/jobs/jobs.hpp"
#include "sync/sync.hpp"

namespace rpmirror {
namespace {

// Forwards one job's package events and progress to the runner's JobEvents.
class JobEventForwarder final : public SyncEvents, public ProgressSink {
  public:
    JobEventForwarder(const JobConfig& job, JobEvents& events) : job_(job), events_(events) {}

    void package(const PackageEvent& event) override { events_.package(job_, event); }
    void comps_saved(const std::string& repo_id, const std::filesystem::path& path) override {
        (void)repo_id;
        events_.comps_saved(job_, path);
    }
    // A sync runs the downloader once or more (a bucket's batches, the packages to replace, a
    // tree's images): the job's totals are the sum of every run's.
    void run_started(std::size_t files, std::uint64_t bytes) override {
        earlier_bytes_ += run_bytes_;
        run_bytes_ = 0;
        totals_.files_total += files;
        totals_.bytes_total += bytes;
        totals_.bytes_done = earlier_bytes_;
        events_.progress(job_, totals_);
    }
    void progress(std::uint64_t bytes_done, std::uint64_t bytes_total) override {
        (void)bytes_total;  // the run's, already counted by run_started
        run_bytes_ = bytes_done;
        totals_.bytes_done = earlier_bytes_ + run_bytes_;
        events_.progress(job_, totals_);
    }
    void file_finished(std::size_t request_index, const FileResult& result) override {
        (void)request_index;
        (void)result;
        ++totals_.files_done;
        events_.progress(job_, totals_);
    }

  private:
    const JobConfig& job_;
    JobEvents& events_;
    TransferProgress totals_;
    std::uint64_t earlier_bytes_ = 0;  // done by the downloader's earlier runs
    std::uint64_t run_bytes_ = 0;      // done by its current run
};

JobOutcome run_one(Syncer& syncer, const JobConfig& job, const JobRunnerOptions& options,
                   JobEvents* events, std::stop_token stop) {
    JobOutcome outcome;
    outcome.job = job.name;
    outcome.started = std::chrono::system_clock::now();
    if (!job.errors.empty()) {
        outcome.errors = job.errors;
    } else if (stop.stop_requested()) {
        outcome.errors.push_back(job.name + ": not started: interrupted");
    } else {
        SyncOptions sync_options = job.options;
        if (options.prepare_sync) {
            options.prepare_sync(job, sync_options);
        }
        std::unique_ptr<JobEventForwarder> forwarder;
        if (events != nullptr) {
            events->started(job);
            forwarder = std::make_unique<JobEventForwarder>(job, *events);
            sync_options.events = forwarder.get();
        }
        outcome.report = syncer.sync(job.repo, sync_options, forwarder.get(), stop);
    }
    outcome.finished = std::chrono::system_clock::now();
    if (events != nullptr) {
        events->finished(job, outcome);
    }
    return outcome;
}

}  // namespace

std::vector<JobOutcome> run_jobs(std::span<const JobConfig> jobs, const JobRunnerOptions& options,
                                 JobEvents* events, std::stop_token stop) {
    std::vector<JobOutcome> outcomes(jobs.size());
    std::atomic<std::size_t> next{0};
    DownloadOptions base;
    base.max_per_host = options.max_per_host;
    if (options.parallel > 0) {
        base.budget = std::make_shared<ConnectionBudget>(options.parallel, options.max_per_host);
    }
    const auto slot = [&] {
        std::unique_ptr<Syncer> syncer;  // made for the slot's first job, kept for the next
        for (std::size_t index = next++; index < jobs.size(); index = next++) {
            if (!syncer) {
                syncer = std::make_unique<Syncer>(DownloadOptions(base));
            }
            outcomes[index] = run_one(*syncer, jobs[index], options, events, stop);
        }
    };
    const std::size_t slots =
        std::min<std::size_t>(std::max(options.parallel_jobs, 1U), jobs.size());
    {
        std::vector<std::jthread> threads;
        for (std::size_t i = 1; i < slots; ++i) {
            threads.emplace_back(slot);
        }
        slot();  // this thread is a slot too
    }            // threads join here
    return outcomes;
}

}  // namespace rpmirror
