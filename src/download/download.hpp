// The download stage: a libcurl multi loop that fetches many files at once (a run of many files
// on several cores: one loop per core, DownloadOptions::loops), verifies each one while its bytes
// stream in (size + digest, no second pass over the data), and publishes a file under its final
// name only once it is complete and verified.
//
// Per file: the body is written through a file descriptor into `.<name>.part` beside the
// destination and fed to a Hasher at the same time (in curl's write callback, or on a worker
// thread that receives a copy: see DownloadOptions::io_threads and ::loops). When the transfer
// ends, the size and digest are compared with the expected ones; on a match the checksum cache
// xattr is set and the file is renamed to its final name, on a mismatch the .part is deleted and
// the next mirror is tried. A .part left by an interrupted run is resumed with a Range request.
//
// Destination safety: files are created relative to an open directory of the destination root
// with openat2(RESOLVE_BENEATH), so neither an href nor a symlink planted in the tree can make the
// downloader write outside the root. Symlinks inside the root that stay inside it are followed;
// the .part file and the final name themselves are never followed (O_NOFOLLOW, rename replaces).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "download/download_options.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "rpmirror/download/download_options.hpp"
#include "rpmirror/download/ip_resolve.hpp"
#include "rpmirror/util/error.hpp"

namespace rpmirror {

// ---------------------------------------------------------------------------------------------
// Mirrors

// The base URLs of one repository, in the order files should try them. Shared (by shared_ptr)
// by every file of that repository, so what one file learns about a mirror (it keeps failing)
// changes the order for the others: a mirror that fails `demote_after` times in a row is moved
// to the back; a success resets its count and it keeps its place.
// Thread-safe (the downloader only uses it from its loop thread, but callers may inspect it).
class MirrorList {
  public:
    // `base_urls` in preference order (e.g. from a metalink or a mirrorlist, or the baseurls).
    explicit MirrorList(std::vector<std::string> base_urls, unsigned demote_after = 3);

    // Returns the base URLs in their current order.
    std::vector<std::string> order() const;

    // Returns the number of mirrors.
    std::size_t size() const;

    // Records the outcome of one attempt on `base_url` (a URL of this list; others are ignored).
    void record_success(std::string_view base_url);
    void record_failure(std::string_view base_url);

    ~MirrorList();
    MirrorList(const MirrorList&) = delete;
    MirrorList& operator=(const MirrorList&) = delete;

  private:
    struct State;
    std::unique_ptr<State> state_;
};

// ---------------------------------------------------------------------------------------------
// One connection budget for many Downloaders

// A number of connections (transfers in flight) shared by every Downloader that holds it (see
// DownloadOptions::budget), e.g. the jobs of `rpmirror sync --config-file` running at once:
// at most `total` transfers at a time over all of them, and at most `per_host` to one host
// (scheme://host:port; 0 = no per-host limit beyond the total).
//
// Fair: a client (one Downloader's run) is refused a token while another client that waits for
// one and could use it (its host has room) holds fewer tokens, so while several clients want
// connections none holds more than ceil(total / clients wanting) unless the others leave tokens
// idle. A refused client is woken (its `wake` function is called, from the releasing thread)
// whenever a token is released or the shares change; it never has to poll.
//
// A transfer counts from before its request is sent until its easy handle leaves the multi handle,
// so requests in flight never exceed the tokens held (an HTTP/2 stream holds one; idle keep-alive
// connections hold none). A redirect keeps the token of its first URL; fetch_document takes none.
// Thread-safe. The budget must outlive its clients and tokens.
class ConnectionBudget {
  public:
    // `per_host` 0 = no limit per host. Throws std::invalid_argument iff `total` is 0.
    explicit ConnectionBudget(unsigned total, unsigned per_host = 0);
    ~ConnectionBudget();
    ConnectionBudget(const ConnectionBudget&) = delete;
    ConnectionBudget& operator=(const ConnectionBudget&) = delete;

    // One connection held; released (and waiting clients woken) when destroyed or reset.
    class Token {
      public:
        Token() = default;
        Token(Token&& other) noexcept;
        Token& operator=(Token&& other) noexcept;
        ~Token() { reset(); }
        // Releases the connection (no-op on an empty token).
        void reset();
        // Returns true iff the token holds a connection.
        explicit operator bool() const { return budget_ != nullptr; }

