// The packages of an on-demand or streamed job (DownloadPolicy) that `rpmirror serve` fetches
// from the job's upstream at their first request, with the project's Downloader (mirrors,
// failover, retries; the size and checksum checked as the bytes arrive).
//
// One Fetch per package at a time (single-flight): every request for a package while it is being
// fetched reads the same temporary file as it grows. The last byte is held back until the
// Downloader verified the whole file against the published metadata, so a client never receives
// all of a package that failed its check: its response is aborted (a short body under the
// Content-Length the metadata gives). A failure is told (set_warn) once the Fetch is forgotten, so
// the next request fetches again.
//
// Bounded and reused: a job's fetches are run by at most `max_parallel` workers (the job's
// `parallel` / max_parallel_downloads, as its sync's downloads), started as fetches wait and kept
// for the server's life; a fetch beyond them waits in a queue (its requests still share it). Each
// worker keeps one Downloader, so its fetches reuse its upstream connections (keep-alive).
//
// Where the bytes go: an on-demand job's worker writes into the store's staging area
// (ObjectStore::stage): on disk the mirror itself, the Downloader's temporary name
// (".NAME.part", never listed, so never served) renamed to the final name once verified, with
// nothing copied; in a bucket a spool uploaded from. So a kill -9 mid-fetch leaves a ".part"
// beside the package, which the next fetch of it resumes and the next sync removes (never while a
// fetch holds it: MirrorStore::remove_partials), and nothing
// under the final name. A streamed job's worker writes into a private directory under $TMPDIR,
// and unlinks each package once open.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "download/download.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "rpmirror/config/config.hpp"
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
    explicit Fetch(WantedPackage wanted);

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

    // The fetcher's side (an OnDemand worker). begin: the Downloader writes the package beneath
    // `root` (its temporary name beside root/key) from now on.
    void begin(std::filesystem::path root);
    void attempt_started();
    void progressed();
    // Ends the fetch: `file` the verified package, open, or the fetch's error.
    void finished(Result<UniqueFd> file);

  private:
    enum class State { Running, Verified, Failed };
    std::filesystem::path part_path() const;
    void open_locked();

    const WantedPackage wanted_;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::filesystem::path root_;  // the Downloader's root for this package ("" until begin)
    State state_ = State::Running;
    std::optional<Error> error_;
    unsigned attempt_ = 0;
    std::shared_ptr<UniqueFd> file_;  // the attempt's .part, then the verified file
};

// The fetches of one job. Thread-safe.
class OnDemand {
  public:
    // Fetches from `repo`'s mirrors with the downloader settings a sync of it with `options`
    // has, by `options.download_policy` (OnDemand or Streamed), at most
    // max_fetches() at once. `catalogue` must outlive this.
    OnDemand(JobCatalogue& catalogue, RepoConfig repo, const SyncOptions& options);
    ~OnDemand();  // stops the fetches (those queued fail: Error{Interrupted}) and the workers
    OnDemand(const OnDemand&) = delete;
    OnDemand& operator=(const OnDemand&) = delete;

    DownloadPolicy policy() const { return policy_; }

    // The most fetches from upstream at once (and workers): the job's downloads at once.
    unsigned max_fetches() const { return max_fetches_; }

    // The running or queued fetch of `wanted.key`, else a new one, queued for a worker; nullptr
    // iff the store holds the package now (an on-demand fetch just kept it): open it. Errors:
    // the store's, asked whether it holds the package.
    Result<std::shared_ptr<Fetch>> fetch(const WantedPackage& wanted);

    // Called with a complete message when a fetch fails or a verified package cannot be kept.
    // Set before the first fetch.
    void set_warn(std::function<void(const std::string&)> warn) { warn_ = std::move(warn); }

    // Where fetches are counted (upstream_*); null: nowhere. Set before the first fetch; must
    // outlive this.
    void set_counters(JobCounters* counters) { counters_ = counters; }

    // Called from a worker with the key and size of each package an on-demand fetch kept, once
    // kept and before its last byte is released to the clients. Set before the first fetch.
    void set_on_kept(std::function<void(const std::string&, std::uint64_t)> on_kept) {
        on_kept_ = std::move(on_kept);
    }

  private:
    struct Worker;
    void work(std::stop_token stop);
    void run(Worker& worker, Fetch& fetch, std::stop_token stop);
    Result<UniqueFd> fetch_one(Worker& worker, Fetch& fetch, std::stop_token stop);
    Result<std::shared_ptr<MirrorList>> mirrors();

    JobCatalogue& catalogue_;
    const RepoConfig repo_;
    const DownloadPolicy policy_;
    DownloadOptions download_options_;
    unsigned max_fetches_ = 1;
    std::function<void(const std::string&)> warn_;
    JobCounters* counters_ = nullptr;
    std::function<void(const std::string&, std::uint64_t)> on_kept_;
    std::mutex mutex_;
    std::condition_variable_any queued_;  // a fetch was queued
    std::shared_ptr<MirrorList> mirrors_;
    std::map<std::string, std::shared_ptr<Fetch>> running_;  // queued or being fetched, by key
    std::deque<std::shared_ptr<Fetch>> queue_;               // not yet taken by a worker
    std::size_t idle_ = 0;               // workers free for the queue (or about to be)
    std::vector<std::jthread> workers_;  // at most max_fetches_
};

}  // namespace rpmirror::serve
