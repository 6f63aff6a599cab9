// Downloader: the library's entry point to the download engine. Its options and requests are
// checked, the curl multi handle and the IoPool are kept from one run to the next, and a run
// builds an Engine (engine.hpp), runs its loop and gathers the report. Until they have files of
// their own, the rest of the Engine's member functions are defined here too.
#include <curl/curl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <string>

#include "download/curl_handles.hpp"
#include "download/curl_options.hpp"
#include "download/destination.hpp"
#include "download/engine.hpp"
#include "download/part_sink.hpp"
#include "fs/beneath.hpp"
#include "rpmirror/download.hpp"
#include "rpmirror/metadata.hpp"
#include "util/text.hpp"

namespace rpmirror {

namespace download {

void ensure_curl_initialized() {
    static const CURLcode status = curl_global_init(CURL_GLOBAL_DEFAULT);
    (void)status;
}

void Engine::finish_failed(Transfer& transfer, Error error) {
    if (transfer.owner != nullptr) {  // a range's failure is its file's
        Transfer& file = *transfer.owner;
        cancel_ranges(file, false);
        finish_failed(file, std::move(error));
        return;
    }
    if (transfer.state == TransferState::Segmented) {
        cancel_ranges(transfer, false);
    }
    if (transfer.sink) {
        transfer.sink->close();
        if (transfer.accepted == 0 && transfer.dir_fd >= 0) {
            fs::unlink_at(transfer.dir_fd, transfer.part_name);
        }
    }
    set_state(transfer, TransferState::Failed);
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

void Engine::finish_done(Transfer& transfer, FileStatus status) {
    set_state(transfer, TransferState::Done);
    transfer.result.status = status;
    if (status == FileStatus::Downloaded) {
        ++report.downloaded;
        if (!transfer.attempt.base.empty()) {
            transfer.request->mirrors->record_success(transfer.attempt.base);
        }
    } else {
        ++report.already_present;
    }
    bytes_finished += transfer.request->expected_size == kUnknownSize
                          ? transfer.accepted
                          : transfer.request->expected_size;
    if (progress != nullptr) {
        progress->file_finished(transfer.index, transfer.result);
    }
}

void Engine::interrupt(Transfer& transfer) {
    if (transfer.owner != nullptr) {
        if (transfer.attempt.easy) {
            detach(transfer);
            record_attempt(transfer, "interrupted", false);
        }
        set_state(transfer, TransferState::Interrupted);
        return;
    }
    if (transfer.state == TransferState::Segmented) {
        // Keep the bytes before the first gap: a resume continues from there.
        std::uint64_t prefix = 0;
        for (std::size_t index : transfer.ranges) {
            const Transfer& range = *transfers[index];
            prefix = range.range_begin + range.accepted;
            if (range.range_begin + range.accepted < range.range_end) {
                break;
            }
        }
        cancel_ranges(transfer, true);
        transfer.sink->keep_prefix(prefix);
        transfer.accepted = prefix;
    }
    if (transfer.attempt.easy) {
        detach(transfer);
        record_attempt(transfer, "interrupted", false);
    }
    if (transfer.sink) {
        transfer.sink->close();  // the .part is kept for the next run
        if (transfer.accepted == 0 && transfer.dir_fd >= 0) {
            fs::unlink_at(transfer.dir_fd, transfer.part_name);
        }
    }
    set_state(transfer, TransferState::Interrupted);
    transfer.result.status = FileStatus::Interrupted;
    ++report.not_finished;
    if (progress != nullptr) {
        progress->file_finished(transfer.index, transfer.result);
    }
}

void Engine::stop_everything() {
    stopping = true;
    for (auto& transfer : transfers) {
        if (transfer->owner != nullptr) {
            continue;  // a range: ended with its file
        }
        if (transfer->state == TransferState::Running ||
            transfer->state == TransferState::RetryWait ||
            transfer->state == TransferState::Segmented) {
            interrupt(*transfer);
        } else if (transfer->state == TransferState::Queued) {
            set_state(*transfer, TransferState::NotStarted);
            transfer->result.status = FileStatus::NotStarted;
            ++report.not_finished;
        }
    }
    queue.clear();
    retry_wait.clear();
}

void Engine::on_sink_finished(Transfer& transfer) {
    const FinishResult& result = transfer.sink->result();
    const Verification verification = transfer.verification;
    Attempt& attempt = transfer.attempt;
    if (result.local_error) {
        if (verification != Verification::LeftoverPart) {
            record_attempt(transfer, result.local_error->to_string(), false);
        }
        finish_failed(transfer, *result.local_error);
        return;
    }
    if (result.published) {
        if (verification != Verification::LeftoverPart) {
            if (verification == Verification::FileCopy) {
                attempt.bytes = result.size;
            }
            record_attempt(transfer, "ok", false);
        }
        finish_done(transfer, verification == Verification::LeftoverPart
                                  ? FileStatus::AlreadyPresent
                                  : FileStatus::Downloaded);
        return;
    }
    if (verification == Verification::LeftoverPart) {
        // A leftover .part of the full size but the wrong content: download it anew.
        transfer.sink->restart();
        transfer.accepted = 0;
        if (stopping) {
            interrupt(transfer);
            return;
        }
        set_state(transfer, TransferState::Queued);
        queue.push_front(transfer.index);
        return;
    }
    const bool copied = verification == Verification::FileCopy;
    if (copied) {
        attempt.bytes = result.size;
    }
    std::string mismatch;
    if (result.source_error) {
        mismatch = *result.source_error;
    } else if (transfer.request->expected_size != kUnknownSize &&
               result.size != transfer.request->expected_size) {
        mismatch = "size mismatch: " + std::to_string(result.size) + " bytes, expected " +
                   std::to_string(transfer.request->expected_size);
    } else {
        mismatch = std::string(checksum_type_name(transfer.request->checksum_type)) +
                   " mismatch: expected " + transfer.expected_digest + ", got " + result.digest;
    }
    if (!result.source_error && !attempt.decoding &&
        is_encoded(attempt.response.content_encoding) && !copied) {
        mismatch += " (server sent Content-Encoding: " + attempt.response.content_encoding + ")";
    }
    if (attempt.range_start > 0 && !transfer.restarted_after_mismatch && !copied) {
        // The prefix came from an earlier attempt or run: it may be the culprit.
        transfer.restarted_after_mismatch = true;
        fail_attempt(transfer, mismatch + " after resuming; starting over",
                     FailureKind::RestartSame);
        return;
    }
    if (!result.source_error && !copied && retry_as_sent(transfer, mismatch)) {
        return;
    }
    fail_attempt(transfer, std::move(mismatch), FailureKind::Permanent);
}

}  // namespace download

using namespace download;

namespace {

using text::to_lower;

double thread_cpu_seconds() {
    struct timespec spent {};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spent);
    return static_cast<double>(spent.tv_sec) + static_cast<double>(spent.tv_nsec) / 1e9;
}

Result<void> validate(const DownloadOptions& options) {
    if (options.max_parallel < 1 || options.max_parallel > 256) {
        return make_error(
            ErrorCode::BadInput,
            "max_parallel must be between 1 and 256, not " + std::to_string(options.max_parallel),
            "download options");
    }
    if (options.connections_per_file < 1 || options.connections_per_file > 64) {
        return make_error(ErrorCode::BadInput,
                          "connections per file must be between 1 and 64, not " +
                              std::to_string(options.connections_per_file),
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
    if (!append_request_headers(engine.headers, options_)) {
        return make_error(ErrorCode::Io, "cannot allocate the request headers", "libcurl", ENOMEM);
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
        if (requests[index].expected_size != kUnknownSize) {
            engine.bytes_total += requests[index].expected_size;
        }
        engine.transfers.push_back(std::move(transfer));
        engine.queue.push_back(index);
    }
    // A stop request wakes the poll at once, from whichever thread makes it.
    std::stop_callback wake_on_stop(stop, [multi] { curl_multi_wakeup(multi); });

    if (options_.budget) {
        engine.budget_client = options_.budget->join([multi] { curl_multi_wakeup(multi); });
    }

    engine.loop();
    engine.budget_client = {};  // leaves the budget: no more wake-ups of this multi handle
    if (impl_->pool) {
        impl_->pool->drain();
    }
    engine.completions.set_multi(nullptr);

    DownloadReport report = std::move(engine.report);
    for (auto& transfer : engine.transfers) {
        if (transfer->attempts > 1) {
            report.retries += transfer->attempts - 1;
        }
        if (transfer->owner != nullptr) {
            continue;  // a range of a segmented file: its attempts are in the file's result
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