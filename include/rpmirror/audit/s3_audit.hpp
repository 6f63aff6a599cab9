// The audit stage on a mirror in object storage (`s3://BUCKET/PREFIX/REPO/`): what
// `rpmirror verify -p s3://...` checks, and its --repair.
//
//   LIST the repository's prefix (sizes, ETags) + GET .rpmirror/state.json
//     -> the published repodata/repomd.xml (GET) -> primary.xml (GET into a temporary file,
//        verified, parsed) -> selection -> expected keys; without published metadata: the objects
//        the state records
//     -> each expected key: missing? size from the listing; then the state vouches for it iff its
//        recorded size, ETag and digest still match (the S3 counterpart of the xattr checksum
//        cache); any other object is read and hashed (GET; large objects as parallel ranged GETs).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "rpmirror/audit/audit.hpp"
#include "rpmirror/s3/s3.hpp"

namespace rpmirror {

struct S3AuditOptions {
    // Which listed packages the mirror must hold (default: every one); as AuditOptions::selection.
    SelectionOptions selection;
    // false (--no-cache): read and hash every object, trusting no state.
    bool use_state = true;
    // List keys ending in ".rpm" (outside repodata/ and .rpmirror/) the metadata does not list.
    bool report_extra = false;
    // Parallel GETs (objects at once, or ranges of one large object); 0 = all cores.
    unsigned threads = 0;
    // Objects larger than this are read as ranged GETs of `range_size` bytes, `threads` at once
    // (hashed in order; memory: threads * range_size).
    std::uint64_t ranged_threshold = std::uint64_t{64} << 20;
    std::uint64_t range_size = std::uint64_t{16} << 20;
};

// Audits the repository `repo_id` at `repo` (its prefix ends in '/', e.g. "mirror/base/") in the
// store `config` describes, as audit_repository audits a local one, with the S3 specifics above.
// The report's repo_dir and reference_root are `repo.to_string()`; problems' `path` is the key
// relative to the prefix, `root` is `repo.to_string()` and `destination` the relative key;
// `from_cache` counts the objects the state vouched for; `bytes_hashed` the bytes read.
// A listing or state error (missing bucket, bad credentials: the message names the bucket and
// the server's code), no published metadata and no state, or a damaged primary.xml is the
// report's error. Never modifies the bucket. Never throws. Thread-safe.
RepoAuditReport audit_s3_repository(std::string_view repo_id, const s3::S3Config& config,
                                    const s3::S3Location& repo, const S3AuditOptions& options = {});

// Returns the ids of the repositories mirrored under `mirror` (its prefix ends in '/'): those
// with published metadata (<id>/repodata/repomd.xml) or a state object (<id>/.rpmirror/
// state.json), sorted, from one listing of the prefix; and the repositories of each installation
// tree there (<id>/.treeinfo) as "<id>/<path>", whose ids go to `trees` when given. Returns the
// store's error naming the bucket iff the listing fails.
Result<std::vector<std::string>> discover_s3_repositories(
    const s3::S3Config& config, const s3::S3Location& mirror,
    std::vector<std::string>* trees = nullptr);

// Returns the selection the last complete sync of the mirror at `repo` recorded in its state
// object (as recorded_selection does for a local mirror), nullopt iff there is none (no state,
// or one written by an rpmirror that did not record it); the store's error naming the object
// iff it cannot be read. One GET.
Result<std::optional<RecordedSelection>> recorded_s3_selection(const s3::S3Config& config,
                                                               const s3::S3Location& repo);

struct S3RepairOptions {
    std::string download_path;   // "s3://BUCKET/PREFIX": the mirror (the repository is <id>/ below)
    bool norepopath = false;     // the repository is the prefix itself
    s3::S3Overrides s3;          // for the sync (SyncOptions::s3)
    SelectionOptions selection;  // what the sync uploads (the audit's selection)
    unsigned threads = 0;
    // How long to wait for another worker's lease on the repository (--wait-lock); nullopt:
    // fail at once with Error{Busy} naming the holder.
    std::optional<std::chrono::seconds> lock_wait;
};

// Repairs what `audit` (of audit_s3_repository) found in `repo`'s mirror at `repo_location`,
// holding the repository's lease (s3/lease.hpp) from before its first change to the end:
// deletes each object with the wrong size or digest, drops it (and each missing object) from
// the state object and clears the state's repomd_sha256 (so the sync cannot take its no-op
// shortcut), then syncs the repository with `syncer` into `options.download_path` (the S3 sync
// re-uploads what is missing, with the ACL the state records, and republishes the metadata).
// A lease held by another worker is the report's Error{Busy} (nothing changed). `removed` holds
// the relative keys
// deleted. Returns the first deletion or state
// error in the report (then no sync ran). Never throws. Not thread-safe (one Syncer).
RepairReport repair_s3_repository(Syncer& syncer, const RepoConfig& repo,
                                  const s3::S3Config& config, const s3::S3Location& repo_location,
                                  const RepoAuditReport& audit, const S3RepairOptions& options,
                                  std::stop_token stop = {});

}  // namespace rpmirror
