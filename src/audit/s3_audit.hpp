// The audit stage's settings for a mirror in object storage (`s3://BUCKET/PREFIX/REPO/`), for
// the S3 store's audit (verify_run.cpp) and its tests: what `rpmirror verify -p s3://...` checks.
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

}  // namespace rpmirror
