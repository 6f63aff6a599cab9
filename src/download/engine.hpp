// The download loop: one curl multi handle, one Transfer per requested file, each driven through
// an explicit state machine:
//
//   Queued ──start──> Running ──body complete──> Verifying ──match──> Done
//     │                  │                          │
//     │                  └─failure─┐                └─mismatch─┐
//     │                            v                           v
//     └─(file://)─> Verifying   RetryWait <───────────────────(next mirror / retry)
//                                  │ (no mirror or retry left) ──> Failed
//   Stop requested: Running/RetryWait ──> Interrupted (.part kept), Queued ──> NotStarted.
//
// A segmented file (DownloadOptions::connections_per_file) goes Queued ──> Segmented instead of
// Running: its byte ranges are transfers of their own (appended to Engine::transfers, `owner` =
// the file), each Queued ──> Running ──> Done through the same loop, retries and mirror choice,
// writing at its offset into the file's .part. The last range to finish moves the file
// Segmented ──> Verifying (hashed from disk); a range the server will not serve as a range moves
// it Segmented ──> Queued, to start over on one connection. A failed file or a stop cancels the
// ranges left (Running/RetryWait ──> Interrupted, Queued ──> NotStarted).
//
// As curl's multi.c does with mstate(), Engine::set_state is the only place a transfer's state
// changes, and it keeps the counts of running and verifying transfers with it, and the
// ConnectionBudget token a Running transfer holds (DownloadOptions::budget): taken before the
// attempt starts (Engine::try_start), given back when the transfer leaves Running, whatever
// the outcome. Everything an attempt learns lives in Transfer::attempt, replaced as a whole when
// the next attempt starts; which mirror that attempt uses is decided by choose_next_mirror
// (mirror_choice.hpp).
//
// Everything here runs on the Engine's loop thread (the thread calling Downloader::run, or one
// of the run's loop threads: DownloadOptions::loops), except the PartSink jobs (see
// part_sink.hpp), whose results come back through the CompletionQueue.
//
// This header holds the transfer model and declares Engine; its member functions are defined by
// concern: engine.cpp (the state, the loop), attempt.cpp (starting an attempt),
// http_response.cpp (a response's headers and its end), write_callback.cpp (the body, pausing),
// segments.cpp (the ranges of a segmented file), retry.cpp (a failed attempt: mirrors, backoff)
// and finish.cpp (a file's end: verified, failed, interrupted). Downloader is in downloader.cpp.
#pragma once

#include <curl/curl.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <random>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "download/curl_handles.hpp"
#include "download/curl_options.hpp"
#include "download/destination.hpp"
#include "download/download.hpp"
#include "download/mirror_choice.hpp"
#include "download/part_sink.hpp"

