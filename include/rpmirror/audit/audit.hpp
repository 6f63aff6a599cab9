// The audit stage: a mirror checked against repository metadata, file by file, without trusting
// anything the sync wrote about itself. Behind `rpmirror verify`.
//
//   reference repodata/ (the mirror's own, or a fresh copy of the repository's current one)
//     -> repomd.xml -> primary.xml (its checksum verified first) -> selection -> plan_sync (safe
//     paths) -> every file looked up beneath its root without following symlinks -> sizes, then
//     verify_files on all cores (the xattr cache unless told otherwise) -> unlisted *.rpm files
//   and, for `--repair`, the damaged files removed and the repository synced again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/checksum/checksum.hpp"
#include "rpmirror/config/config.hpp"
#include "rpmirror/index/index.hpp"
#include "rpmirror/plan/plan.hpp"
#include "rpmirror/s3/s3.hpp"
#include "rpmirror/sync/remote_metadata.hpp"
#include "rpmirror/sync/sync.hpp"
#include "rpmirror/util/error.hpp"

namespace rpmirror {

enum class ProblemKind {
    Missing,           // nothing under the expected name
    SizeMismatch,      // a regular file of the wrong size (not hashed)
    ChecksumMismatch,  // the right size, the wrong digest
    NotRegularFile,    // a symlink (never followed), directory, FIFO, ... in place of the file
    Unsafe,            // the path leads outside its root through a symlinked directory
    Unreadable,        // could not be checked (permissions, I/O error); `detail` says why
    Outdated,          // repodata/repomd.xml differs from the reference's (remote audits only)
    Extra,  // a *.rpm file the metadata does not list, or a partial download (only when asked)
};

// Returns "missing", "size-mismatch", "checksum-mismatch", "not-regular-file", "unsafe",
// "unreadable", "outdated" or "extra": stable names for JSON.
std::string_view problem_kind_name(ProblemKind kind);

struct AuditProblem {
    ProblemKind kind = ProblemKind::Missing;
    std::filesystem::path path;  // relative to the repository directory, as the metadata names it
    bool is_metadata = false;    // a repodata/ file rather than a package
    std::optional<std::uint64_t> expected_size;
    std::optional<std::uint64_t> actual_size;
    std::optional<ChecksumType> checksum_type;
    std::string expected_digest;  // lowercase hex; set for checksum mismatches
    std::string actual_digest;
    std::string detail;  // "symlink", "directory", an error message, ...
    // Where the file is on disk: `root` (the repository directory, or the safe write path) and
    // `destination` below it (no ".."). Empty for Outdated.
    std::filesystem::path root;
    std::filesystem::path destination;

