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

#include "rpmirror/config.hpp"
#include "rpmirror/download.hpp"
#include "rpmirror/error.hpp"
#include "rpmirror/index.hpp"

namespace rpmirror {

struct SyncOptions {
    std::filesystem::path download_path = ".";             // -p
    std::optional<std::filesystem::path> metadata_path;    // --metadata-path
    bool norepopath = false;                               // --norepopath
    bool download_metadata = false;                        // --download-metadata
    bool delete_unlisted = false;                          // --delete
    bool urls_only = false;                                // -u: list URLs, download nothing
    bool use_checksum_cache = true;                        // verify existing files via xattrs
    std::optional<std::filesystem::path> safe_write_path;  // --safe-write-path
    // --arch, --source, --newest-only, --min-buildtime. The repository's includepkgs and
    // excludepkgs are added to these by sync_repository.
    SelectionOptions selection;
    unsigned verify_threads = 0;  // 0 = all cores
    // -j: concurrent downloads for every repository, over the repositories'
    // max_parallel_downloads (which applies only when set in their configuration).
    std::optional<unsigned> parallel;
    // --gpgcheck, with dnf reposync's meaning: in repositories with gpgcheck=1, every package
    // (downloaded or kept) is checked against the repository's gpgkey; one that fails is removed
    // and reported as a failure. Repositories with gpgcheck=0 are not checked.
    bool check_package_signatures = false;
    // --state-dir: where rpmirror keeps its state and locks, outside the mirror; empty = the
    // default ($RPMIRROR_STATE_DIR, /var/lib/rpmirror for root, $XDG_STATE_HOME/rpmirror).
    std::filesystem::path state_dir;
    // The run lock of the repository directory: taken for the whole sync (not with -u).
    // Without `lock_wait` a sync fails at once when another rpmirror holds it; with it, waits
    // that long (--wait-lock). `take_lock` is false only for a caller that holds the lock
    // itself (lock_repository).
    std::optional<std::chrono::seconds> lock_wait;
    bool take_lock = true;
    // --installroot: the system dnf would act on; its rpm database holds the keys dnf's
    // --gpgcheck trusts. "/" = this system.
    std::filesystem::path installroot = "/";
};

struct PackageFailure {
    std::string package;                // NEVRA
    std::string reason;                 // the final error
    std::vector<std::string> attempts;  // "URL: what happened", in order
};

struct RepoSyncReport {
    std::string repo_id;
    std::filesystem::path repo_dir;  // where its packages are
    std::optional<Error> error;      // set iff the repository as a whole failed
    // Set with `error` iff it was fetching the metadata (mirror list, repomd.xml, primary.xml)
    // that failed: what a repository's skip_if_unavailable=1 turns into a warning.
    bool metadata_unavailable = false;
    bool noop = false;                  // nothing to do: repomd.xml and every file unchanged
    std::size_t upstream_packages = 0;  // packages primary.xml lists
    std::size_t selected = 0;           // packages the filters kept
    std::size_t downloaded = 0;         // fetched and verified in this run
    std::uint64_t bytes_downloaded = 0;
    std::size_t kept = 0;      // already present and verified
    std::size_t replaced = 0;  // present but wrong (size or checksum): downloaded again
    std::size_t resumed = 0;   // continued from a .part of an earlier run
    std::size_t retries = 0;
    std::vector<std::filesystem::path> deleted;  // --delete, relative to repo_dir
    std::vector<PackageFailure> failures;
    std::size_t signatures_checked = 0;  // --gpgcheck: packages whose signature was checked
    bool metadata_published = false;
    std::vector<std::string> urls;      // -u
    std::vector<std::string> warnings;  // e.g. metadata kept back, packages filtered out
    double seconds = 0;

    // Returns true iff the repository synced completely.
    bool ok() const { return !error && failures.empty(); }
};

// Syncs repositories one after another over one Downloader, so connections are reused across
// repositories. Not thread-safe: one sync at a time; `stop` may be triggered from any thread.
class Syncer {
  public:
    explicit Syncer(DownloadOptions base_options = {});

    // Syncs `repo` with `options`. Never throws for repository or package failures: they are in
    // the report (a failing repository does not stop the caller from syncing the next one).
    // Download options are `base_options` adjusted by the repository's configuration (TLS,
    // proxy, credentials, retries, timeouts, throttle).
    RepoSyncReport sync(const RepoConfig& repo, const SyncOptions& options,
                        ProgressSink* progress = nullptr, std::stop_token stop = {});

  private:
    DownloadOptions base_options_;
    Downloader downloader_;
};

// The state directory `options` name: options.state_dir, or the default when it is empty.
std::filesystem::path state_directory(const SyncOptions& options);

// A held run lock of one repository directory (released when destroyed).
class RepoLock {
  public:
    virtual ~RepoLock() = default;
};

// Takes the run lock of `repo_dir` in `options`' state directory, waiting `options.lock_wait`
// at most, as a sync does. Returns Error{Busy} "repository directory ... is being synced by
// another rpmirror (pid N)" iff another process holds it, Error{Interrupted} iff `stop` was
// requested while waiting, Error{Io} iff the state directory cannot be used.
Result<std::unique_ptr<RepoLock>> lock_repository(const SyncOptions& options,
                                                  const std::filesystem::path& repo_dir,
                                                  std::stop_token stop = {});

// Returns the directory holding `repo_id`'s packages under `options` (dnf reposync's layout):
// <download_path>/<repo_id>, or <download_path> with --norepopath.
std::filesystem::path repo_directory(const SyncOptions& options, std::string_view repo_id);

// Returns the directory holding `repo_id`'s repodata/: <metadata_path>/<repo_id> with
// --metadata-path, else repo_directory().
std::filesystem::path metadata_directory(const SyncOptions& options, std::string_view repo_id);

}  // namespace rpmirror
