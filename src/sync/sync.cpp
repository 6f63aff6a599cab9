// One repository, end to end: Syncer::sync runs a RepoSync (sync/repo_sync.hpp) under the
// repository's lock; and where a sync's directories and state are.
#include "rpmirror/sync.hpp"

#include <chrono>

#include "fs/state.hpp"
#include "sync/repo_sync.hpp"
#include "sync/sync_settings.hpp"
#include "sync/tree.hpp"

namespace rpmirror {

std::filesystem::path state_directory(const SyncOptions& options) {
    return options.state_dir.empty() ? fs::default_state_dir() : options.state_dir;
}

namespace {

class HeldRunLock final : public RepoLock {
  public:
    explicit HeldRunLock(fs::RunLock lock) : lock_(std::move(lock)) {}

  private:
    fs::RunLock lock_;
};

}  // namespace

Result<std::unique_ptr<RepoLock>> lock_repository(const SyncOptions& options,
                                                  const std::filesystem::path& repo_dir,
                                                  std::stop_token stop) {
    auto lock = fs::RunLock::acquire(state_directory(options), repo_dir, options.lock_wait,
                                     std::move(stop));
    if (!lock) {
        return tl::unexpected(std::move(lock.error()));
    }
    return std::unique_ptr<RepoLock>(std::make_unique<HeldRunLock>(std::move(*lock)));
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
                            ProgressSink* progress, std::stop_token stop) {
    const auto started = std::chrono::steady_clock::now();
    RepoSyncReport report;
    std::unique_ptr<RepoLock> lock;
    // An s3:// destination has no local directory to lock (the store's lease: s3/lease.hpp).
    if (options.take_lock && !options.urls_only && !is_s3_destination(options)) {
        auto locked = lock_repository(options, repo_directory(options, repo.id), stop);
        if (!locked) {
            report.repo_id = repo.id;
            report.repo_dir = repo_directory(options, repo.id);
            report.error = std::move(locked.error());
            return report;
        }
        lock = std::move(*locked);
    }
    downloader_.set_options(options_for_repo(base_options_, repo, options));
    const auto sync_one = [&](const RepoConfig& one, const SyncOptions& one_options) {
        RepoSyncReport part;
        RepoSync repo_sync(downloader_, one, one_options, progress, stop, part);
        if (auto synced = repo_sync.run(); !synced) {
            part.error = std::move(synced.error());
        }
        repo_sync.record_s3_requests();
        return part;
    };
    // --treeinfo: the tree's repositories, each as above, beneath its images and .treeinfo.
    report = options.treeinfo ? sync_tree(downloader_, repo, options, sync_one, progress, stop)
                              : sync_one(repo, options);
    if (stop.stop_requested() && !report.error) {
        report.error = Error{ErrorCode::Interrupted, "interrupted", repo.id, 0};
    }
    report.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return report;
}

}  // namespace rpmirror
