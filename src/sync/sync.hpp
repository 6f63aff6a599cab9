// The sync stage: one repository, end to end, as `dnf reposync` does it but safely:
//   repo config -> mirrors (baseurl, mirrorlist, metalink) -> repomd.xml (metalink-verified) ->
//   primary.xml (checksummed, streamed) -> selection -> plan against the local tree ->
//   downloads (with existing files verified on worker threads meanwhile) -> metadata published
//   last and atomically -> stale packages deleted -> state file for the next no-op.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "download/download.hpp"
#include "index/index.hpp"
#include "rpmirror/config/config.hpp"
#include "rpmirror/dedupe/dedupe.hpp"
#include "rpmirror/s3/s3.hpp"
#include "rpmirror/sync/sync_options.hpp"
#include "rpmirror/sync/sync_report.hpp"
#include "rpmirror/util/error.hpp"
#include "store/repo_lock.hpp"

namespace rpmirror {

// Syncs repositories one after another over one Downloader, so connections are reused across
// repositories. Not thread-safe: one sync at a time; `stop` may be triggered from any thread.
class Syncer {
  public:
    explicit Syncer(DownloadOptions base_options = {});

    // Syncs `repo` with `options`. Never throws for repository or package failures: they are in
    // the report (a failing repository does not stop the caller from syncing the next one).
    // Download options are `base_options` adjusted by the repository's configuration (TLS,
    // proxy, credentials, retries, timeouts, throttle). The repository is locked for the whole
    // sync (lock_repository; not with -u) unless the caller passes the lock it holds as `held`
    // (verify --repair), which the sync then confirms before each change. A repository that lies
    // elsewhere than the one locked (--upstream-layout's release, a tree's variant) is locked at
    // its own place too.
    RepoSyncReport sync(const RepoConfig& repo, const SyncOptions& options,
                        ProgressSink* progress = nullptr, std::stop_token stop = {},
                        RepoLock* held = nullptr);

  private:
    DownloadOptions base_options_;
    Downloader downloader_;
};

// The state directory `options` name: options.state_dir, or the default when it is empty.
std::filesystem::path state_directory(const SyncOptions& options);

// Takes the lock of the repository `repo_id` names under `options`: the run lock of its
// directory (repo_directory) in the state directory, or the lease of its s3:// prefix, waiting
// `options.lock_wait` at most, through the repository's store (store::MirrorStore::lock).
// Returns Error{Busy} naming the holder ("repository directory ... is being synced by another
// rpmirror (pid N)", "s3://BUCKET/KEY: being synced by OWNER until TIME") iff another run holds
// it, Error{Interrupted} iff `stop` was requested while waiting, Error{Io} iff the state
// directory cannot be used, the store's error for a bucket (and, first, the refusal of an option
// a bucket cannot honour).
Result<std::unique_ptr<RepoLock>> lock_repository(const SyncOptions& options,
                                                  std::string_view repo_id,
                                                  std::stop_token stop = {});

// Returns the directory holding `repo_id`'s packages under `options` (dnf reposync's layout):
// <download_path>/<repo_id>, or <download_path> with --norepopath.
std::filesystem::path repo_directory(const SyncOptions& options, std::string_view repo_id);

// Returns the directory holding `repo_id`'s repodata/: <metadata_path>/<repo_id> with
// --metadata-path (<metadata_path> itself with --norepopath too), else repo_directory().
std::filesystem::path metadata_directory(const SyncOptions& options, std::string_view repo_id);

}  // namespace rpmirror
