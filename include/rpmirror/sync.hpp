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
#include "rpmirror/dedupe.hpp"
#include "rpmirror/download.hpp"
#include "rpmirror/error.hpp"
#include "rpmirror/index.hpp"
#include "rpmirror/s3.hpp"

namespace rpmirror {

class SyncEvents;

// The keys --gpgcheck trusts (--gpgcheck-keys).
enum class PackageKeySource {
    Rpmdb,       // dnf's rule: the keys imported in the rpm database of `installroot`
    Repository,  // the repository's gpgkey files (a mirror host that does not run the distro)
};

struct SyncOptions {
    std::filesystem::path download_path = ".";           // -p
    std::optional<std::filesystem::path> metadata_path;  // --metadata-path
    bool norepopath = false;                             // --norepopath
    bool download_metadata = false;                      // --download-metadata
    // With download_metadata, when the selection leaves out packages upstream lists: false =
    // publish primary/filelists/other rewritten to list exactly the mirrored packages (see
    // rpmirror/filtered_metadata.hpp); true (--upstream-metadata) = upstream's, verbatim.
    bool upstream_metadata = false;
    // --sign-key: the secret key (of the user's gpg keyring) that signs a rewritten repomd.xml
    // (repomd.xml.asc); empty = a rewritten repomd.xml is published unsigned.
    std::string sign_key;
    bool delete_unlisted = false;  // --delete
    bool urls_only = false;        // -u: list URLs, download nothing
    // -m/--downloadcomps: the repository's comps (group_gz, else group) written uncompressed as
    // <metadata directory>/comps.xml, as dnf reposync does; nothing iff it has none.
    bool download_comps = false;
    // --remote-time: downloaded files get the server's Last-Modified time.
    bool remote_time = false;
    bool use_checksum_cache = true;  // verify existing files via xattrs
    // zchunk records ("*_zck", with --download-metadata): when a previous copy is at hand (the
    // live repodata/ or a staging directory a killed run left), only the header and the chunks
    // that changed are fetched (ranged requests), then the whole is verified; any failure of
    // that path downloads the record in full. Without --download-metadata, primary_zck is
    // parsed instead of primary, by delta from the copy the last run kept in the state
    // directory (doc/zchunk.md); a failed delta parses primary, downloaded in full.
    // false = --zchunk=off: always in full, primary parsed.
    bool zchunk = true;
    std::optional<std::filesystem::path> safe_write_path;  // --safe-write-path
    // --arch, --source, --newest-only, --min-buildtime. The repository's includepkgs and
    // excludepkgs are added to these by sync_repository.
    SelectionOptions selection;
    unsigned verify_threads = 0;  // 0 = all cores
    // -j: concurrent downloads for every repository, over the repositories'
    // max_parallel_downloads (which applies only when set in their configuration).
    std::optional<unsigned> parallel;
    // --connections-per-file, --segment-min-size (job keys connections-per-file,
    // segment-min-size): files of at least `segment_min_size` bytes are fetched as that many
    // ranges at once, over the mirrors in turn (DownloadOptions::connections_per_file; 1 = off).
    unsigned connections_per_file = 1;
    std::uint64_t segment_min_size = std::uint64_t{64} << 20;
    // --gpgcheck, with dnf reposync's meaning: in repositories with gpgcheck=1, every package
    // (downloaded or kept) is checked against the keys `package_keys` names; one with a definite
    // verdict (unsigned, unknown key, bad signature, revoked key, key expired before signing)
    // is removed and reported as a failure; one that cannot be checked (I/O error, EMFILE, key
    // expired after signing) is kept and reported as a failure. Repositories with gpgcheck=0 are
    // not checked.
    bool check_package_signatures = false;
    PackageKeySource package_keys = PackageKeySource::Rpmdb;
    // --installroot: the root whose rpm database holds the keys of PackageKeySource::Rpmdb.
    std::filesystem::path installroot = "/";
    // --state-dir: where rpmirror keeps its state and locks, outside the mirror; empty = the
    // default ($RPMIRROR_STATE_DIR, /var/lib/rpmirror for root, $XDG_STATE_HOME/rpmirror).
    std::filesystem::path state_dir;
    // The run lock of the repository directory: taken for the whole sync (not with -u).
    // Without `lock_wait` a sync fails at once when another rpmirror holds it; with it, waits
    // that long (--wait-lock). `take_lock` is false only for a caller that holds the lock
    // itself (lock_repository).
    std::optional<std::chrono::seconds> lock_wait;
    bool take_lock = true;
    // --dedupe: before downloading, packages that another repository already holds (same
    // checksum type, digest and size, verified) are hard-linked (or reflinked) from it instead
    // (rpmirror/dedupe.hpp). Searched: the other directories of `download_path` (the sibling
    // repositories; the repository's own directory and metadata directory never), then
    // `dedupe_dirs` (--dedupe-dir) in order. Off = download everything.
    DedupeMode dedupe = DedupeMode::Hardlink;
    std::vector<std::filesystem::path> dedupe_dirs;
    // Told about every package as it is downloaded, found present or fails; null = nobody.
    SyncEvents* events = nullptr;

