// The staging areas of the stores (store/staging.hpp).
#include "store/staging.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "fs/durable.hpp"
#include "fs/tree.hpp"
#include "store/spool.hpp"

namespace rpmirror::store {

namespace {

// What a StagedFile became once its judge (if any) ran: nullopt iff it is to be stored.
std::optional<Committed> judged(std::size_t ticket, const StagedFile& file,
                                const std::filesystem::path& path, const std::stop_token& stop,
                                const std::string& shown) {
    Committed done;
    done.ticket = ticket;
    if (stop.stop_requested()) {
        done.error = Error{ErrorCode::Interrupted, "interrupted", shown};
        return done;
    }
    if (file.judge && !file.judge(path)) {
        done.refused = true;
        done.error = Error{ErrorCode::Unsafe, "refused by the check before storing", shown};
        return done;
    }
    if (file.judge_only) {
        return done;
    }
    return std::nullopt;
}

class InPlaceStaging final : public Staging {
  public:
    InPlaceStaging(ObjectStore& store, std::filesystem::path root, bool durable)
        : store_(store), root_(std::move(root)), durable_(durable) {}

    const std::filesystem::path& directory() const override { return root_; }
    bool in_place() const override { return true; }
    std::uint64_t capacity() const override { return UINT64_MAX; }
    bool in_memory() const override { return false; }
    const std::optional<std::string>& warning() const override { return warning_; }

    void commit(std::size_t ticket, StagedFile file) override {
        queue_.emplace_back(ticket, std::move(file));
    }

    std::vector<Committed> wait() override {
        std::vector<Committed> done;
        std::vector<std::filesystem::path> flushed;  // durable_: the files stored, their dirs
        for (auto& [ticket, file] : std::exchange(queue_, {})) {
            const std::filesystem::path path = root_ / file.key;
            if (auto early = judged(ticket, file, path, {}, store_.describe(file.key))) {
                if (early->refused) {
                    (void)fs::remove_file(path);
                }
                done.push_back(std::move(*early));
                continue;
            }
            Committed one;
            one.ticket = ticket;
            auto info = store_.stat(file.key);
            if (!info) {
                one.error = std::move(info.error());
            } else if (!*info) {
                one.error =
                    Error{ErrorCode::NotFound, "was not made in place", store_.describe(file.key)};
            } else {
                one.stored = std::move(**info);
                if (durable_) {
                    flushed.push_back(root_ / file.key);
                    flushed.push_back((root_ / file.key).parent_path());
                }
            }
            done.push_back(std::move(one));
        }
        if (auto flush = flush_stored(flushed); !flush) {
            for (Committed& one : done) {
                if (one.stored) {
                    one.stored.reset();
                    one.error = flush.error();
                }
            }
        }
        return done;
    }

  private:
    // fs::flush_files of `paths`, each once.
    static Result<void> flush_stored(std::vector<std::filesystem::path>& paths) {
        std::sort(paths.begin(), paths.end());
        paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
        return paths.empty() ? Result<void>{} : fs::flush_files(paths);
    }

    ObjectStore& store_;
    std::filesystem::path root_;
    bool durable_;
    std::optional<std::string> warning_;
    std::vector<std::pair<std::size_t, StagedFile>> queue_;
};

class SpoolStaging final : public Staging {
  public:
    SpoolStaging(const StageOptions& options, S3Spool spool,
                 std::function<CommitFile(std::atomic<std::uint64_t>&)> make_worker,
                 std::function<std::string(std::string_view)> describe)
        : options_(options),
          spool_(std::move(spool)),
          make_worker_(std::move(make_worker)),
          describe_(std::move(describe)) {}

    ~SpoolStaging() override {
        (void)wait();
        stop_workers();
        (void)fs::remove_tree(spool_.dir);
    }

    const std::filesystem::path& directory() const override { return spool_.dir; }
    bool in_place() const override { return false; }
    std::uint64_t capacity() const override { return options_.capacity; }
    bool in_memory() const override { return spool_.in_memory; }
    const std::optional<std::string>& warning() const override { return spool_.warning; }
    std::uint64_t requests() const override { return requests_.load(); }

