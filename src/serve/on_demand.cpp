// See on_demand.hpp.
#include "serve/on_demand.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <span>

#include <fmt/core.h>

#include "checksum/hasher.hpp"
#include "fs/scratch_dir.hpp"
#include "fs/tree.hpp"
#include "serve/catalogue.hpp"
#include "store/object_store.hpp"
#include "sync/repo_source.hpp"
#include "sync/sync_settings.hpp"

namespace rpmirror::serve {

namespace {

// How long a reader waits before it looks at the spool file again: the Downloader tells its
// progress at most every 100 ms, so a reader also looks by itself.
constexpr std::chrono::milliseconds kLookAgain{50};

// Tells a Fetch what its Downloader does.
class FetchProgress final : public ProgressSink {
  public:
    explicit FetchProgress(Fetch& fetch) : fetch_(fetch) {}
    void file_started(std::size_t /*request_index*/, std::string_view /*url*/) override {
        fetch_.attempt_started();
    }
    void progress(std::uint64_t /*bytes_done*/, std::uint64_t /*bytes_total*/) override {
        fetch_.progressed();
    }

  private:
    Fetch& fetch_;
};

std::optional<std::uint64_t> size_of(int fd) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        return std::nullopt;
    }
    return static_cast<std::uint64_t>(st.st_size);
}

}  // namespace

Fetch::Fetch(WantedPackage wanted) : wanted_(std::move(wanted)) {}

std::filesystem::path Fetch::part_path() const {
    const std::filesystem::path destination = root_ / wanted_.key;
    return destination.parent_path() / part_file_name(destination.filename().string());
}

void Fetch::open_locked() {
    if (file_ || state_ != State::Running || root_.empty()) {
        return;
    }
    UniqueFd fd(::open(part_path().c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (fd) {
        file_ = std::make_shared<UniqueFd>(std::move(fd));
    }
}

void Fetch::begin(std::filesystem::path root) {
    std::lock_guard lock(mutex_);
    root_ = std::move(root);
}

void Fetch::attempt_started() {
    std::lock_guard lock(mutex_);
    ++attempt_;
    file_.reset();  // a new attempt may write a new .part
    changed_.notify_all();
}

void Fetch::progressed() {
    changed_.notify_all();
}

void Fetch::finished(Result<UniqueFd> file) {
    std::lock_guard lock(mutex_);
    if (file) {
        file_ = std::make_shared<UniqueFd>(std::move(*file));
        state_ = State::Verified;
    } else {
        error_ = std::move(file.error());
        state_ = State::Failed;
    }
    changed_.notify_all();
}

Result<std::size_t> Fetch::read(std::uint64_t position, char* buffer, std::size_t max,
                                unsigned& attempt) {
    std::unique_lock lock(mutex_);
    for (;;) {
        if (state_ == State::Failed) {
            return tl::unexpected(*error_);
        }
        if (attempt != 0 && attempt != attempt_) {
            return make_error(ErrorCode::Network,
                              "fetched again after bytes of an attempt that failed were sent",
                              wanted_.key);
        }
        open_locked();
        if (file_) {
            const auto have = size_of(file_->get());
            if (!have) {
                return make_errno_error("cannot stat the spooled package", wanted_.key, errno);
            }
            std::uint64_t limit = *have;
            if (state_ != State::Verified) {
                // The last byte waits for the verdict on the whole file.
                const std::uint64_t whole = wanted_.size > 0 ? wanted_.size : *have;
                limit = std::min(*have, whole > 0 ? whole - 1 : 0);
            }
            if (position < limit) {
                const std::size_t count = std::min<std::uint64_t>(max, limit - position);
                const ssize_t got =
                    ::pread(file_->get(), buffer, count, static_cast<off_t>(position));
                if (got < 0) {
                    return make_errno_error("cannot read the spooled package", wanted_.key, errno);
                }
                if (got > 0) {
                    attempt = attempt_;
                    return static_cast<std::size_t>(got);
                }
            } else if (state_ == State::Verified) {
                return std::size_t{0};
            }
        }
        changed_.wait_for(lock, kLookAgain);
    }
}

Result<void> Fetch::wait_started() {
    std::unique_lock lock(mutex_);
    for (;;) {
        if (state_ == State::Failed) {
            return tl::unexpected(*error_);
        }
        if (state_ == State::Verified) {
            return {};
        }
        open_locked();
        if (file_) {
            const auto have = size_of(file_->get());
            if (have && *have > 0) {
                return {};
            }
        }
        changed_.wait_for(lock, kLookAgain);
    }
}

Result<UniqueFd> Fetch::wait_verified() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return state_ != State::Running; });
    if (state_ == State::Failed) {
        return tl::unexpected(*error_);
    }
    UniqueFd fd(::fcntl(file_->get(), F_DUPFD_CLOEXEC, 0));
    if (!fd) {
        return make_errno_error("cannot duplicate a descriptor of", wanted_.key, errno);
    }
    return fd;
}