    // An s3:// destination: `download_path` is "s3://BUCKET/PREFIX" (checked with
    // s3::is_s3_url, never normalised as a path); `metadata_path`, when set, must be the same
    // location. Packages pass through a bounded local spool on their way to the store; the
    // metadata is published last, repodata/repomd.xml the very last (see doc/s3.md).
    // --s3-endpoint, --s3-region, --s3-profile, --s3-addressing; the rest comes from the
    // environment and ~/.aws (s3::resolve_config).
    s3::S3Overrides s3;
    // --s3-spool-dir: where packages wait between download and upload; empty = a fresh
    // directory in /dev/shm (memory; $TMPDIR with a warning when /dev/shm is not a tmpfs),
    // removed at the end (sync/s3_spool.hpp).
    std::filesystem::path s3_spool_dir;
    // --s3-spool-size: at most this many bytes of packages are in the spool at once (a batch);
    // a larger package is a batch on its own. At least s3_part_size.
    std::uint64_t s3_spool_size = 512ULL * 1024 * 1024;
    unsigned s3_parallel = 4;                          // --s3-parallel: concurrent uploads
    std::uint64_t s3_part_size = 64ULL * 1024 * 1024;  // --s3-part-size: multipart above it
    std::string s3_acl;                                // --s3-acl: canned ACL of every object
};

// One package's outcome, told as it happens (for `rpmirror reposync`'s dnf-style lines).
struct PackageEvent {
    enum class Kind {
        Downloaded,      // fetched and verified now
        AlreadyPresent,  // the file in the mirror was verified: nothing fetched
        MirrorFailed,    // one attempt failed; another mirror or retry follows
        Failed,          // no attempt left
        Linked,          // --dedupe: linked from another repository, nothing fetched
    };
    Kind kind = Kind::Downloaded;
    std::string file_name;    // the href's last component, as dnf names a package
    std::size_t done = 0;     // packages Downloaded, Linked or AlreadyPresent so far, this one
    std::size_t total = 0;    // packages selected
    std::uint64_t bytes = 0;  // bytes received (Downloaded) or the package's size
    double seconds = 0;       // from the first attempt's start to the end (Downloaded)
    std::string url;          // MirrorFailed: the URL tried
    long http_status = 0;     // MirrorFailed: the HTTP status, 0 = none
    std::string reason;       // MirrorFailed, Failed: what happened
    bool mirrors_exhausted = false;  // Failed: every mirror was tried (not a local failure)
};

// Receives package events, on the thread that runs the sync, never concurrently.
class SyncEvents {
  public:
    virtual ~SyncEvents() = default;
    virtual void package(const PackageEvent& event) = 0;
    // -m: comps.xml of `repo_id` was written to `path` (before any package is downloaded).
    virtual void comps_saved(const std::string& repo_id, const std::filesystem::path& path) {
        (void)repo_id;
        (void)path;
    }
};

struct PackageFailure {
    std::string package;                // NEVRA
    std::string reason;                 // the final error
    std::vector<std::string> attempts;  // "URL: what happened", in order
    // --gpgcheck removed the file: the line dnf reposync prints for it ("Removing NAME.rpm:
    // Package NAME.rpm is not signed"); empty for every other failure.
    std::string dnf_message = {};
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
    // --dedupe: linked from another repository instead of downloaded, and their bytes; packages
    // found there that could not be linked (downloaded instead) are link_fallbacks.
    std::size_t linked = 0;
    std::uint64_t linked_bytes = 0;
    std::size_t link_fallbacks = 0;
    std::vector<std::filesystem::path> deleted;  // --delete, relative to repo_dir
    std::vector<PackageFailure> failures;
    std::size_t signatures_checked = 0;  // --gpgcheck: packages whose signature was checked
    bool metadata_published = false;
    // -u: what dnf reposync prints, raw hrefs joined to the mirror: with --download-metadata
    // every record of repomd.xml first, with -m the comps record, then the packages.
    std::vector<std::string> urls;
    std::optional<std::filesystem::path> comps_saved;  // -m: the comps.xml written
    // zchunk records assembled from a previous copy and the changed chunks (SyncOptions::zchunk),
    // the bytes they took from the server (headers, chunks, multipart framing), and their sizes
    // less those bytes (0 for a record whose delta cost more than its size).
    std::size_t zck_records = 0;
    std::uint64_t zck_bytes_fetched = 0;
    std::uint64_t zck_bytes_saved = 0;
    // Why a zchunk delta was not used (the record was downloaded in full), one line each.
    std::vector<std::string> zck_fallbacks;
    std::vector<std::string> warnings;  // e.g. metadata kept back, packages filtered out
    // An s3:// destination: requests sent to the store (S3Client::request_count, all clients).
    std::uint64_t s3_requests = 0;
    // An s3:// destination: the spool directory packages passed through, and whether it was on a
    // memory-backed filesystem.
    std::filesystem::path s3_spool;
    bool s3_spool_in_memory = false;
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
// --metadata-path (<metadata_path> itself with --norepopath too), else repo_directory().
std::filesystem::path metadata_directory(const SyncOptions& options, std::string_view repo_id);

}  // namespace rpmirror