    // Threads (start()ed) take from the queue; without them wait() commits it.
    void start() {
        for (unsigned worker = 0; worker < std::max(1U, options_.parallel); ++worker) {
            workers_.emplace_back([this] { work(); });
        }
    }

    void commit(std::size_t ticket, StagedFile file) override {
        {
            const std::lock_guard lock(mutex_);
            queue_.emplace_back(ticket, std::move(file));
            ++pending_;
        }
        changed_.notify_one();
    }

    std::vector<Committed> wait() override {
        if (workers_.empty()) {
            const CommitFile store = make_worker_(requests_);
            while (!queue_.empty()) {
                auto [ticket, file] = std::move(queue_.front());
                queue_.pop_front();
                done_.push_back(commit_one(store, ticket, file));
            }
            pending_ = 0;
            return std::exchange(done_, {});
        }
        std::unique_lock lock(mutex_);
        idle_.wait(lock, [this] { return pending_ == 0; });
        return std::exchange(done_, {});
    }

  private:
    Committed commit_one(const CommitFile& store, std::size_t ticket, const StagedFile& file) {
        const std::filesystem::path path = (spool_.dir / file.key).lexically_normal();
        const std::string shown = describe_(file.key);
        std::optional<Committed> early = judged(ticket, file, path, options_.stop, shown);
        Committed one;
        one.ticket = ticket;
        if (early) {
            one = std::move(*early);
        } else if (auto stored = store(file, path); stored) {
            one.stored = std::move(*stored);
        } else {
            one.error = std::move(stored.error());
        }
        (void)fs::remove_file(path);
        return one;
    }

    void work() {
        const CommitFile store = make_worker_(requests_);
        for (;;) {
            std::pair<std::size_t, StagedFile> next;
            {
                std::unique_lock lock(mutex_);
                changed_.wait(lock, [this] { return closed_ || !queue_.empty(); });
                if (queue_.empty()) {
                    return;
                }
                next = std::move(queue_.front());
                queue_.pop_front();
            }
            Committed one = commit_one(store, next.first, next.second);
            const std::lock_guard lock(mutex_);
            done_.push_back(std::move(one));
            if (--pending_ == 0) {
                idle_.notify_all();
            }
        }
    }

    void stop_workers() {
        {
            const std::lock_guard lock(mutex_);
            closed_ = true;
        }
        changed_.notify_all();
        workers_.clear();  // joins
    }

    StageOptions options_;
    S3Spool spool_;
    std::function<CommitFile(std::atomic<std::uint64_t>&)> make_worker_;
    std::function<std::string(std::string_view)> describe_;
    std::atomic<std::uint64_t> requests_{0};
    std::mutex mutex_;
    std::condition_variable changed_;
    std::condition_variable idle_;
    std::deque<std::pair<std::size_t, StagedFile>> queue_;
    std::size_t pending_ = 0;  // queued or being committed
    bool closed_ = false;
    std::vector<Committed> done_;
    std::vector<std::jthread> workers_;
};

}  // namespace

std::unique_ptr<Staging> in_place_staging(ObjectStore& store, std::filesystem::path root,
                                          bool durable) {
    return std::make_unique<InPlaceStaging>(store, std::move(root), durable);
}

Result<std::unique_ptr<Staging>> spool_staging(
    const StageOptions& options, bool threads,
    std::function<CommitFile(std::atomic<std::uint64_t>& requests)> make_worker,
    std::function<std::string(std::string_view key)> describe) {
    auto spool = create_s3_spool(options.spool_dir, options.capacity);
    if (!spool) {
        return tl::unexpected(std::move(spool.error()));
    }
    auto staging = std::make_unique<SpoolStaging>(options, std::move(*spool),
                                                  std::move(make_worker), std::move(describe));
    if (threads) {
        staging->start();
    }
    return std::unique_ptr<Staging>(std::move(staging));
}

}  // namespace rpmirror::store
