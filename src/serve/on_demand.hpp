// The packages of an on-demand or streamed job (DownloadPolicy) that `rpmirror serve` fetches
// from the job's upstream at their first request, with the project's Downloader (mirrors,
// failover, retries; the size and checksum checked as the bytes arrive).
//
// One Fetch per package at a time (single-flight): every request for a package while it is being
// fetched reads the same spool file as it grows. The last byte is held back until the Downloader
// verified the whole file against the published metadata, so a client never receives all of a
// package that failed its check: its response is aborted (a short body under the Content-Length
// the metadata gives). A verified package of an on-demand job is stored under its key through
// the job's store (ObjectStore::put_file: a temporary name, then renamed; a bucket's upload)
// before its last byte is released, so a client that received it whole finds it held; a
// streamed job keeps nothing. A failure is told (set_warn) once the Fetch is forgotten, so the
// next request fetches again.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <utility>

#include "fs/scratch_dir.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "rpmirror/config/config.hpp"
#include "rpmirror/download/download.hpp"
#include "rpmirror/sync/sync_options.hpp"
#include "rpmirror/util/error.hpp"
#include "serve/counters.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror::serve {

class JobCatalogue;

// A listed package to fetch.
struct WantedPackage {
    std::string key;  // its href beneath the repository ("Packages/a.rpm"), fetched from upstream
    std::uint64_t size = 0;
    ChecksumType checksum_type = ChecksumType::Sha256;
    std::string digest;  // hex
};

// One package being fetched. Thread-safe.
class Fetch {
  public:
    Fetch(WantedPackage wanted, std::filesystem::path spool);

    const WantedPackage& wanted() const { return wanted_; }

    // Copies bytes of the package from `position` on into `buffer` (at most `max`), blocking
    // until some may be sent: received, and not the last byte before the whole file is verified.
    // `attempt` is the caller's: 0 before its first byte; set to the attempt its bytes came from.
    // Returns the count copied (> 0); 0 iff `position` is the end of the verified package;
    // Error{Corrupt} or Error{Network} iff the fetch failed, or was tried again (another mirror,
    // a retry) after this caller received bytes of an attempt that failed: the response must be
    // aborted.
    Result<std::size_t> read(std::uint64_t position, char* buffer, std::size_t max,
                             unsigned& attempt);

    // Blocks until the first bytes arrived or the fetch ended. Returns the fetch's error iff it
    // failed before any byte.
    Result<void> wait_started();

    // Blocks until the fetch ended. Returns a descriptor of the verified package, or the fetch's
    // error.
    Result<UniqueFd> wait_verified();

    // The fetcher's side (OnDemand's thread).
    void attempt_started();
    void progressed();
    void finished(Result<std::filesystem::path> file);

  private:
    enum class State { Running, Verified, Failed };
    std::filesystem::path part_path() const;
    void open_locked();

    const WantedPackage wanted_;
    const std::filesystem::path spool_;  // the Downloader's root for this package
    std::mutex mutex_;
    std::condition_variable changed_;
    State state_ = State::Running;
    std::optional<Error> error_;
    unsigned attempt_ = 0;
    std::shared_ptr<UniqueFd> file_;  // the attempt's .part, then the verified file
    bool started_ = false;            // a byte arrived, or the fetch ended
};

// The fetches of one job. Thread-safe.
class OnDemand {
  public:
    // Fetches from `repo`'s mirrors with the downloader settings a sync of it with `options`
    // has, by `options.download_policy` (OnDemand or Streamed). `catalogue` must outlive this.
    OnDemand(JobCatalogue& catalogue, RepoConfig repo, const SyncOptions& options);
    ~OnDemand();  // stops the fetches and waits for them
    OnDemand(const OnDemand&) = delete;
    OnDemand& operator=(const OnDemand&) = delete;

    DownloadPolicy policy() const { return policy_; }

    // The running fetch of `wanted.key`, else a new one; nullptr iff the store holds the package
    // now (an on-demand fetch just kept it): open it. Errors: the spool cannot be made.
    Result<std::shared_ptr<Fetch>> fetch(const WantedPackage& wanted);

    // Called with a complete message when a fetch fails or a verified package cannot be kept.
    // Set before the first fetch.
    void set_warn(std::function<void(const std::string&)> warn) { warn_ = std::move(warn); }

    // Where fetches are counted (upstream_*); null: nowhere. Set before the first fetch; must
    // outlive this.
    void set_counters(JobCounters* counters) { counters_ = counters; }

  private:
    void run(std::shared_ptr<Fetch> fetch, std::filesystem::path spool, std::stop_token stop);
    Result<std::shared_ptr<MirrorList>> mirrors();

    JobCatalogue& catalogue_;
    const RepoConfig repo_;
    const DownloadPolicy policy_;
    DownloadOptions download_options_;
    std::function<void(const std::string&)> warn_;
    JobCounters* counters_ = nullptr;
    std::mutex mutex_;
    std::shared_ptr<MirrorList> mirrors_;
    std::optional<ScratchDir> spool_;
    std::uint64_t spooled_ = 0;  // fetches started: each its own directory beneath spool_
    std::map<std::string, std::shared_ptr<Fetch>> running_;
    // The fetches' threads, each with the flag it sets as it ends (joined by the next fetch).
    std::list<std::pair<std::shared_ptr<std::atomic<bool>>, std::jthread>> threads_;
};

}  // namespace rpmirror::serve