      private:
        friend class ConnectionBudget;
        ConnectionBudget* budget_ = nullptr;
        std::uint64_t client_ = 0;
        std::string host_;
    };

    // One user of the budget (a Downloader during one run); unregistered when destroyed, after
    // which its `wake` is never called again. Tokens may outlive their client.
    class Client {
      public:
        Client() = default;
        Client(Client&& other) noexcept;
        Client& operator=(Client&& other) noexcept;
        ~Client() { leave(); }

        // Takes a token for a transfer to `url` (its host is host_key(url)) iff the total, the
        // host's limit and the fair share allow it now. Otherwise returns an empty Token and
        // records that this client waits: `wake` is called once something may have changed.
        Token try_acquire(std::string_view url);

        // Tells the budget this client no longer waits (it has nothing to start), so others are
        // not held back for it. Cheap when it was not waiting.
        void stop_waiting();

        // Returns true iff the client is registered.
        explicit operator bool() const { return budget_ != nullptr; }

      private:
        friend class ConnectionBudget;
        void leave();
        ConnectionBudget* budget_ = nullptr;
        std::uint64_t id_ = 0;
    };

    // Registers a client. `wake` is called (from any thread, with the budget's lock held: it must
    // not call back into the budget; curl_multi_wakeup is what a Downloader passes) whenever a
    // token this client was refused may be available.
    Client join(std::function<void()> wake);

    // Returns "scheme://host:port" of `url`, lowercased, the default port filled in (80, 443,
    // 21 for ftp); `url` itself iff it cannot be parsed.
    static std::string host_key(std::string_view url);

    unsigned total() const { return total_; }
    unsigned per_host() const { return per_host_; }

    struct Stats {
        unsigned in_use = 0;           // tokens held now
        unsigned peak_in_use = 0;      // most tokens held at once
        unsigned peak_per_host = 0;    // most tokens held at once for one host
        unsigned peak_per_client = 0;  // most tokens one client held at once
        std::size_t clients = 0;       // registered now
        std::size_t granted = 0;       // tokens handed out
        std::size_t refused = 0;       // try_acquire calls that returned no token
    };
    // Returns the counters: what the budget granted, refused and held at most.
    Stats stats() const;

  private:
    struct State;
    Token acquire(std::uint64_t client, std::string_view url);
    void release(std::uint64_t client, const std::string& host);
    void set_not_waiting(std::uint64_t client);
    void remove(std::uint64_t client);
    void wake_waiters_locked(std::uint64_t except);

