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
// Everything here runs on the thread calling Downloader::run, except the PartSink jobs (see
// part_sink.hpp), whose results come back through the CompletionQueue.
#include <curl/curl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <ctime>
#include <deque>
#include <random>

#include "download/curl_handles.hpp"
#include "download/curl_options.hpp"
#include "download/destination.hpp"
#include "download/part_sink.hpp"
#include "fs/beneath.hpp"
#include "rpmirror/download.hpp"
#include "rpmirror/metadata.hpp"

namespace rpmirror {

namespace download {

void ensure_curl_initialized() {
    static const CURLcode status = curl_global_init(CURL_GLOBAL_DEFAULT);
    (void)status;
}

}  // namespace download

using namespace download;

namespace {

using Clock = std::chrono::steady_clock;

enum class TransferState {
    Queued,
    Running,
    Verifying,
    RetryWait,
    Done,
    Failed,
    Interrupted,
    NotStarted,
};

// How an attempt failed, and so what comes next.
enum class FailureKind {
    Transient,    // retry (same or another mirror) after a backoff; received bytes are kept
    Permanent,    // this mirror cannot serve this file: next mirror, from scratch
    RestartSame,  // the partial data is unusable: same mirror again, from scratch, at once
    Local,        // our side failed (disk, unsafe path): the file fails
};

enum class AbortReason { None, SizeMismatch, RangeMismatch, LocalIo };

struct MirrorMark {
    std::string base_url;
    bool ruled_out = false;
    unsigned transient_failures = 0;
};

double thread_cpu_seconds() {
    struct timespec spent {};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spent);
    return static_cast<double>(spent.tv_sec) + static_cast<double>(spent.tv_nsec) / 1e9;
}

std::string_view trim(std::string_view text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())) != 0) {
        text.remove_prefix(1);
    }
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())) != 0) {
        text.remove_suffix(1);
    }
    return text;
}

std::optional<std::uint64_t> parse_u64(std::string_view text) {
    std::uint64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || text.empty()) {
        return std::nullopt;
    }
    return value;
}

std::string to_lower(std::string_view text) {
    std::string lower(text);
    for (char& c : lower) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return lower;
}

bool is_absolute_url(std::string_view href) {
    return href.find("://") != std::string_view::npos;
}

bool is_transient_curl_code(CURLcode code) {
    switch (code) {
        case CURLE_COULDNT_RESOLVE_PROXY:
        case CURLE_COULDNT_RESOLVE_HOST:
        case CURLE_COULDNT_CONNECT:
        case CURLE_PARTIAL_FILE:
        case CURLE_OPERATION_TIMEDOUT:
        case CURLE_SEND_ERROR:
        case CURLE_RECV_ERROR:
        case CURLE_GOT_NOTHING:
        case CURLE_HTTP2:
        case CURLE_HTTP2_STREAM:
        case CURLE_SSL_CONNECT_ERROR:
        case CURLE_PROXY:
        case CURLE_AGAIN:
            return true;
        default:
            return false;
    }
}

bool h2c_reuse_works() {
    static const bool works = curl_version_info(CURLVERSION_NOW)->version_num >= 0x080000;
    return works;
}

bool is_transient_status(long status) {
    return status == 408 || status == 429 || (status >= 500 && status <= 599);
}

struct Transfer {
    std::size_t index = 0;
    const DownloadRequest* request = nullptr;
    std::string expected_digest;  // lowercase
    std::string shown_path;       // <root>/<destination>, for messages
    TransferState state = TransferState::Queued;
    std::unique_ptr<PartSink> sink;
    int dir_fd = -1;
    std::string part_name;

    std::vector<MirrorMark> marks;
    unsigned attempts = 0;
    unsigned transient_failures = 0;
    std::uint64_t accepted = 0;        // bytes in the .part (handed to the sink)
    bool prefix_from_earlier = false;  // the .part holds bytes of an earlier attempt or run
    bool restarted_after_mismatch = false;
    bool checking_existing = false;
    bool copying = false;
    std::optional<std::string> next_base;  // the mirror the next attempt must use
    Clock::time_point not_before{};

    // The current attempt.
    CurlEasy easy;
    std::array<char, CURL_ERROR_SIZE> error_buffer{};
    std::string url;
    std::string base;
    std::uint64_t range_start = 0;
    std::uint64_t attempt_bytes = 0;
    long status = 0;
    bool discard_body = false;
    bool has_location = false;
    std::optional<std::uint64_t> content_length;
    std::string content_range;
    std::string content_encoding;
    std::string note;  // e.g. "server ignored Range; started over"
    AbortReason abort = AbortReason::None;
    std::string abort_message;
    bool paused = false;

    FileResult result;
    struct Engine* engine = nullptr;
};

struct Engine {
    const DownloadOptions& options;
    CURLM* multi;
    IoPool* pool;
    std::vector<DestinationRoot>& roots;
    ProgressSink* progress;
    std::stop_token stop;
    CompletionQueue completions;
    std::vector<std::unique_ptr<Transfer>> transfers;
    std::deque<std::size_t> queue;        // Queued, in request order
    std::vector<std::size_t> retry_wait;  // RetryWait
    std::vector<std::size_t> paused;      // paused by the bandwidth limit or the worker's lag
    std::size_t running = 0;
    std::size_t verifying = 0;
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