namespace rpmirror::download {

using Clock = std::chrono::steady_clock;

enum class TransferState {
    Queued,       // waiting for a free slot (its first attempt, or again after a bad leftover)
    Running,      // an easy handle is in the multi handle
    Segmented,    // a file whose ranges are being fetched (it holds no connection itself)
    Verifying,    // the sink is finishing: final hash, compare, rename (see Verification)
    RetryWait,    // the next attempt waits for not_before
    Done,         // published (final)
    Failed,       // result.error says why (final)
    Interrupted,  // stopped while Running or RetryWait; .part kept (final)
    NotStarted,   // stopped while Queued (final)
};

// Returns true iff a transfer may go from `from` to `to` (the diagram at the top of the file).
[[maybe_unused]] constexpr bool is_allowed_transition(TransferState from, TransferState to) {
    using S = TransferState;
    switch (from) {
        case S::Queued:
            return to == S::Running || to == S::Verifying || to == S::RetryWait ||
                   to == S::Failed || to == S::NotStarted || to == S::Segmented;
        case S::Running:  // to Done: a range (its file is verified as a whole)
            return to == S::Verifying || to == S::RetryWait || to == S::Failed ||
                   to == S::Interrupted || to == S::Done;
        case S::Segmented:
            return to == S::Verifying || to == S::Queued || to == S::Failed || to == S::Interrupted;
        case S::Verifying:
            return to == S::Done || to == S::Failed || to == S::RetryWait || to == S::Queued ||
                   to == S::Interrupted;
        case S::RetryWait:
            return to == S::Running || to == S::Verifying || to == S::RetryWait ||
                   to == S::Failed || to == S::Interrupted;
        case S::Done:
        case S::Failed:
        case S::Interrupted:
        case S::NotStarted:
            return false;
    }
    return false;
}

// What a Verifying transfer's sink is checking.
enum class Verification {
    Download,      // the body of an http(s) attempt
    LeftoverPart,  // a complete .part left by an earlier run: nothing was fetched
    FileCopy,      // a copy from a file:// mirror
};

// RangeUnusable: a range of a segmented file was not answered with exactly its bytes.
enum class AbortReason { None, SizeMismatch, RangeMismatch, RangeUnusable, LocalIo, Unframed };

// A range of a segmented file is never smaller than this.
inline constexpr std::uint64_t kMinRangeBytes = 1024 * 1024;

inline bool is_absolute_url(std::string_view href) {
    return href.find("://") != std::string_view::npos;
}

// The headers of one response. A redirect or a 100 Continue starts a new one.
struct Response {
    long status = 0;
    bool discard_body = false;  // not the file: an informational answer, a redirect, an error
    bool has_location = false;
    std::optional<std::uint64_t> content_length;
    std::string content_range;
    std::string content_encoding;
    bool chunked = false;  // Transfer-Encoding: chunked (its last chunk marks the body's end)
    bool framed = false;   // HTTP/2 or later: the stream's end marks the body's end
};

// One attempt of one file on one URL: replaced as a whole when the next attempt starts.
struct Attempt {
    CurlEasy easy;  // empty unless Running
    std::array<char, CURL_ERROR_SIZE> error_buffer{};
    std::string url;
    std::string base;               // the mirror; "" iff the href is an absolute URL
    std::uint64_t range_start = 0;  // the Range request's first byte, 0 = whole file
    std::uint64_t bytes = 0;        // body bytes accepted in this attempt
    Response response;              // the last response's headers
    std::string note;               // e.g. "server ignored Range; started over"
    AbortReason abort = AbortReason::None;
    std::string abort_message;
    bool paused = false;   // by the bandwidth limit or the worker's lag
    bool decoding = true;  // an encoded body is decoded (see Transfer::store_as_sent)
    RedirectGuard redirects;
    ConnectionBudget::Token connection;  // held while Running iff there is a budget
};

struct Transfer {
    std::size_t index = 0;
    const DownloadRequest* request = nullptr;
    std::string expected_digest;                         // lowercase
    std::string shown_path;                              // <root>/<destination>, for messages
    TransferState state = TransferState::Queued;         // changed only by Engine::set_state
    Verification verification = Verification::Download;  // meaningful while Verifying
    std::unique_ptr<PartSink> sink;
    int dir_fd = -1;
    std::string part_name;

    // What the file's attempts so far leave for the next one.
    std::vector<MirrorMark> marks;
    unsigned attempts = 0;
    unsigned transient_failures = 0;
    std::uint64_t accepted = 0;  // bytes in the .part (handed to the sink)
    bool restarted_after_mismatch = false;
    // A body the mirror sent encoded failed its check once decoded: the mirror may label the
    // file's own bytes with a Content-Encoding (a .gz sent as "Content-Encoding: gzip"), so the
    // attempts on that mirror store what it sends, undecoded. A file requested without a digest
    // is always stored as sent: nothing could tell a decoded body from the file's bytes.
    bool store_as_sent = false;
    std::optional<std::string> next_base;  // the mirror the next attempt must use
    Clock::time_point not_before{};