    const unsigned total_;
    const unsigned per_host_;
    std::unique_ptr<State> state_;  // the clients, tokens per host and counters, under a mutex
};

// ---------------------------------------------------------------------------------------------
// Requests, options, progress, results

struct DownloadRequest {
    // Mirrors the file can be fetched from; the URL of an attempt is join_url(base, href).
    // Must be non-null and non-empty unless `href` is itself an absolute URL ("scheme://...").
    // A mirror may be file:// (the caller vouches for it); an absolute `href` (upstream's
    // xml:base) must be http:// or https://, or the file fails without anything being read.
    std::shared_ptr<MirrorList> mirrors;
    std::string href;  // e.g. "Packages/f/foo-1.0-1.x86_64.rpm" (not percent-encoded)
    // Where the file goes, relative to the destination root the request names (`root_index`
    // into the roots given to Downloader::run). Must be relative, without "..".
    std::filesystem::path destination;
    std::size_t root_index = 0;
    ChecksumType checksum_type = ChecksumType::Sha256;
    // Hex, any case. Empty (with kUnknownSize only): nothing vouches for the file, which is
    // accepted as the server sends it whole (Content-Length, or the chunked encoding's end);
    // its digest of `checksum_type`, computed as it arrived, is FileResult::digest.
    std::string expected_digest;
    // kUnknownSize: verified by the checksum alone (at most kMaxUnknownSizeBytes are accepted,
    // and a leftover .part is started over, not resumed).
    std::uint64_t expected_size = 0;
};

// The most bytes a file of unknown size may have.
inline constexpr std::uint64_t kMaxUnknownSizeBytes = std::uint64_t{64} << 30;

// One attempt of one file on one URL, and what happened there.
struct DownloadAttempt {
    std::string url;
    std::string outcome;               // "ok", "HTTP 404", "sha256 mismatch: ...", ...
    long http_status = 0;              // 0 when no HTTP status was received
    std::uint64_t range_start = 0;     // the Range request's first byte, 0 = whole file
    std::uint64_t bytes_received = 0;  // body bytes accepted in this attempt
    std::optional<std::chrono::seconds> retry_after;  // the server's Retry-After, if any
    bool permanent = false;  // true iff the failure ruled this mirror out for this file
};

enum class FileStatus {
    Downloaded,      // fetched, verified and renamed into place
    AlreadyPresent,  // a complete .part from an earlier run verified; renamed, nothing fetched
    Failed,          // every mirror failed or the retries ran out; `error` says why
    Interrupted,     // stopped by the stop token (a .part may be kept for resume)
    NotStarted,      // never started: the run was stopped (fail_fast, stop token) first
};

// Returns "downloaded", "already-present", "failed", "interrupted" or "not-started".
std::string_view file_status_name(FileStatus status);

struct FileResult {
    FileStatus status = FileStatus::NotStarted;
    std::vector<DownloadAttempt> attempts;
    std::optional<Error> error;        // set iff status is Failed
    std::uint64_t bytes_received = 0;  // over all attempts
    bool resumed = false;              // true iff a kept .part was continued with Range
    unsigned segments = 0;  // ranges the file was fetched as at once (0 = one connection)
    // Its digest of the request's checksum_type, lowercase hex: set iff the file was downloaded
    // or found whole as a leftover .part.
    std::string digest;
};

struct DownloadReport {
    std::vector<FileResult> files;  // files[i] for requests[i]
    std::size_t downloaded = 0;
    std::size_t already_present = 0;
    std::size_t failed = 0;
    std::size_t not_finished = 0;      // Interrupted + NotStarted
    std::uint64_t bytes_received = 0;  // body bytes from the network (decoded, if encoded) or
                                       // copied from file://
    std::size_t resumed = 0;           // files continued from a .part
    std::size_t retries = 0;           // attempts beyond each file's first
    std::size_t throttle_pauses = 0;   // times a transfer was paused by the bandwidth limit
    bool interrupted = false;          // the stop token was triggered
    double wall_seconds = 0;
    double loop_thread_cpu_seconds = 0;  // CPU time of the thread that ran the curl loop
    double io_thread_cpu_seconds = 0;    // CPU time of the io_threads workers together

    // Returns true iff every file is Downloaded or AlreadyPresent.
    bool ok() const { return failed == 0 && not_finished == 0 && !interrupted; }

    // Adds `part`, the report of a run of this run's requests at `positions` (a batch, or one
    // event loop's share): its counts to these, and its files[i] as files[positions[i]] (which
    // must exist). Not its times.
    void add(DownloadReport&& part, std::span<const std::size_t> positions) {
        for (std::size_t index = 0; index < positions.size(); ++index) {
            files[positions[index]] = std::move(part.files.at(index));
        }
        downloaded += part.downloaded;
        already_present += part.already_present;
        failed += part.failed;
        not_finished += part.not_finished;
        bytes_received += part.bytes_received;
        resumed += part.resumed;
        retries += part.retries;
        throttle_pauses += part.throttle_pauses;
        interrupted = interrupted || part.interrupted;
    }
};

// Progress events, never concurrently: called on the thread running Downloader::run, or, when a
// run uses several event loops (DownloadOptions::loops), on theirs, one at a time. Keep them
// cheap: they run inside the event loop. Default implementations ignore the event.
class ProgressSink {
  public:
    virtual ~ProgressSink() = default;
    // A run of Downloader::run starts with `files` requests whose expected sizes add up to
    // `bytes` (files of unknown size count 0); its progress() counts from 0 again. Called once
    // per run, before any other event of it.
    virtual void run_started(std::size_t files, std::uint64_t bytes) {
        (void)files;
        (void)bytes;
    }
    // A file's attempt starts on `url` (called again for every retry or failover).
    virtual void file_started(std::size_t request_index, std::string_view url) {
        (void)request_index;
        (void)url;
    }
    // Totals so far, at most about every 100 ms and once at the end. `bytes_total` is the sum of
    // the expected sizes of all requests; `bytes_done` counts the bytes of finished files plus the
    // bytes received so far by running ones (a failed attempt's bytes are taken back).
    virtual void progress(std::uint64_t bytes_done, std::uint64_t bytes_total) {
        (void)bytes_done;
        (void)bytes_total;
    }
    // A file reached its final status (Downloaded, AlreadyPresent, Failed or Interrupted).
    virtual void file_finished(std::size_t request_index, const FileResult& result) {
        (void)request_index;
        (void)result;
    }
};

// Documents larger than this are refused by fetch_document: no repomd.xml, mirrorlist or
// metalink comes close.
inline constexpr std::uint64_t kMaxDocumentBytes = 64ULL * 1024 * 1024;

// The download engine. Owns one libcurl multi handle, kept between run() calls so connections
// are reused across repositories and runs.
// Not thread-safe: one thread calls run() at a time; `stop` may be triggered from any thread
// (e.g. by the CLI's SIGINT/SIGTERM handling thread).
class Downloader {
  public:
    explicit Downloader(DownloadOptions options = {});
    Downloader(Downloader&&) noexcept;
    Downloader& operator=(Downloader&&) noexcept;
    ~Downloader();

