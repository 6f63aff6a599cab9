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

#include "serve/catalogue.hpp"
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

Fetch::Fetch(WantedPackage wanted, std::filesystem::path spool)
    : wanted_(std::move(wanted)), spool_(std::move(spool)) {}

std::filesystem::path Fetch::part_path() const {
    const std::filesystem::path destination = spool_ / wanted_.key;
    return destination.parent_path() / part_file_name(destination.filename().string());
}

void Fetch::open_locked() {
    if (file_ || state_ != State::Running) {
        return;
    }
    UniqueFd fd(::open(part_path().c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (fd) {
        file_ = std::make_shared<UniqueFd>(std::move(fd));
    }
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

void Fetch::finished(Result<std::filesystem::path> file) {
    std::lock_guard lock(mutex_);
    if (file) {
        UniqueFd fd(::open(file->c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
        if (fd) {
            file_ = std::make_shared<UniqueFd>(std::move(fd));
            state_ = State::Verified;
        } else {
            error_ =
                make_errno_error("cannot open the fetched package", file->string(), errno).value();
            state_ = State::Failed;
        }
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

OnDemand::OnDemand(JobCatalogue& catalogue, RepoConfig repo, const SyncOptions& options)
    : catalogue_(catalogue), repo_(std::move(repo)), policy_(options.download_policy) {
    download_options_ = options_for_repo(DownloadOptions{}, repo_, options);
    // The spool file is read as it grows: one connection writes it in order.
    download_options_.connections_per_file = 1;
}

OnDemand::~OnDemand() {
    std::list<std::pair<std::shared_ptr<std::atomic<bool>>, std::jthread>> threads;
    {
        std::lock_guard lock(mutex_);
        threads.swap(threads_);
    }
    threads.clear();  // each stopped (its Downloader's stop token) and joined
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
    threads_.remove_if([](const auto& thread) { return thread.first->load(); });
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
    if (!spool_) {
        auto made = ScratchDir::create("rpmirror-serve-spool");
        if (!made) {
            return tl::unexpected(std::move(made.error()));
        }
        spool_.emplace(std::move(*made));
    }
    const std::filesystem::path spool = spool_->path() / std::to_string(++spooled_);
    std::error_code failed;
    std::filesystem::create_directories(spool, failed);
    if (failed) {
        return make_errno_error("cannot create the spool directory", spool.string(),
                                failed.value());
    }
    auto fetch = std::make_shared<Fetch>(wanted, spool);
    running_.emplace(wanted.key, fetch);
    auto done = std::make_shared<std::atomic<bool>>(false);
    threads_.emplace_back(done, std::jthread([this, fetch, spool, done](std::stop_token stop) {
                              run(fetch, spool, std::move(stop));
                              done->store(true);
                          }));
    return fetch;
}

void OnDemand::run(std::shared_ptr<Fetch> fetch, std::filesystem::path spool,
                   std::stop_token stop) {
    const WantedPackage& wanted = fetch->wanted();
    const auto started = std::chrono::steady_clock::now();
    auto fetched = [&]() -> Result<std::filesystem::path> {
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
        Downloader downloader(download_options_);
        FetchProgress progress(*fetch);
        auto report =
            downloader.run(spool, std::span<const DownloadRequest>(&request, 1), &progress, stop);
        if (!report) {
            return tl::unexpected(std::move(report.error()));
        }
        const FileResult& file = report->files.front();
        if (file.status == FileStatus::Downloaded || file.status == FileStatus::AlreadyPresent) {
            return spool / wanted.key;
        }
        if (file.error) {
            return tl::unexpected(*file.error);
        }
        return make_error(ErrorCode::Interrupted, "the server is stopping", wanted.key);
    }();
    const std::optional<std::filesystem::path> verified =
        fetched ? std::optional<std::filesystem::path>(*fetched) : std::nullopt;
    if (counters_ != nullptr) {
        const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::steady_clock::now() - started);
        counters_->upstream_fetches.fetch_add(1, std::memory_order_relaxed);
        counters_->upstream_milliseconds.fetch_add(static_cast<std::uint64_t>(took.count()),
                                                   std::memory_order_relaxed);
        if (!verified) {
            counters_->upstream_failures.fetch_add(1, std::memory_order_relaxed);
        }
    }
    const std::optional<std::string> failure =
        fetched ? std::nullopt
                : std::optional<std::string>(
                      fmt::format("{}: {}: not fetched from upstream, nothing kept: {}",
                                  catalogue_.name(), wanted.key, fetched.error().to_string()));
    // Kept before the last byte is released: a client that received the whole package finds it
    // held (the store copies from the spool file).
    if (verified && policy_ == DownloadPolicy::OnDemand) {
        if (auto kept = catalogue_.keep(wanted.key, *verified); !kept && warn_) {
            warn_(fmt::format("{}: {}: fetched and verified but not kept: {}", catalogue_.name(),
                              wanted.key, kept.error().to_string()));
        }
    }
    fetch->finished(std::move(fetched));
    {
        std::lock_guard lock(mutex_);
        running_.erase(wanted.key);
    }
    // Told once the fetch is forgotten: the next request fetches again.
    if (failure && warn_) {
        warn_(*failure);
    }
    std::error_code ignored;
    std::filesystem::remove_all(spool, ignored);  // open descriptors stay readable
}

}  // namespace rpmirror::serve