    // Segmented downloads (see the top of the file).
    Transfer* owner = nullptr;      // the file, iff this transfer is one of its ranges
    std::uint64_t range_begin = 0;  // a range: its bytes [range_begin, range_end) of the file
    std::uint64_t range_end = 0;
    std::vector<std::size_t> ranges;          // a file: its ranges (indices into Engine::transfers)
    std::size_t ranges_left = 0;              // a file: ranges not Done yet
    bool one_connection = false;              // a file: never (again) segmented
    std::optional<std::int64_t> remote_time;  // a file: a range's Last-Modified (--remote-time)

    Attempt attempt;
    FileResult result;  // a range records its attempts in its file's result
    struct Engine* engine = nullptr;
};

// Returns the file `transfer` belongs to: itself, or the owner of a range.
inline Transfer& file_of(Transfer& transfer) {
    return transfer.owner != nullptr ? *transfer.owner : transfer;
}

// Returns the bytes `transfer` must receive: a range's length, or the file's expected size.
inline std::uint64_t expected_bytes(const Transfer& transfer) {
    return transfer.owner != nullptr ? transfer.range_end - transfer.range_begin
                                     : transfer.request->expected_size;
}

struct Engine {
    const DownloadOptions& options;
    CURLM* multi;
    IoPool* pool;
    std::vector<DestinationRoot>& roots;
    ProgressSink* progress;
    std::stop_token stop;
    ConnectionBudget::Client budget_client;  // registered for the run iff options.budget
    bool budget_refused = false;             // the budget refused a start in this pass
    CompletionQueue completions;
    std::vector<std::unique_ptr<Transfer>> transfers;
    std::deque<std::size_t> queue;        // Queued, in request order
    std::vector<std::size_t> retry_wait;  // RetryWait
    std::vector<std::size_t> paused;      // paused by the bandwidth limit or the worker's lag
    std::size_t running = 0;              // Running transfers: kept by set_state
    std::size_t verifying = 0;            // Verifying transfers: kept by set_state
    std::vector<CurlEasy> idle_easies;
    CurlSlist headers;
    std::string user_agent;
    std::mt19937_64 random{std::random_device{}()};
    bool stopping = false;
    bool fail_fast_triggered = false;
    DownloadReport report;
    std::uint64_t bytes_total = 0;
    std::uint64_t bytes_finished = 0;
    Clock::time_point last_progress{};
    // Bandwidth limit: a token bucket shared by all transfers.
    double tokens = 0;
    Clock::time_point last_refill = Clock::now();

    Engine(const DownloadOptions& options_in, CURLM* multi_in, IoPool* pool_in,
           std::vector<DestinationRoot>& roots_in, ProgressSink* progress_in,
           std::stop_token stop_in)
        : options(options_in),
          multi(multi_in),
          pool(pool_in),
          roots(roots_in),
          progress(progress_in),
          stop(std::move(stop_in)) {}

    // --- the state, the loop (engine.cpp) --------------------------------------------------------
    // The only place a transfer's state changes; keeps `running` and `verifying` with it.
    void set_state(Transfer& transfer, TransferState next);

    // Hands the transfer to its sink's verification (what the sink checks: `verification`).
    void begin_verification(Transfer& transfer, Verification verification);

    void drain_curl_messages();
    void drain_completions();
    void start_ready();
    void start_ready_transfers();
    void report_progress(bool force);
    int poll_timeout_ms();
    void loop();

    // --- bandwidth ----------------------------------------------------------------------------
    void refill_tokens() {
        const auto now = Clock::now();
        const double elapsed = std::chrono::duration<double>(now - last_refill).count();
        last_refill = now;
        const auto rate = static_cast<double>(options.throttle);
        const double capacity = std::max(rate / 4, 65536.0);
        tokens = std::min(capacity, tokens + rate * elapsed);
    }

    // --- HTTP responses (http_response.cpp) ------------------------------------------------------
    static std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user);

    // Returns false iff the transfer must be aborted now.
    bool on_headers_complete(Transfer& transfer);

    // on_headers_complete for a range of a segmented file: only a 206 with exactly its bytes
    // will do; anything else that is not an error (a 200: the server ignores Range) falls back.
    bool on_range_headers(Transfer& range);

    void on_curl_done(Transfer& transfer, CURLcode code);