// One worker's own: its Downloader (whose connections its fetches reuse) and where it writes.
struct OnDemand::Worker {
    explicit Worker(const DownloadOptions& options) : downloader(options) {}
    Downloader downloader;
    std::unique_ptr<store::Staging> staging;  // an on-demand job's, once made
    std::optional<ScratchDir> scratch;        // a streamed job's, once made
};

OnDemand::OnDemand(JobCatalogue& catalogue, RepoConfig repo, const SyncOptions& options)
    : catalogue_(catalogue), repo_(std::move(repo)), policy_(options.download_policy) {
    download_options_ = options_for_repo(DownloadOptions{}, repo_, options);
    // The temporary file is read as it grows: one connection writes it in order.
    download_options_.connections_per_file = 1;
    max_fetches_ = std::max(1U, download_options_.max_parallel);
    // One file at a time per worker: its Downloader keeps a connection or two alive.
    download_options_.max_parallel = 1;
}

OnDemand::~OnDemand() {
    std::vector<std::jthread> workers;
    std::deque<std::shared_ptr<Fetch>> queued;
    {
        std::lock_guard lock(mutex_);
        workers.swap(workers_);
        queued.swap(queue_);
    }
    workers.clear();  // each stopped (the wait, its Downloader's stop token) and joined
    for (const auto& fetch : queued) {
        fetch->finished(
            make_error(ErrorCode::Interrupted, "the server is stopping", fetch->wanted().key));
    }
}

Result<std::shared_ptr<MirrorList>> OnDemand::mirrors() {
    std::lock_guard lock(mutex_);
    if (!mirrors_) {
        auto source = resolve_mirrors(repo_, download_options_, {});
        if (!source) {
            return tl::unexpected(std::move(source.error()));
        }
        mirrors_ = std::make_shared<MirrorList>(std::move(source->base_urls),
                                                download_options_.demote_mirror_after);
    }
    return mirrors_;
}

Result<std::shared_ptr<Fetch>> OnDemand::fetch(const WantedPackage& wanted) {
    std::lock_guard lock(mutex_);
    if (const auto running = running_.find(wanted.key); running != running_.end()) {
        return running->second;
    }
    if (policy_ == DownloadPolicy::OnDemand) {
        auto held = catalogue_.holds(wanted.key);
        if (!held) {
            return tl::unexpected(std::move(held.error()));
        }
        if (*held) {
            return std::shared_ptr<Fetch>();
        }
    }
    auto fetch = std::make_shared<Fetch>(wanted);
    running_.emplace(wanted.key, fetch);
    queue_.push_back(fetch);
    // A worker more iff the queue outnumbers the workers free for it, up to the bound.
    if (queue_.size() > idle_ && workers_.size() < max_fetches_) {
        workers_.emplace_back([this](std::stop_token stop) { work(std::move(stop)); });
    }
    queued_.notify_one();
    return fetch;
}

void OnDemand::work(std::stop_token stop) {
    Worker worker(download_options_);
    std::unique_lock lock(mutex_);
    ++idle_;
    for (;;) {
        if (!queued_.wait(lock, stop, [&] { return !queue_.empty(); })) {
            return;  // stopping
        }
        std::shared_ptr<Fetch> fetch = std::move(queue_.front());
        queue_.pop_front();
        --idle_;
        lock.unlock();
        run(worker, *fetch, stop);  // counts this worker free again before the fetch ends
        lock.lock();
    }
}