    // Downloads every request into `roots[request.root_index]` (directories; created if missing).
    // Returns the report, with one FileResult per request; never throws for a file's failure.
    // Returns Error{BadInput} iff an option or a request is invalid (no file is touched then),
    // Error{Io}/Error{NotFound} iff a root cannot be opened or created.
    // Once `stop` is requested: no transfer starts, running ones are stopped with their .part
    // kept, and the report says interrupted.
    Result<DownloadReport> run(std::span<const std::filesystem::path> roots,
                               std::span<const DownloadRequest> requests,
                               ProgressSink* progress = nullptr, std::stop_token stop = {});

    // Convenience for one root: every request's root_index must be 0.
    Result<DownloadReport> run(const std::filesystem::path& root,
                               std::span<const DownloadRequest> requests,
                               ProgressSink* progress = nullptr, std::stop_token stop = {});

    // fetch_document (below) with this Downloader's options, over its connections: a mirrorlist,
    // repomd.xml and its signature reuse the connection the one before opened, and leave it open
    // for the records and packages that follow. Not during a run (as run()).
    Result<std::string> fetch_document(const std::string& url,
                                       std::uint64_t max_bytes = kMaxDocumentBytes,
                                       std::stop_token stop = {},
                                       std::int64_t* last_modified = nullptr);

    const DownloadOptions& options() const { return options_; }

    // Replaces the options for the following runs (e.g. per-repository TLS, proxy or throttle
    // settings); the multi handle and its open connections are kept. Not during a run.
    void set_options(DownloadOptions options) { options_ = std::move(options); }

  private:
    struct Impl;
    DownloadOptions options_;
    std::unique_ptr<Impl> impl_;
};

// Fetches a small document whose size and checksum are not known in advance (repomd.xml, its
// signature, a mirrorlist, a metalink) into memory, with `options`' connection settings
// (TLS, proxy, credentials, timeouts, user agent; redirects to http(s) only, never from https
// back to http).
// `url` may be http(s):// or file://.
// Returns the body; Error{NotFound} naming the URL iff the server answers 404 or 410 or the local
// file does not exist; Error{Unsafe} iff the body exceeds `max_bytes`; Error{Interrupted} iff
// `stop` is requested before the body is complete (the wait ends at once, whichever thread
// requests it); Error{Network} naming the URL and the cause for any other failure (including
// HTTP statuses >= 400). Iff `last_modified` is not null, it receives the server's Last-Modified
// time in seconds since the epoch, or -1 iff the server sent none (and for file:// URLs).
// Thread-safe.
Result<std::string> fetch_document(const std::string& url, const DownloadOptions& options,
                                   std::uint64_t max_bytes = kMaxDocumentBytes,
                                   std::stop_token stop = {},
                                   std::int64_t* last_modified = nullptr);

// Returns the `.part` file name used for the destination file name `name` (".name.part").
std::string part_file_name(std::string_view name);

}  // namespace rpmirror
