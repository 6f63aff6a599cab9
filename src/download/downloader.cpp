// Downloader: the library's entry point to the download engine. Its options and requests are
// checked, the curl multi handles and the IoPool are kept from one run to the next, and a run
// builds an Engine (engine.hpp) per event loop (DownloadOptions::loops), runs each loop on a
// thread of its own (one loop: on the calling thread) and gathers their reports into one.
#include <curl/curl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <mutex>
#include <numeric>
#include <thread>

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

// Returns the number of event loops a run of `requests` files uses (DownloadOptions::loops).
unsigned loop_count(const DownloadOptions& options, std::size_t requests) {
    if (options.fail_fast || options.throttle > 0 || options.budget) {
        return 1;
    }
    std::size_t loops = options.loops;
    if (loops == 0) {
        loops = std::clamp(std::thread::hardware_concurrency(), 1U, 4U);
    }
    loops = std::min<std::size_t>({loops, options.max_parallel, requests / 8});
    if (options.max_per_host != 0) {
        loops = std::min<std::size_t>(loops, options.max_per_host);
    }
    return static_cast<unsigned>(std::max<std::size_t>(loops, 1));
}

// Opens the destination roots (creating them); a loop's own: a DestinationRoot caches directory
// fds and is not thread-safe.
Result<std::vector<DestinationRoot>> open_roots(std::span<const std::filesystem::path> roots) {
    std::vector<DestinationRoot> opened_roots;
    for (const auto& root : roots) {
        auto opened = DestinationRoot::open(root);
        if (!opened) {
            return tl::unexpected(opened.error());
        }
        opened_roots.push_back(std::move(*opened));
    }
    return opened_roots;
}

// Returns loop `loop`'s share of `total` among `loops` (the shares add up to `total`).
unsigned split(unsigned total, unsigned loops, unsigned loop) {
    return total / loops + (loop < total % loops ? 1 : 0);
}

// Returns the expected bytes of `requests` (files of unknown size count 0).
std::uint64_t total_bytes(std::span<const DownloadRequest> requests) {
    std::uint64_t total = 0;
    for (const auto& request : requests) {
        total += request.expected_size == kUnknownSize ? 0 : request.expected_size;
    }
    return total;
}

// The events of several loops, passed on to one ProgressSink one at a time, each with the
// request's own index, and progress() with the bytes of every loop added up.
class SerialProgress {
  public:
    SerialProgress(ProgressSink* sink, unsigned loops)
        : sink_(sink), done_(loops, 0), total_(loops, 0) {}

    // One loop's events (its request indices are positions in `picked`).
    class Loop : public ProgressSink {
      public:
        Loop(SerialProgress& serial, unsigned loop, std::span<const std::size_t> picked)
            : serial_(serial), loop_(loop), picked_(picked) {}
        void file_started(std::size_t request_index, std::string_view url) override {
            std::lock_guard lock(serial_.mutex_);
            serial_.sink_->file_started(picked_[request_index], url);
        }
        void progress(std::uint64_t bytes_done, std::uint64_t bytes_total) override {
            std::lock_guard lock(serial_.mutex_);
            serial_.done_[loop_] = bytes_done;
            serial_.total_[loop_] = bytes_total;
            serial_.pass_progress();
        }
        void file_finished(std::size_t request_index, const FileResult& result) override {
            std::lock_guard lock(serial_.mutex_);
            serial_.sink_->file_finished(picked_[request_index], result);
        }

      private:
        SerialProgress& serial_;
        unsigned loop_;
        std::span<const std::size_t> picked_;
    };

    // After the loops: the final totals once more.
    void flush() {
        std::lock_guard lock(mutex_);
        pass_progress();
    }

  private:
    void pass_progress() {
        sink_->progress(std::accumulate(done_.begin(), done_.end(), std::uint64_t{0}),
                        std::accumulate(total_.begin(), total_.end(), std::uint64_t{0}));
    }

    ProgressSink* sink_;
    std::mutex mutex_;
    std::vector<std::uint64_t> done_;
    std::vector<std::uint64_t> total_;
};

