// The job runner: rpmirror.conf's jobs synced concurrently, one Syncer per slot.
#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>

#include "rpmirror/jobs/jobs.hpp"

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
    void progress(std::uint64_t bytes_done, std::uint64_t bytes_total) override {
        bytes_done_ = bytes_done;
        bytes_total_ = bytes_total;
        events_.progress(job_, bytes_done_, bytes_total_, files_done_);
    }
    void file_finished(std::size_t request_index, const FileResult& result) override {
        (void)request_index;
        (void)result;
        ++files_done_;
        events_.progress(job_, bytes_done_, bytes_total_, files_done_);
    }

  private:
    const JobConfig& job_;
    JobEvents& events_;
    std::uint64_t bytes_done_ = 0;
    std::uint64_t bytes_total_ = 0;
    std::size_t files_done_ = 0;
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
    const auto slot = [&] {
        std::unique_ptr<Syncer> syncer;  // made for the slot's first job, kept for the next
        for (std::size_t index = next++; index < jobs.size(); index = next++) {
            if (!syncer) {
                DownloadOptions download = options.download;
                if (options.prepare_download) {
                    options.prepare_download(download);
                }
                syncer = std::make_unique<Syncer>(std::move(download));
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