    // Returns the human form: "missing", "size mismatch (expected 10, found 7)",
    // "checksum mismatch (expected sha256 ab…, found cd…)", "extra", "symlink (not followed)", ...
    std::string describe() const;
};

struct AuditOptions {
    // The directory holding the reference `repodata/` (whose repomd.xml and primary.xml say what
    // the mirror must hold); nullopt = the repository directory itself (the mirror's own
    // metadata). When set, the mirror's own repodata/ (if it has one) is compared with it.
    std::optional<std::filesystem::path> reference_root;
    // Which listed packages the mirror must hold (default: every one, one per location); `verify`
    // passes the selection the sync recorded in its state (RecordedSelection). With newest_only,
    // the reference's modules.yaml (verified first) is read as `sync` reads it.
    SelectionOptions selection;
    // As `sync --safe-write-path`: where hrefs escaping the repository directory may point.
    std::optional<std::filesystem::path> safe_write_path;
    bool use_checksum_cache = true;  // false: hash every file (--no-cache)
    bool report_extra = false;       // list *.rpm files the metadata does not list (--extra)
    unsigned threads = 0;            // hashing threads (a bucket's parallel GETs); 0 = all cores
    // A bucket's settings (each unset one from the environment); unused for a directory.
    std::optional<s3::S3Overrides> s3;
    // In a bucket, objects larger than this are read as ranged GETs of `range_size` bytes,
    // `threads` at once, pinned to the listed ETag and hashed in order (memory: threads *
    // range_size).
    std::uint64_t ranged_threshold = std::uint64_t{64} << 20;
    std::uint64_t range_size = std::uint64_t{16} << 20;
};

struct RepoAuditReport {
    std::string repo_id;
    std::filesystem::path repo_dir;
    std::filesystem::path reference_root;  // where the reference repodata/ was read from
    // Set iff the repository could not be audited as a whole: no or malformed repomd.xml, a
    // damaged or unparsable primary.xml (named in the error), an unsafe href, an unreadable
    // directory. Problems found before that are still listed.
    std::optional<Error> error;
    std::size_t packages = 0;        // packages the mirror must hold
    std::size_t metadata_files = 0;  // repodata/ files checked
    std::size_t images = 0;          // an installation tree's [checksums] files checked
    std::size_t verified = 0;        // files whose size and checksum matched
    // Packages an on-demand mirror lists but does not hold (`rpmirror serve` fetches them at
    // their request, or removed them under cache-max-size): no problem.
    std::size_t not_held = 0;
    std::size_t from_cache = 0;          // ... of which the xattr cache vouched for
    std::uint64_t bytes_hashed = 0;      // bytes read to compute digests
    std::uint64_t s3_requests = 0;       // requests to the store (s3:// mirrors only)
    std::vector<AuditProblem> problems;  // sorted: metadata first, then by path
    std::vector<std::string> warnings;   // metadata oddities (skipped packages, conflicts)
    // Every file found intact beneath the repository directory, as the metadata names it
    // (relative, lexically normal), metadata records first; files beneath a safe write path
    // are not listed. What a snapshot links: exactly what was verified.
    struct IntactFile {
        std::filesystem::path path;
        bool is_metadata = false;
        std::uint64_t size = 0;
        // The file's version as it was checked (the store's: "" iff it changed meanwhile), and
        // the checksum it was checked against (digest "" for an image .treeinfo names without
        // one): what a copy pins, so that it copies what was verified.
        std::string version;
        ChecksumType type = ChecksumType::Sha256;
        std::string digest;
    };
    std::vector<IntactFile> intact;
    double seconds = 0;

    // Returns true iff the audit ran and found nothing wrong.
    bool ok() const { return !error && problems.empty(); }
};

// Audits the mirror of `repo_id` at `destination` against the reference metadata (see
// AuditOptions). `destination` is the repository itself: a directory, or a prefix in a bucket
// ("s3://BUCKET/PREFIX/REPO/", opened as store::open_object_store opens a destination, with
// `options.s3`); the report's repo_dir (and a problem's root) is the directory as given or the
// prefix's s3:// URL. In a bucket, the mirror's state object is its checksum cache (a package
// whose recorded size, ETag and digest still match is vouched for without a GET), every request
// is counted in s3_requests, and a listing or state error (a missing bucket, bad credentials:
// named with the server's code) is the report's error; reference_root and safe_write_path are
// local only. The audit:
//  - every record of the reference repomd.xml, in the mirror's repodata/ (when the mirror has one;
//    with a separate reference, the mirror's repomd.xml must also equal the reference's);
//  - primary.xml is verified with verify_metadata_file before it is parsed: a damaged one is the
//    report's error (naming the file), and no package is audited against it;
//  - every selected package at the safe path plan_sync gives it. Files are looked up beneath their
//    root (openat2 RESOLVE_BENEATH, else component by component with O_NOFOLLOW): a symlink in
//    place of a file is a problem and is never followed, nor is a symlinked directory that leads
//    outside the root. Sizes are compared first, then digests by verify_files on `threads` workers;
//  - with `report_extra`, every regular *.rpm of the repository that is not selected
//    (list_unlisted_packages).
// Never modifies the mirror, except that hashing records digests in the xattr cache when
// `use_checksum_cache` is set. A file swapped between the lookup and the hash is a race this
// read-only check accepts. Never throws for what it finds; everything is in the report.
// Thread-safe (each call has its own state).
RepoAuditReport audit_repository(std::string_view repo_id, std::string_view destination,
                                 const AuditOptions& options = {});

struct RepairOptions {
    // The mirror: the repository is <this>/<repo.id> (the path itself with `norepopath`); a
    // directory or "s3://BUCKET/PREFIX" (a bucket's settings: `s3`).
    std::filesystem::path download_path = ".";
    bool norepopath = false;
    s3::S3Overrides s3;
    std::optional<std::filesystem::path> safe_write_path;
    bool use_checksum_cache = true;
    unsigned threads = 0;
    std::filesystem::path state_dir;                // as SyncOptions::state_dir
    std::optional<std::chrono::seconds> lock_wait;  // as SyncOptions::lock_wait
    // What the sync downloads (the audit's selection): a repair never downloads a package
    // outside it. The repository's includepkgs/excludepkgs are added by the sync.
    SelectionOptions selection;
};

struct RepairReport {
    std::vector<std::filesystem::path> removed;  // damaged files removed before the sync
    std::optional<Error> error;                  // a damaged file could not be removed
    RepoSyncReport sync;