// Runs one event loop over the requests `picked` names, on the calling thread: the loop's files
// are its positions in `picked` (FileResult and progress events by that position).
Result<DownloadReport> run_loop(const DownloadOptions& options, CURLM* multi, IoPool* pool,
                                std::span<const std::filesystem::path> roots,
                                std::vector<DestinationRoot>& opened_roots,
                                std::span<const DownloadRequest> requests,
                                std::span<const std::size_t> picked, ProgressSink* progress,
                                std::stop_token stop) {
    const double cpu_started = thread_cpu_seconds();
    curl_multi_setopt(multi, CURLMOPT_PIPELINING, static_cast<long>(CURLPIPE_MULTIPLEX));
    curl_multi_setopt(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS,
                      static_cast<long>(options.max_parallel));
    curl_multi_setopt(
        multi, CURLMOPT_MAX_HOST_CONNECTIONS,
        static_cast<long>(options.max_per_host == 0 ? options.max_parallel : options.max_per_host));
    curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, static_cast<long>(options.max_parallel * 2));

    Engine engine(options, multi, pool, opened_roots, progress, stop);
    engine.completions.set_multi(multi);
    engine.user_agent = user_agent_for(options);
    if (!append_request_headers(engine.headers, options)) {
        return make_error(ErrorCode::Io, "cannot allocate the request headers", "libcurl", ENOMEM);
    }
    engine.report.files.resize(picked.size());
    engine.transfers.reserve(picked.size());
    for (std::size_t index = 0; index < picked.size(); ++index) {
        const DownloadRequest& request = requests[picked[index]];
        auto transfer = std::make_unique<Transfer>();
        transfer->index = index;
        transfer->request = &request;
        transfer->expected_digest = to_lower(request.expected_digest);
        transfer->store_as_sent = transfer->expected_digest.empty();
        transfer->shown_path = (roots[request.root_index] / request.destination).string();
        transfer->engine = &engine;
        if (request.expected_size != kUnknownSize) {
            engine.bytes_total += request.expected_size;
        }
        engine.transfers.push_back(std::move(transfer));
        engine.queue.push_back(index);
    }
    // A stop request wakes the poll at once, from whichever thread makes it.
    std::stop_callback wake_on_stop(stop, [multi] { curl_multi_wakeup(multi); });

    if (options.budget) {
        engine.budget_client = options.budget->join([multi] { curl_multi_wakeup(multi); });
    }

    engine.loop();
    engine.budget_client = {};  // leaves the budget: no more wake-ups of this multi handle
    if (pool != nullptr) {
        pool->drain();
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
    report.loop_thread_cpu_seconds = thread_cpu_seconds() - cpu_started;
    return report;
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
    std::vector<CurlMulti> extra_multis;  // the loops after the first (DownloadOptions::loops)
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
    auto first_roots = open_roots(roots);
    if (!first_roots) {
        return tl::unexpected(first_roots.error());
    }
    // The files dealt out by size (each to the loop with the fewest bytes so far, in request
    // order); each loop gets its share of the limits. The first loop runs on this thread.
    const unsigned loops = loop_count(options_, requests.size());
    std::vector<std::vector<std::size_t>> picked(loops);
    std::vector<std::uint64_t> loaded(loops, 0);
    for (std::size_t index = 0; index < requests.size(); ++index) {
        const auto lightest = static_cast<std::size_t>(
            std::min_element(loaded.begin(), loaded.end()) - loaded.begin());
        picked[lightest].push_back(index);
        const std::uint64_t size = requests[index].expected_size;
        loaded[lightest] += size == kUnknownSize ? 0 : std::max<std::uint64_t>(size, 1);
    }
    while (impl_->extra_multis.size() + 1 < loops) {
        impl_->extra_multis.emplace_back(curl_multi_init());
    }
    std::vector<CURLM*> multis{impl_->ensure_multi()};
    for (unsigned loop = 1; loop < loops; ++loop) {
        multis.push_back(impl_->extra_multis[loop - 1].get());
    }
    if (std::find(multis.begin(), multis.end(), nullptr) != multis.end()) {
        return make_error(ErrorCode::Io, "cannot create a curl multi handle", "libcurl", ENOMEM);
    }
    // The IoPool serves one loop; several loops hash in their write callbacks.
    const unsigned io_threads = loops == 1 ? options_.io_threads : 0;
    if (io_threads > 0 && (!impl_->pool || impl_->pool->size() != io_threads)) {
        impl_->pool = std::make_unique<IoPool>(io_threads);
    } else if (io_threads == 0) {
        impl_->pool.reset();
    }
    const double io_cpu_started = impl_->pool ? impl_->pool->cpu_seconds() : 0.0;
    if (progress != nullptr) {
        progress->run_started(requests.size(), total_bytes(requests));
    }
    SerialProgress serial(progress, loops);
    std::vector<Result<DownloadReport>> reports(loops, DownloadReport{});
    const auto run_one = [&](unsigned loop) {
        DownloadOptions share = options_;
        share.max_parallel = split(options_.max_parallel, loops, loop);
        share.max_per_host =
            options_.max_per_host == 0 ? 0 : split(options_.max_per_host, loops, loop);
        SerialProgress::Loop events(serial, loop, picked[loop]);
        ProgressSink* sink = progress == nullptr ? nullptr : loops == 1 ? progress : &events;
        auto own_roots = loop == 0 ? std::move(first_roots) : open_roots(roots);
        if (!own_roots) {
            reports[loop] = tl::unexpected(own_roots.error());
            return;
        }
        reports[loop] = run_loop(share, multis[loop], impl_->pool.get(), roots, *own_roots,
                                 requests, picked[loop], sink, stop);
    };
    {
        std::vector<std::jthread> threads;
        for (unsigned loop = 1; loop < loops; ++loop) {
            threads.emplace_back(run_one, loop);
        }
        run_one(0);
    }
    DownloadReport report;
    report.files.resize(requests.size());
    for (unsigned loop = 0; loop < loops; ++loop) {
        if (!reports[loop]) {
            return tl::unexpected(reports[loop].error());
        }
        report.loop_thread_cpu_seconds += reports[loop]->loop_thread_cpu_seconds;
        report.add(std::move(*reports[loop]), picked[loop]);
    }
    if (progress != nullptr && loops > 1) {
        serial.flush();
    }
    report.io_thread_cpu_seconds = impl_->pool ? impl_->pool->cpu_seconds() - io_cpu_started : 0.0;
    report.wall_seconds = std::chrono::duration<double>(Clock::now() - started).count();
    return report;
}

}  // namespace rpmirror