    // --- bandwidth ----------------------------------------------------------------------------
    void refill_tokens() {
        const auto now = Clock::now();
        const double elapsed = std::chrono::duration<double>(now - last_refill).count();
        last_refill = now;
        const auto rate = static_cast<double>(options.throttle);
        const double capacity = std::max(rate / 4, 65536.0);
        tokens = std::min(capacity, tokens + rate * elapsed);
    }

    // --- curl callbacks -----------------------------------------------------------------------
    static std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
        auto& transfer = *static_cast<Transfer*>(user);
        const std::size_t length = size * count;
        const std::string_view line(data, length);
        if (iequals_prefix(line, "HTTP/")) {
            // A new response (after a redirect or a 100 Continue): forget the previous one.
            transfer.status = 0;
            const auto space = line.find(' ');
            if (space != std::string_view::npos) {
                const auto code = parse_u64(trim(line.substr(space + 1, 3)));
                transfer.status = code ? static_cast<long>(*code) : 0;
            }
            transfer.discard_body = false;
            transfer.has_location = false;
            transfer.content_length.reset();
            transfer.content_range.clear();
            transfer.content_encoding.clear();
            return length;
        }
        const std::string_view content = trim(line);
        if (content.empty()) {
            return transfer.engine->on_headers_complete(transfer) ? length : 0;
        }
        const auto colon = content.find(':');
        if (colon == std::string_view::npos) {
            return length;
        }
        const std::string_view name = content.substr(0, colon);
        const std::string_view value = trim(content.substr(colon + 1));
        if (name.size() == 14 && iequals_prefix(name, "content-length")) {
            transfer.content_length = parse_u64(value);
        } else if (name.size() == 13 && iequals_prefix(name, "content-range")) {
            transfer.content_range = std::string(value);
        } else if (name.size() == 16 && iequals_prefix(name, "content-encoding")) {
            transfer.content_encoding = std::string(value);
        } else if (name.size() == 8 && iequals_prefix(name, "location")) {
            transfer.has_location = true;
        }
        return length;
    }

    // Returns false iff the transfer must be aborted now.
    bool on_headers_complete(Transfer& transfer) {
        const long status = transfer.status;
        if (status < 200 || (status >= 300 && status < 400 && transfer.has_location)) {
            transfer.discard_body = true;  // informational, or a redirect curl will follow
            return true;
        }
        const std::uint64_t expected = transfer.request->expected_size;
        if (status == 200) {
            if (transfer.range_start > 0) {
                // The server ignored Range: the body is the whole file. Start over.
                transfer.sink->restart();
                transfer.accepted = 0;
                transfer.prefix_from_earlier = false;
                transfer.range_start = 0;
                transfer.note = "server ignored Range (200 instead of 206); started over";
            }
            if (transfer.content_length && *transfer.content_length != expected) {
                transfer.abort = AbortReason::SizeMismatch;
                transfer.abort_message =
                    "size mismatch: Content-Length " + std::to_string(*transfer.content_length) +
                    ", expected " + std::to_string(expected) + " bytes (aborted before the body)";
                return false;
            }
            return true;
        }
        if (status == 206) {
            // "bytes START-END/TOTAL"
            const std::string& range = transfer.content_range;
            std::optional<std::uint64_t> start;
            std::optional<std::uint64_t> total;
            if (iequals_prefix(range, "bytes ")) {
                const std::string_view spec = trim(std::string_view(range).substr(6));
                const auto dash = spec.find('-');
                const auto slash = spec.find('/');
                if (dash != std::string_view::npos) {
                    start = parse_u64(spec.substr(0, dash));
                }
                if (slash != std::string_view::npos && spec.substr(slash + 1) != "*") {
                    total = parse_u64(spec.substr(slash + 1));
                }
            }
            if (!start || *start != transfer.range_start) {
                transfer.abort = AbortReason::RangeMismatch;
                transfer.abort_message = "206 with Content-Range '" + range + "' for Range from " +
                                         std::to_string(transfer.range_start);
                return false;
            }
            if ((total && *total != expected) ||
                (transfer.content_length &&
                 *transfer.content_length != expected - transfer.range_start)) {
                transfer.abort = AbortReason::SizeMismatch;
                transfer.abort_message = "size mismatch: Content-Range '" + range + "', expected " +
                                         std::to_string(expected) + " bytes";
                return false;
            }
            transfer.result.resumed = transfer.result.resumed || transfer.range_start > 0;
            return true;
        }
        transfer.discard_body = true;  // an error page: classified when the transfer ends
        return true;
    }

    static std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
        auto& transfer = *static_cast<Transfer*>(user);
        const std::size_t length = size * count;
        if (transfer.discard_body || length == 0) {
            return length;
        }
        Engine& engine = *transfer.engine;
        if (transfer.accepted + length > transfer.request->expected_size) {
            transfer.abort = AbortReason::SizeMismatch;
            transfer.abort_message = "size mismatch: more than the expected " +
                                     std::to_string(transfer.request->expected_size) +
                                     " bytes (aborted)";
            return 0;
        }
        if (transfer.sink->has_failed()) {
            transfer.abort = AbortReason::LocalIo;
            return 0;
        }
        if (engine.options.throttle > 0) {
            engine.refill_tokens();
            if (engine.tokens <= 0) {
                engine.pause(transfer);
                return CURL_WRITEFUNC_PAUSE;
            }
            engine.tokens -= static_cast<double>(length);
        }
        if (transfer.sink->should_pause()) {
            engine.pause(transfer);
            return CURL_WRITEFUNC_PAUSE;
        }
        if (!transfer.sink->write(data, length)) {
            transfer.abort = AbortReason::LocalIo;
            return 0;
        }
        transfer.accepted += length;
        transfer.attempt_bytes += length;
        return length;
    }

    void pause(Transfer& transfer) {
        if (!transfer.paused) {
            transfer.paused = true;
            paused.push_back(transfer.index);
            ++report.throttle_pauses;
        }
    }

    void resume_paused(bool only_index, std::size_t index) {
        std::vector<std::size_t> candidates;
        if (only_index) {
            auto found = std::find(paused.begin(), paused.end(), index);
            if (found == paused.end()) {
                return;
            }
            paused.erase(found);
            candidates.push_back(index);
        } else {
            candidates = std::exchange(paused, {});
        }
        for (std::size_t candidate : candidates) {
            Transfer& transfer = *transfers[candidate];
            transfer.paused = false;
            if (transfer.state == TransferState::Running && transfer.easy) {
                // May call on_body at once, which may pause it again.
                curl_easy_pause(transfer.easy.get(), CURLPAUSE_CONT);
            }
        }
    }

    // --- attempts -----------------------------------------------------------------------------
    CurlEasy take_easy() {
        if (!idle_easies.empty()) {
            CurlEasy easy = std::move(idle_easies.back());
            idle_easies.pop_back();
            curl_easy_reset(easy.get());
            return easy;
        }
        return CurlEasy(curl_easy_init());
    }

    void configure(Transfer& transfer) {
        CURL* easy = transfer.easy.get();
        const DownloadOptions& o = options;
        curl_easy_setopt(easy, CURLOPT_URL, transfer.url.c_str());
        curl_easy_setopt(easy, CURLOPT_PRIVATE, &transfer);
        curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, transfer.error_buffer.data());
        curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &Engine::on_body);
        curl_easy_setopt(easy, CURLOPT_WRITEDATA, &transfer);
        curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, &Engine::on_header);
        curl_easy_setopt(easy, CURLOPT_HEADERDATA, &transfer);
        curl_easy_setopt(easy, CURLOPT_BUFFERSIZE, static_cast<long>(kBlockSize));
        apply_connection_options(easy, o, transfer.url, user_agent, headers.get());
        curl_easy_setopt(easy, CURLOPT_PIPEWAIT, 1L);
        const bool prior_knowledge =
            o.http2_prior_knowledge && iequals_prefix(transfer.url, "http://");
        curl_easy_setopt(easy, CURLOPT_HTTP_VERSION,
                         prior_knowledge ? static_cast<long>(CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE)
                                         : static_cast<long>(CURL_HTTP_VERSION_2TLS));
        if (prior_knowledge && !h2c_reuse_works()) {
            // libcurl < 8.0 breaks a reused h2c connection ("Error in the HTTP2 framing layer",
            // curl#10634): one connection per transfer there.
            curl_easy_setopt(easy, CURLOPT_FORBID_REUSE, 1L);
            curl_easy_setopt(easy, CURLOPT_PIPEWAIT, 0L);
        }
        if (transfer.range_start > 0) {
            const std::string range = std::to_string(transfer.range_start) + "-";
            curl_easy_setopt(easy, CURLOPT_RANGE, range.c_str());  // copied by libcurl
        }
    }

    // Opens the .part on a file's first attempt. Returns false iff the file is finished already
    // (failed, or handed to verification of a complete leftover).
    bool prepare(Transfer& transfer) {
        const DownloadRequest& request = *transfer.request;
        auto part = roots[request.root_index].open_part(request.destination);
        if (!part) {
            finish_failed(transfer, part.error());
            return false;
        }
        transfer.dir_fd = part->dir_fd;
        transfer.part_name = part->part_name;
        transfer.sink = std::make_unique<PartSink>(
            transfer.index, pool, static_cast<unsigned>(transfer.index), completions);
        PublishSpec spec{part->dir_fd,         part->part_name,       part->final_name,
                         transfer.shown_path,  request.checksum_type, transfer.expected_digest,
                         request.expected_size};
        const std::uint64_t existing = part->existing_size;
        transfer.sink->attach(std::move(part->fd), std::move(spec));
        if (existing == request.expected_size) {
            // A complete leftover (or an empty file is expected): verify it, fetch nothing.
            transfer.sink->hash_prefix(existing);
            transfer.accepted = existing;
            transfer.checking_existing = true;
            transfer.state = TransferState::Verifying;
            ++verifying;
            transfer.sink->finish();
            return false;
        }
        if (existing > 0 && existing < request.expected_size) {
            transfer.sink->hash_prefix(existing);
            transfer.accepted = existing;
            transfer.prefix_from_earlier = true;
        } else if (existing > request.expected_size) {
            transfer.sink->restart();
        }
        return true;
    }

    std::string choose_first_mirror(const Transfer& transfer) {
        for (const auto& base : transfer.request->mirrors->order()) {
            return base;
        }
        return {};
    }

    void start(Transfer& transfer) {
        if (!transfer.sink && !prepare(transfer)) {
            return;
        }
        const DownloadRequest& request = *transfer.request;
        if (is_absolute_url(request.href)) {
            transfer.base.clear();
            transfer.url = request.href;
        } else {
            transfer.base =
                transfer.next_base ? *transfer.next_base : choose_first_mirror(transfer);
            transfer.url = join_url(transfer.base, request.href);
        }
        transfer.next_base.reset();
        ++transfer.attempts;
        transfer.range_start = transfer.accepted;
        transfer.attempt_bytes = 0;
        transfer.status = 0;
        transfer.discard_body = false;
        transfer.has_location = false;
        transfer.content_length.reset();
        transfer.content_range.clear();
        transfer.content_encoding.clear();
        transfer.note.clear();
        transfer.abort = AbortReason::None;
        transfer.abort_message.clear();
        transfer.error_buffer[0] = '\0';
        if (progress != nullptr) {
            progress->file_started(transfer.index, transfer.url);
        }
        if (auto path = file_url_path(transfer.url)) {
            transfer.copying = true;
            transfer.range_start = 0;
            transfer.accepted = 0;
            transfer.prefix_from_earlier = false;
            transfer.state = TransferState::Verifying;
            ++verifying;
            transfer.sink->copy_from(std::move(*path));
            return;
        }
        if (!iequals_prefix(transfer.url, "http://") && !iequals_prefix(transfer.url, "https://")) {
            fail_attempt(transfer, "unsupported URL scheme", FailureKind::Permanent);
            return;
        }
        transfer.easy = take_easy();
        if (!transfer.easy) {
            finish_failed(transfer, Error{ErrorCode::Io, "cannot create a curl handle",
                                          transfer.shown_path, ENOMEM});
            return;
        }
        configure(transfer);
        transfer.state = TransferState::Running;
        ++running;
        curl_multi_add_handle(multi, transfer.easy.get());
    }

    // Takes the easy handle of a Running transfer out of the multi handle (no-op without one).
    void detach(Transfer& transfer) {
        if (!transfer.easy) {
            return;
        }
        curl_multi_remove_handle(multi, transfer.easy.get());
        idle_easies.push_back(std::move(transfer.easy));
        if (transfer.paused) {
            paused.erase(std::remove(paused.begin(), paused.end(), transfer.index), paused.end());
            transfer.paused = false;
        }
        --running;
    }

    MirrorMark& mark_of(Transfer& transfer, const std::string& base) {
        for (auto& mark : transfer.marks) {
            if (mark.base_url == base) {
                return mark;
            }
        }
        transfer.marks.push_back(MirrorMark{base, false, 0});
        return transfer.marks.back();
    }

    void record_attempt(Transfer& transfer, std::string outcome, bool permanent,
                        std::optional<std::chrono::seconds> retry_after = std::nullopt) {
        if (!transfer.note.empty()) {
            outcome += " (" + transfer.note + ")";
        }
        transfer.result.attempts.push_back(
            DownloadAttempt{transfer.url, std::move(outcome), transfer.status, transfer.range_start,
                            transfer.attempt_bytes, retry_after, permanent});
        transfer.result.bytes_received += transfer.attempt_bytes;
        report.bytes_received += transfer.attempt_bytes;
    }

    void fail_attempt(Transfer& transfer, std::string outcome, FailureKind kind,
                      std::optional<std::chrono::seconds> retry_after = std::nullopt) {
        record_attempt(transfer, std::move(outcome), kind == FailureKind::Permanent, retry_after);
        const bool has_mirror = !transfer.base.empty();
        if (has_mirror && kind != FailureKind::RestartSame && kind != FailureKind::Local) {
            transfer.request->mirrors->record_failure(transfer.base);
        }
        if (kind == FailureKind::Local) {
            finish_failed(transfer, Error{ErrorCode::Io, transfer.result.attempts.back().outcome,
                                          transfer.shown_path, 0});
            return;
        }
        if (kind == FailureKind::Permanent || kind == FailureKind::RestartSame) {
            transfer.sink->restart();
            transfer.accepted = 0;
            transfer.prefix_from_earlier = false;
        } else {
            transfer.prefix_from_earlier = transfer.accepted > 0;
        }
        if (has_mirror) {
            MirrorMark& mark = mark_of(transfer, transfer.base);
            if (kind == FailureKind::Permanent) {
                mark.ruled_out = true;
            } else if (kind == FailureKind::Transient) {
                ++mark.transient_failures;
            }
        }
        if (kind == FailureKind::Transient) {
            ++transfer.transient_failures;
        }
        if (stopping) {
            interrupt(transfer);
            return;
        }
        if (transfer.attempts > options.retries) {
            finish_failed(transfer, exhausted_error(transfer, false));
            return;
        }
        // Next: the same mirror at once (RestartSame), an untried mirror at once, or the least
        // failed mirror still allowed after a backoff.
        std::chrono::milliseconds delay{0};
        if (kind == FailureKind::RestartSame || !has_mirror) {
            if (!has_mirror && kind == FailureKind::Permanent) {
                finish_failed(transfer, exhausted_error(transfer, true));
                return;
            }
            transfer.next_base = transfer.base;
            if (kind == FailureKind::Transient) {
                delay = backoff(transfer, retry_after);
            }
        } else {
            const std::vector<std::string> order = transfer.request->mirrors->order();
            const MirrorMark* best = nullptr;
            for (const auto& base : order) {
                const MirrorMark* known = nullptr;
                for (const auto& existing : transfer.marks) {
                    if (existing.base_url == base) {
                        known = &existing;
                    }
                }
                if (known == nullptr) {
                    transfer.next_base = base;
                    break;
                }
                if (!known->ruled_out &&
                    (best == nullptr || known->transient_failures < best->transient_failures)) {
                    best = known;
                }
            }
            if (!transfer.next_base) {
                if (best == nullptr) {
                    finish_failed(transfer, exhausted_error(transfer, true));
                    return;
                }
                transfer.next_base = best->base_url;
                delay = backoff(transfer, retry_after);
            }
        }
        transfer.state = TransferState::RetryWait;
        transfer.not_before = Clock::now() + delay;
        retry_wait.push_back(transfer.index);
    }

    std::chrono::milliseconds backoff(const Transfer& transfer,
                                      std::optional<std::chrono::seconds> retry_after) {
        if (retry_after) {
            return std::min<std::chrono::milliseconds>(*retry_after, options.max_retry_after);
        }
        const unsigned exponent = std::min(transfer.transient_failures, 20U) - 1;
        const double full = std::min(
            static_cast<double>(options.retry_base_delay.count()) * std::pow(2.0, exponent),
            static_cast<double>(options.max_retry_delay.count()));
        std::uniform_real_distribution<double> jitter(0.5, 1.0);
        return std::chrono::milliseconds(static_cast<std::int64_t>(full * jitter(random)));
    }

    Error exhausted_error(const Transfer& transfer, bool all_mirrors) {
        std::string message;
        if (all_mirrors) {
            const std::size_t mirrors =
                is_absolute_url(transfer.request->href) ? 1 : transfer.request->mirrors->size();
            message = mirrors == 1 ? "the only mirror failed: "
                                   : "all " + std::to_string(mirrors) + " mirrors failed: ";
        } else {
            message = "gave up after " + std::to_string(transfer.attempts) + " attempts: ";
        }
        bool first = true;
        ErrorCode code = ErrorCode::Network;
        for (const auto& attempt : transfer.result.attempts) {
            message += (first ? "" : "; ") + attempt.url + ": " + attempt.outcome;
            first = false;
        }
        if (!transfer.result.attempts.empty() &&
            transfer.result.attempts.back().outcome.find("mismatch") != std::string::npos) {
            code = ErrorCode::Corrupt;
        }
        return Error{code, std::move(message), transfer.shown_path, 0};
    }

    void finish_failed(Transfer& transfer, Error error) {
        if (transfer.sink) {
            transfer.sink->close();
            if (transfer.accepted == 0 && transfer.dir_fd >= 0) {
                fs::unlink_at(transfer.dir_fd, transfer.part_name);
            }
        }
        transfer.state = TransferState::Failed;
        transfer.result.status = FileStatus::Failed;
        transfer.result.error = std::move(error);
        ++report.failed;
        // A full disk, an exhausted quota or a read-only filesystem would fail every later file
        // the same way: start no more transfers (running ones keep their .part files).
        const int local_errno =
            transfer.result.error->code == ErrorCode::Io ? transfer.result.error->sys_errno : 0;
        if (options.fail_fast || local_errno == ENOSPC || local_errno == EDQUOT ||
            local_errno == EROFS) {
            fail_fast_triggered = true;
        }
        if (progress != nullptr) {
            progress->file_finished(transfer.index, transfer.result);
        }
    }

    void finish_done(Transfer& transfer, FileStatus status) {
        transfer.state = TransferState::Done;
        transfer.result.status = status;
        if (status == FileStatus::Downloaded) {
            ++report.downloaded;
            if (!transfer.base.empty()) {
                transfer.request->mirrors->record_success(transfer.base);
            }
        } else {
            ++report.already_present;
        }
        bytes_finished += transfer.request->expected_size;
        if (progress != nullptr) {
            progress->file_finished(transfer.index, transfer.result);
        }
    }

    void interrupt(Transfer& transfer) {
        if (transfer.easy) {
            detach(transfer);
            record_attempt(transfer, "interrupted", false);
        }
        if (transfer.sink) {
            transfer.sink->close();  // the .part is kept for the next run
            if (transfer.accepted == 0 && transfer.dir_fd >= 0) {
                fs::unlink_at(transfer.dir_fd, transfer.part_name);
            }
        }
        transfer.state = TransferState::Interrupted;
        transfer.result.status = FileStatus::Interrupted;
        ++report.not_finished;
        if (progress != nullptr) {
            progress->file_finished(transfer.index, transfer.result);
        }
    }

    void stop_everything() {
        stopping = true;
        for (auto& transfer : transfers) {
            if (transfer->state == TransferState::Running ||
                transfer->state == TransferState::RetryWait) {
                interrupt(*transfer);
            } else if (transfer->state == TransferState::Queued) {
                transfer->state = TransferState::NotStarted;
                transfer->result.status = FileStatus::NotStarted;
                ++report.not_finished;
            }
        }
        queue.clear();
        retry_wait.clear();
    }

    // --- completion of transfers --------------------------------------------------------------
    void on_curl_done(Transfer& transfer, CURLcode code) {
        curl_off_t retry_after_seconds = 0;
        std::optional<std::chrono::seconds> retry_after;
        if (curl_easy_getinfo(transfer.easy.get(), CURLINFO_RETRY_AFTER, &retry_after_seconds) ==
                CURLE_OK &&
            retry_after_seconds > 0) {
            retry_after = std::chrono::seconds(retry_after_seconds);
        }
        // Read from the handle before detach() hands it back for reuse.
        const std::string curl_failure =
            code == CURLE_OK ? std::string()
                             : describe_curl_failure(transfer.easy.get(), code, transfer.url,
                                                     transfer.error_buffer.data());
        detach(transfer);
        const long status = transfer.status;
        switch (transfer.abort) {
            case AbortReason::SizeMismatch:
                fail_attempt(transfer, transfer.abort_message, FailureKind::Permanent);
                return;
            case AbortReason::RangeMismatch:
                fail_attempt(transfer, transfer.abort_message + "; starting over",
                             FailureKind::RestartSame);
                return;
            case AbortReason::LocalIo:
                finish_failed(transfer, Error{ErrorCode::Io, "cannot write the download",
                                              transfer.shown_path, transfer.sink->write_errno()});
                return;
            case AbortReason::None:
                break;
        }
        if (status >= 400 || (code == CURLE_OK && status != 200 && status != 206)) {
            std::string outcome = "HTTP " + std::to_string(status);
            if (status == 416 && transfer.range_start > 0) {
                fail_attempt(transfer,
                             outcome + " for Range from " + std::to_string(transfer.range_start) +
                                 "; starting over",
                             FailureKind::RestartSame);
            } else if (is_transient_status(status)) {
                fail_attempt(transfer, outcome, FailureKind::Transient, retry_after);
            } else {
                fail_attempt(transfer, outcome, FailureKind::Permanent);
            }
            return;
        }
        if (code != CURLE_OK) {
            std::string outcome = curl_failure;
            if (code == CURLE_OPERATION_TIMEDOUT && options.minrate > 0) {
                outcome += " (minrate " + std::to_string(options.minrate) + " B/s over " +
                           std::to_string(options.low_speed_time.count()) + " s)";
            }
            fail_attempt(
                transfer, std::move(outcome),
                is_transient_curl_code(code) ? FailureKind::Transient : FailureKind::Permanent);
            return;
        }
        if (transfer.accepted != transfer.request->expected_size) {
            fail_attempt(transfer,
                         "size mismatch: received " + std::to_string(transfer.accepted) +
                             " bytes, expected " + std::to_string(transfer.request->expected_size),
                         FailureKind::Permanent);
            return;
        }
        transfer.state = TransferState::Verifying;
        ++verifying;
        transfer.sink->finish();
    }

    void on_sink_finished(Transfer& transfer) {
        --verifying;
        const FinishResult& result = transfer.sink->result();
        const bool was_checking_existing = std::exchange(transfer.checking_existing, false);
        const bool was_copying = std::exchange(transfer.copying, false);
        if (result.local_error) {
            if (was_copying || !was_checking_existing) {
                record_attempt(transfer, result.local_error->to_string(), false);
            }
            finish_failed(transfer, *result.local_error);
            return;
        }
        if (result.published) {
            if (was_copying || !was_checking_existing) {
                if (was_copying) {
                    transfer.attempt_bytes = result.size;
                }
                record_attempt(transfer, "ok", false);
            }
            finish_done(transfer, was_checking_existing ? FileStatus::AlreadyPresent
                                                        : FileStatus::Downloaded);
            return;
        }
        if (was_checking_existing) {
            // A leftover .part of the full size but the wrong content: download it anew.
            transfer.sink->restart();
            transfer.accepted = 0;
            if (stopping) {
                interrupt(transfer);
                return;
            }
            transfer.state = TransferState::Queued;
            queue.push_front(transfer.index);
            return;
        }
        if (was_copying) {
            transfer.attempt_bytes = result.size;
        }
        std::string mismatch;
        if (result.source_error) {
            mismatch = *result.source_error;
        } else if (result.size != transfer.request->expected_size) {
            mismatch = "size mismatch: " + std::to_string(result.size) + " bytes, expected " +
                       std::to_string(transfer.request->expected_size);
        } else {
            mismatch = std::string(checksum_type_name(transfer.request->checksum_type)) +
                       " mismatch: expected " + transfer.expected_digest + ", got " + result.digest;
        }
        if (!result.source_error && !transfer.content_encoding.empty() && !was_copying) {
            mismatch += " (server sent Content-Encoding: " + transfer.content_encoding + ")";
        }
        if (transfer.range_start > 0 && !transfer.restarted_after_mismatch && !was_copying) {
            // The prefix came from an earlier attempt or run: it may be the culprit.
            transfer.restarted_after_mismatch = true;
            fail_attempt(transfer, mismatch + " after resuming; starting over",
                         FailureKind::RestartSame);
            return;
        }
        fail_attempt(transfer, std::move(mismatch), FailureKind::Permanent);
    }

    // --- the loop -----------------------------------------------------------------------------
    void drain_curl_messages() {
        int left = 0;
        while (CURLMsg* message = curl_multi_info_read(multi, &left)) {
            if (message->msg != CURLMSG_DONE) {
                continue;
            }
            Transfer* transfer = nullptr;
            curl_easy_getinfo(message->easy_handle, CURLINFO_PRIVATE, &transfer);
            const CURLcode code = message->data.result;
            if (transfer != nullptr && transfer->state == TransferState::Running) {
                on_curl_done(*transfer, code);
            }
        }
    }

    void drain_completions() {
        for (const Completion& completion : completions.take()) {
            Transfer& transfer = *transfers[completion.transfer];
            if (completion.kind == Completion::Kind::Unpause) {
                resume_paused(true, completion.transfer);
            } else if (completion.kind == Completion::Kind::UnpauseAll) {
                resume_paused(false, 0);
            } else if (transfer.state == TransferState::Verifying) {
                on_sink_finished(transfer);
            }
        }
    }

    void start_ready() {
        if (stopping) {
            return;
        }
        const auto now = Clock::now();
        // Retries whose wait is over go first, then new files.
        for (std::size_t position = 0;
             position < retry_wait.size() && running < options.max_parallel;) {
            Transfer& transfer = *transfers[retry_wait[position]];
            if (transfer.not_before <= now) {
                retry_wait.erase(retry_wait.begin() + static_cast<std::ptrdiff_t>(position));
                start(transfer);
            } else {
                ++position;
            }
        }
        while (!queue.empty() && running < options.max_parallel && !stopping) {
            Transfer& transfer = *transfers[queue.front()];
            queue.pop_front();
            start(transfer);
            if (fail_fast_triggered) {
                break;
            }
        }
    }

    void report_progress(bool force) {
        if (progress == nullptr) {
            return;
        }
        const auto now = Clock::now();
        if (!force && now - last_progress < std::chrono::milliseconds(100)) {
            return;
        }
        last_progress = now;
        std::uint64_t done = bytes_finished;
        for (const auto& transfer : transfers) {
            if (transfer->state == TransferState::Running ||
                transfer->state == TransferState::Verifying) {
                done += transfer->accepted;
            }
        }
        progress->progress(done, bytes_total);
    }

    int poll_timeout_ms() {
        auto timeout = std::chrono::milliseconds(progress != nullptr ? 100 : 1000);
        const auto now = Clock::now();
        if (!stopping && running < options.max_parallel) {
            for (std::size_t index : retry_wait) {
                const auto wait = std::chrono::ceil<std::chrono::milliseconds>(
                    transfers[index]->not_before - now);
                timeout = std::min(timeout, std::max(wait, std::chrono::milliseconds(0)));
            }
        }
        if (!paused.empty() && options.throttle > 0) {
            refill_tokens();
            if (tokens > 0) {
                resume_paused(false, 0);
            } else {
                const auto wait = std::chrono::milliseconds(
                    static_cast<std::int64_t>(
                        std::ceil(-tokens * 1000.0 / static_cast<double>(options.throttle))) +
                    1);
                timeout = std::min(timeout, wait);
            }
        }
        return static_cast<int>(timeout.count());
    }

    void loop() {
        for (;;) {
            if (!stopping && (stop.stop_requested() || fail_fast_triggered)) {
                report.interrupted = stop.stop_requested();
                stop_everything();
            }
            drain_completions();
            start_ready();
            int still_running = 0;
            curl_multi_perform(multi, &still_running);
            drain_curl_messages();
            drain_completions();
            start_ready();
            report_progress(false);
            const bool idle = running == 0 && verifying == 0 &&
                              (stopping || (queue.empty() && retry_wait.empty()));
            if (idle) {
                break;
            }
            curl_multi_poll(multi, nullptr, 0, poll_timeout_ms(), nullptr);
        }
        report_progress(true);
    }
};

