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

#include "index/index.hpp"
#include "plan/plan.hpp"
#include "rpmirror/audit/audit_report.hpp"
#include "rpmirror/audit/verify.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "rpmirror/config/config.hpp"
#include "rpmirror/s3/s3.hpp"
#include "rpmirror/util/error.hpp"
#include "sync/remote_metadata.hpp"
#include "sync/sync.hpp"

namespace rpmirror {

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

// Returns the selection to audit a mirror with: `recorded` (nullopt: none recorded, or
// --all-packages) with each of `overrides` in place of the recorded field, and in `origin` where
// it came from, in words for the output ("recorded by sync", "..., overridden by the command
// line"). Pure.
SelectionOptions choose_selection(const SelectionOverrides& overrides,
                                  const std::optional<RecordedSelection>& recorded,
                                  std::string& origin);

}  // namespace rpmirror