void OnDemand::run(Worker& worker, Fetch& fetch, std::stop_token stop) {
    const WantedPackage& wanted = fetch.wanted();
    const auto started = std::chrono::steady_clock::now();
    Result<UniqueFd> fetched = fetch_one(worker, fetch, stop);
    if (counters_ != nullptr) {
        const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::steady_clock::now() - started);
        counters_->upstream_fetches.fetch_add(1, std::memory_order_relaxed);
        counters_->upstream_milliseconds.fetch_add(static_cast<std::uint64_t>(took.count()),
                                                   std::memory_order_relaxed);
        if (!fetched) {
            counters_->upstream_failures.fetch_add(1, std::memory_order_relaxed);
        }
    }
    const std::optional<std::string> failure =
        fetched ? std::nullopt
                : std::optional<std::string>(
                      fmt::format("{}: {}: not fetched from upstream, nothing kept: {}",
                                  catalogue_.name(), wanted.key, fetched.error().to_string()));
    {
        // Free before the last byte is released: the client's next miss finds this worker (and
        // its connection) rather than starting another.
        std::lock_guard lock(mutex_);
        ++idle_;
    }
    fetch.finished(std::move(fetched));
    {
        std::lock_guard lock(mutex_);
        running_.erase(wanted.key);
    }
    // Told once the fetch is forgotten: the next request fetches again.
    if (failure && warn_) {
        warn_(*failure);
    }
}

Result<UniqueFd> OnDemand::fetch_one(Worker& worker, Fetch& fetch, std::stop_token stop) {
    const WantedPackage& wanted = fetch.wanted();
    std::filesystem::path root;
    if (policy_ == DownloadPolicy::OnDemand) {
        if (!worker.staging) {
            auto staging = catalogue_.stage(store::StageOptions{});
            if (!staging) {
                return tl::unexpected(std::move(staging.error()));
            }
            worker.staging = std::move(*staging);
        }
        root = worker.staging->directory();
    } else {
        if (!worker.scratch) {
            auto made = ScratchDir::create("rpmirror-serve-spool");
            if (!made) {
                return tl::unexpected(std::move(made.error()));
            }
            worker.scratch.emplace(std::move(*made));
        }
        root = worker.scratch->path();
    }
    fetch.begin(root);
    auto mirrors = this->mirrors();
    if (!mirrors) {
        return tl::unexpected(std::move(mirrors.error()));
    }
    DownloadRequest request;
    request.mirrors = *mirrors;
    request.href = wanted.key;
    request.destination = wanted.key;
    request.checksum_type = wanted.checksum_type;
    request.expected_digest = wanted.digest;
    request.expected_size = wanted.size > 0 ? wanted.size : kUnknownSize;
    FetchProgress progress(fetch);
    auto report =
        worker.downloader.run(root, std::span<const DownloadRequest>(&request, 1), &progress, stop);
    const std::filesystem::path path = root / wanted.key;
    const bool done = report && (report->files.front().status == FileStatus::Downloaded ||
                                 report->files.front().status == FileStatus::AlreadyPresent);
    if (!done) {
        // Nothing kept: not the bytes of a failed attempt either (a kill leaves them to the
        // next fetch, which resumes them, or to the next sync).
        (void)fs::remove_file(path.parent_path() / part_file_name(path.filename().string()));
        if (!report) {
            return tl::unexpected(std::move(report.error()));
        }
        if (const auto& error = report->files.front().error) {
            return tl::unexpected(*error);
        }
        return make_error(ErrorCode::Interrupted, "the server is stopping", wanted.key);
    }
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) {
        return make_errno_error("cannot open the fetched package", path.string(), errno);
    }
    if (policy_ == DownloadPolicy::OnDemand) {
        // Kept before the last byte is released: a client that received the whole package finds
        // it held.
        store::StagedFile staged;
        staged.key = wanted.key;
        staged.type = wanted.checksum_type;
        staged.digest = report->files.front().digest;
        if (auto kept = catalogue_.keep(*worker.staging, std::move(staged)); !kept && warn_) {
            warn_(fmt::format("{}: {}: fetched and verified but not kept: {}", catalogue_.name(),
                              wanted.key, kept.error().to_string()));
        } else if (struct stat st{}; kept && on_kept_ && ::fstat(fd.get(), &st) == 0) {
            // Before the last byte is released too: a client that received the whole package
            // finds the mirror back under its bound.
            on_kept_(wanted.key, static_cast<std::uint64_t>(st.st_size));
        }
    } else {
        (void)fs::remove_file(path);  // streamed: nothing kept; the descriptor stays readable
    }
    return fd;
}

}  // namespace rpmirror::serve