Result<void> validate(const DownloadOptions& options) {
    if (options.max_parallel < 1 || options.max_parallel > 256) {
        return make_error(
            ErrorCode::BadInput,
            "max_parallel must be between 1 and 256, not " + std::to_string(options.max_parallel),
            "download options");
    }
    if (options.io_threads > 64) {
        return make_error(ErrorCode::BadInput, "io_threads must be at most 64", "download options");
    }
    for (const auto& header : options.headers) {
        if (header.find(':') == std::string::npos || header.find('\n') != std::string::npos ||
            header.find('\r') != std::string::npos) {
            return make_error(ErrorCode::BadInput, "not a 'Name: value' header line", header);
        }
    }
    return {};
}

}  // namespace

// ---------------------------------------------------------------------------------------------

std::string_view file_status_name(FileStatus status) {
    switch (status) {
        case FileStatus::Downloaded:
            return "downloaded";
        case FileStatus::AlreadyPresent:
            return "already-present";
        case FileStatus::Failed:
            return "failed";
        case FileStatus::Interrupted:
            return "interrupted";
        case FileStatus::NotStarted:
            return "not-started";
    }
    return "unknown";
}

struct Downloader::Impl {
    CurlMulti multi;
    std::unique_ptr<IoPool> pool;
};

Downloader::Downloader(DownloadOptions options)
    : options_(std::move(options)), impl_(std::make_unique<Impl>()) {
    ensure_curl_initialized();
    // One fd per running or waiting file: lift the soft limit to the hard one.
    struct rlimit limit {};
    if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
        limit.rlim_cur = limit.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &limit);
    }
}

