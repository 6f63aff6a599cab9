// Downloader: the library's entry point to the download engine. Its options and requests are
// checked, the curl multi handle and the IoPool are kept from one run to the next, and a run
// builds an Engine (engine.hpp), runs its loop and gathers the report.
#include <curl/curl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <ctime>

#include "checksum/hasher.hpp"
#include "download/curl_handles.hpp"
#include "download/curl_options.hpp"
#include "download/destination.hpp"
#include "download/download.hpp"
#include "download/engine.hpp"
#include "download/part_sink.hpp"
#include "metadata/metadata.hpp"
#include "util/text.hpp"

namespace rpmirror {

namespace download {

void ensure_curl_initialized() {
    static const CURLcode status = curl_global_init(CURL_GLOBAL_DEFAULT);
    (void)status;
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

    // The multi handle, made at first use; null iff libcurl cannot make one.
    CURLM* ensure_multi() {
        if (!multi) {
            multi.reset(curl_multi_init());
        }
        return multi.get();
    }
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

Result<std::string> Downloader::fetch_document(const std::string& url, std::uint64_t max_bytes,
                                               std::stop_token stop, std::int64_t* last_modified) {
    return fetch_document_in(impl_->ensure_multi(), url, options_, max_bytes, std::move(stop),
                             last_modified);
}

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
        const bool unverified =
            request.expected_digest.empty() && request.expected_size == kUnknownSize;
        if (!unverified && !is_valid_hex_digest(request.checksum_type, request.expected_digest)) {
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

    CURLM* multi = impl_->ensure_multi();
    if (multi == nullptr) {
        return make_error(ErrorCode::Io, "cannot create a curl multi handle", "libcurl", ENOMEM);
    }
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
        transfer->store_as_sent = transfer->expected_digest.empty();
        transfer->shown_path =
            (roots[requests[index].root_index] / requests[index].destination).string();
        transfer->engine = &engine;
        if (requests[index].expected_size != kUnknownSize) {
            engine.bytes_total += requests[index].expected_size;
        }
        engine.transfers.push_back(std::move(transfer));
        engine.queue.push_back(index);
    }
    if (progress != nullptr) {
        progress->run_started(requests.size(), engine.bytes_total);
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