    // Returns true iff every removal and the sync succeeded.
    bool ok() const { return !error && sync.ok(); }
};

// Repairs what `audit` found in `repo`'s mirror under `options.download_path`, holding the
// repository's lock (as a sync does: the run lock of a directory, the lease of a bucket prefix;
// a lock held elsewhere is the report's error): removes each
// file with the wrong size or checksum and each symlink in place of a file (unlinked, never
// followed; beneath its root only), removes the sync state file (so the sync cannot take its no-op
// shortcut) and syncs the repository with `syncer`: missing files are downloaded and verified,
// metadata is fetched and published atomically when the mirror has a repodata/ directory (so
// damaged metadata is replaced). If the repository has moved on since the reference metadata, the
// mirror is brought to its current state (new packages downloaded; nothing is deleted). Never
// throws; failures are in the report. Not thread-safe (one Syncer).
RepairReport repair_repository(Syncer& syncer, const RepoConfig& repo, const RepoAuditReport& audit,
                               const RepairOptions& options, std::stop_token stop = {});

// ---------------------------------------------------------------------------------------------
// Reporting

// Returns one line per problem, "<repo>: <path>: <describe()>", one per warning
// ("<repo>: warning: ..."), and the error line ("<repo>: ERROR: ...") iff there is one.
std::vector<std::string> format_audit_problems(const RepoAuditReport& report);

// Returns the summary line, e.g. "base: OK: 4 packages, 5 metadata files verified (3 from the
// checksum cache, 1.2 MB hashed) in 0.1 s" or "base: 2 problems: ...".
std::string format_audit_summary(const RepoAuditReport& report);

// Returns the summary line of a repair, e.g. "base: repair: removed 2 damaged files; <the sync's
// summary>".
std::string format_repair_summary(const RepoAuditReport& audit, const RepairReport& repair);

// One repository's outcome for the JSON report.
struct AuditRunEntry {
    RepoAuditReport audit;
    std::optional<RepairReport> repair;    // set iff a repair ran
    std::optional<RepoAuditReport> after;  // the audit after the repair
};

// Returns {"exit_code": N, "repositories": [{"id", "repo_dir", "reference", "ok", "error",
// "packages", "metadata_files", "verified", "from_cache", "bytes_hashed", "s3_requests", "seconds",
// "problems": [{"path", "kind", "metadata", "message", sizes, digests}], "warnings",
// "repair": {...}, "after_repair": {...}}]}.
std::string format_audit_json(std::span<const AuditRunEntry> entries, int exit_code);

}  // namespace rpmirror
