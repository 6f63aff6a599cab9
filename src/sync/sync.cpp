// One repository, end to end: Syncer::sync runs a RepoSync (sync/repo_sync.hpp) under the
// repository's lock; and where a sync's directories and state are.
#include "sync/sync.hpp"

#include <chrono>

#include "fs/state.hpp"
#include "store/destination.hpp"
#include "store/sync_store.hpp"
#include "sync/repo_sync.hpp"
#include "sync/sync_settings.hpp"
#include "sync/tree.hpp"

namespace rpmirror {

std::string describe_in_mirror(const RepoSyncReport& report,
                               const std::filesystem::path& relative) {
    return store::Destination::of(report.repo_dir.native()).describe(relative);
}

std::filesystem::path state_directory(const SyncOptions& options) {
    return options.state_dir.empty() ? fs::default_state_dir() : options.state_dir;
}

namespace {

// A lock with what taking it cost (on the requests of a store now gone: a bucket's lease).
class AcquiredLock final : public RepoLock {
  public:
    AcquiredLock(std::unique_ptr<RepoLock> lock, std::uint64_t acquired)
        : lock_(std::move(lock)), acquired_(acquired) {}
    Result<void> confirm() override { return lock_->confirm(); }
    std::vector<std::string> warnings() const override { return lock_->warnings(); }
    std::uint64_t requests() const override { return acquired_ + lock_->requests(); }

  private:
    std::unique_ptr<RepoLock> lock_;
    std::uint64_t acquired_ = 0;
};

}  // namespace

Result<std::unique_ptr<RepoLock>> lock_repository(const SyncOptions& options,
                                                  std::string_view repo_id, std::stop_token stop) {
    auto mirror = store::SyncStore::open(sync_store_options(options, repo_id));
    if (!mirror) {
        return tl::unexpected(std::move(mirror.error()));
    }
    auto lock = (*mirror)->lock(options.lock_wait, std::move(stop));
    if (!lock) {
        return tl::unexpected(std::move(lock.error()));
    }
    const std::uint64_t acquired = (*mirror)->requests();
    if (acquired == 0) {
        return lock;
    }
    return std::unique_ptr<RepoLock>(std::make_unique<AcquiredLock>(std::move(*lock), acquired));
}

std::filesystem::path repo_directory(const SyncOptions& options, std::string_view repo_id) {
    return options.norepopath ? options.download_path : options.download_path / repo_id;
}

std::filesystem::path metadata_directory(const SyncOptions& options, std::string_view repo_id) {
    if (!options.metadata_path) {
        return repo_directory(options, repo_id);
    }
    // As dnf-plugins-core since RHEL-40914 (4.3.1, Debian 12's, still adds the repo id).
    return options.norepopath ? *options.metadata_path : *options.metadata_path / repo_id;
}

Syncer::Syncer(DownloadOptions base_options)
    : base_options_(base_options), downloader_(std::move(base_options)) {}

RepoSyncReport Syncer::sync(const RepoConfig& repo, const SyncOptions& options,
                            ProgressSink* progress, std::stop_token stop, RepoLock* held) {
    const auto started = std::chrono::steady_clock::now();
    RepoSyncReport report;
    std::unique_ptr<RepoLock> own;
    RepoLock* lock = held;
    if (lock == nullptr && !options.urls_only) {
        auto locked = lock_repository(options, repo.id, stop);
        if (!locked) {
            report.repo_id = repo.id;
            report.repo_dir = repo_directory(options, repo.id);
            report.error = std::move(locked.error());
            return report;
        }
        own = std::move(*locked);
        lock = own.get();
    }
    const HeldLock root{lock, repo_directory(options, repo.id)};
    downloader_.set_options(options_for_repo(base_options_, repo, options));
    const auto sync_one = [&](const RepoConfig& one, const SyncOptions& one_options) {
        RepoSyncReport part;
        RepoSync repo_sync(downloader_, one, one_options, progress, stop, part, root);
        if (auto synced = repo_sync.run(); !synced) {
            part.error = std::move(synced.error());
        }
        repo_sync.record_requests();
        return part;
    };
    // --treeinfo: the tree's repositories, each as above, beneath its images and .treeinfo.
    report = options.treeinfo
                 ? sync_tree(downloader_, repo, options, sync_one, lock, progress, stop)
                 : sync_one(repo, options);
    if (own) {
        const std::vector<std::string> warnings = own->warnings();
        report.warnings.insert(report.warnings.begin(), warnings.begin(), warnings.end());
        report.s3_requests += own->requests();
    }
    if (stop.stop_requested() && !report.error) {
        report.error = Error{ErrorCode::Interrupted, "interrupted", repo.id, 0};
    }
    report.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return report;
}

}  // namespace rpmirror