Downloader::Downloader(Downloader&&) noexcept = default;
Downloader& Downloader::operator=(Downloader&&) noexcept = default;
Downloader::~Downloader() = default;

Result<DownloadReport> Downloader::run(const std::filesystem::path& root,
                                       std::span<const DownloadRequest> requests,
                                       ProgressSink* progress, std::stop_token stop) {
    return run(std::span<const std::filesystem::path>(&root, 1), requests, progress,
               std::move(stop));
}

Result<DownloadReport> Downloader::run(std::span<const std::filesystem::path> roots,
                                       std::span<const DownloadRequest> requests,
                                       ProgressSink* progress, std::stop_token stop) {
    const auto started = Clock::now();
    const double cpu_started = thread_cpu_seconds();
    if (auto valid = validate(options_); !valid) {
        return tl::unexpected(valid.error());
    }
    for (std::size_t index = 0; index < requests.size(); ++index) {
        const DownloadRequest& request = requests[index];
        const std::string subject = request.destination.string();
        if (auto checked = download::check_destination_path(request.destination); !checked) {
            return tl::unexpected(checked.error());
        }
        if (request.root_index >= roots.size()) {
            return make_error(ErrorCode::BadInput, "root_index out of range", subject);
        }
        if (!is_valid_hex_digest(request.checksum_type, request.expected_digest)) {
            return make_error(ErrorCode::BadInput,
                              "expected digest is not a valid " +
                                  std::string(checksum_type_name(request.checksum_type)) +
                                  " digest",
                              subject);
        }
        if (!is_absolute_url(request.href) && (!request.mirrors || request.mirrors->size() == 0)) {
            return make_error(ErrorCode::BadInput, "no mirror to download from", subject);
        }
    }
    std::vector<DestinationRoot> opened_roots;
    for (const auto& root : roots) {
        auto opened = DestinationRoot::open(root);
        if (!opened) {
            return tl::unexpected(opened.error());
        }
        opened_roots.push_back(std::move(*opened));
    }

    if (!impl_->multi) {
        impl_->multi.reset(curl_multi_init());
        if (!impl_->multi) {
            return make_error(ErrorCode::Io, "cannot create a curl multi handle", "libcurl",
                              ENOMEM);
        }
    }
    CURLM* multi = impl_->multi.get();
    curl_multi_setopt(multi, CURLMOPT_PIPELINING, static_cast<long>(CURLPIPE_MULTIPLEX));
    curl_multi_setopt(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS,
                      static_cast<long>(options_.max_parallel));
    curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS,
                      static_cast<long>(options_.max_per_host == 0 ? options_.max_parallel
                                                                   : options_.max_per_host));
    curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, static_cast<long>(options_.max_parallel * 2));
    if (options_.io_threads > 0 && (!impl_->pool || impl_->pool->size() != options_.io_threads)) {
        impl_->pool = std::make_unique<IoPool>(options_.io_threads);
    } else if (options_.io_threads == 0) {
        impl_->pool.reset();
    }
    const double io_cpu_started = impl_->pool ? impl_->pool->cpu_seconds() : 0.0;

    Engine engine(options_, multi, impl_->pool.get(), opened_roots, progress, stop);
    engine.completions.set_multi(multi);
    engine.user_agent = user_agent_for(options_);
    for (const auto& header : options_.headers) {
        engine.headers.append(header);
    }
    engine.report.files.resize(requests.size());
    engine.transfers.reserve(requests.size());
    for (std::size_t index = 0; index < requests.size(); ++index) {
        auto transfer = std::make_unique<Transfer>();
        transfer->index = index;
        transfer->request = &requests[index];
        transfer->expected_digest = to_lower(requests[index].expected_digest);
        transfer->shown_path =
            (roots[requests[index].root_index] / requests[index].destination).string();
        transfer->engine = &engine;
        engine.bytes_total += requests[index].expected_size;
        engine.transfers.push_back(std::move(transfer));
        engine.queue.push_back(index);
    }
    // A stop request wakes the poll at once, from whichever thread makes it.
    std::stop_callback wake_on_stop(stop, [multi] { curl_multi_wakeup(multi); });

    engine.loop();
    if (impl_->pool) {
        impl_->pool->drain();
    }
    engine.completions.set_multi(nullptr);

    DownloadReport report = std::move(engine.report);
    for (auto& transfer : engine.transfers) {
        if (transfer->attempts > 1) {
            report.retries += transfer->attempts - 1;
        }
        if (transfer->result.resumed) {
            ++report.resumed;
        }
        report.files[transfer->index] = std::move(transfer->result);
    }
    report.wall_seconds = std::chrono::duration<double>(Clock::now() - started).count();
    report.loop_thread_cpu_seconds = thread_cpu_seconds() - cpu_started;
    report.io_thread_cpu_seconds = impl_->pool ? impl_->pool->cpu_seconds() - io_cpu_started : 0.0;
    return report;
}

}  // namespace rpmirror