    // --- the write callback (write_callback.cpp) -------------------------------------------------
    static std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user);
    void pause(Transfer& transfer);
    void resume_paused(bool only_index, std::size_t index);

    // --- attempts (attempt.cpp) ------------------------------------------------------------------
    CurlEasy take_easy();
    void configure(Transfer& transfer);

    // Opens the .part on a file's first attempt. Returns false iff the file is finished already
    // (failed, or handed to verification of a complete leftover).
    bool prepare(Transfer& transfer);

    // Returns the mirror the file's next attempt uses; "" iff its href is an absolute URL.
    static std::string next_attempt_base(const Transfer& transfer);

    static std::string attempt_url(const Transfer& transfer, const std::string& base);

    // Starts the file's next attempt, with a token of the budget iff there is one and the attempt
    // goes over the network. Returns false (and changes nothing) iff the budget refused: the
    // transfer stays queued or waiting, and the loop is woken when a token may be free.
    bool try_start(Transfer& transfer);

    // Starts the file's next attempt (its first, or the one fail_attempt scheduled); `token` is
    // the budget's connection for it (empty without a budget), released unless it starts Running.
    // A file to be segmented starts its ranges instead (queued first; the token goes back).
    void start(Transfer& transfer, ConnectionBudget::Token token);

    // Takes the easy handle of a Running transfer out of the multi handle (no-op without one).
    void detach(Transfer& transfer);

    // --- segmented files (segments.cpp) ----------------------------------------------------------
    // Returns the mirrors a segmented `file`'s ranges take in turn; empty iff the file is not
    // to be segmented (see DownloadOptions::connections_per_file).
    std::vector<std::string> segment_mirrors(const Transfer& file) const;

    // Splits `file` into its ranges, queued first, spread over `bases` in turn.
    void begin_segments(Transfer& file, const std::vector<std::string>& bases);

    // Ends the ranges of `file` not Done yet (detached; "interrupted" recorded iff `record`).
    void cancel_ranges(Transfer& file, bool record);

    // A range that was not served as a range: the file starts over on one connection.
    void fall_back_to_one_connection(Transfer& range, const std::string& why);

    // A range has all its bytes; the last one hands the file to verification.
    void range_done(Transfer& range, std::optional<std::int64_t> remote_time);

    // --- failed attempts, retries (retry.cpp) ----------------------------------------------------
    void record_attempt(Transfer& transfer, std::string outcome, bool permanent,
                        std::optional<std::chrono::seconds> retry_after = std::nullopt);

    // Ends the current attempt with `outcome`: records it, tells the mirrors, keeps or drops the
    // received bytes as `kind` says, then schedules the next attempt or ends the file.
    void fail_attempt(Transfer& transfer, std::string outcome, FailureKind kind,
                      std::optional<std::chrono::seconds> retry_after = std::nullopt);

    // Ends an attempt whose body the mirror encoded and curl decoded, and which failed its check
    // with `outcome`, by fetching the file again from the same mirror, stored as sent (see
    // Transfer::store_as_sent). Returns false (and does nothing) iff that does not apply.
    bool retry_as_sent(Transfer& transfer, const std::string& outcome);

    // Records a failure of the current attempt's mirror: in the repository's MirrorList (shared
    // by all files; RestartSame is not the mirror's fault) and in the file's own marks.
    void note_mirror_failure(Transfer& transfer, FailureKind kind);

    void schedule_retry(Transfer& transfer, std::chrono::milliseconds delay);

    std::chrono::milliseconds backoff(const Transfer& transfer,
                                      std::optional<std::chrono::seconds> retry_after);

    Error exhausted_error(const Transfer& transfer, bool all_mirrors);

    // --- a file's end (finish.cpp) ---------------------------------------------------------------
    void finish_failed(Transfer& transfer, Error error);
    void finish_done(Transfer& transfer, FileStatus status);
    void interrupt(Transfer& transfer);
    void stop_everything();
    void on_sink_finished(Transfer& transfer);
};

}  // namespace rpmirror::download
