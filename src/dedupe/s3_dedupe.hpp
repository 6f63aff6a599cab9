// --dedupe on an s3:// destination: a package that a sibling repository in the bucket holds (a
// repository beside this one under the same prefix, synced by rpmirror: its state object records
// the package with the same checksum and size) is copied inside the store (CopyObject) instead of
// downloaded and uploaded. The equivalent of a hard link where there are none: no byte passes
// through this host, and the copy is pinned to what the sibling's state vouches for
// (s3::copy_stored).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/checksum/checksum.hpp"
#include "s3/client.hpp"
#include "s3/mirror_state.hpp"

namespace rpmirror::dedupe {

// A package the repository lacks.
struct S3Wanted {
    std::string key;  // relative to the repository's prefix
    ChecksumType checksum_type = ChecksumType::Sha256;
    std::string digest;  // lowercase hex
    std::uint64_t size = 0;
};

// A package copied from a sibling.
struct S3Copied {
    std::size_t index = 0;    // into the wanted list
    s3::StoredObject object;  // as the repository's state records it
    std::string source;       // s3://BUCKET/KEY it was copied from
};

struct S3DedupeOutcome {
    std::vector<S3Copied> copied;
    std::uint64_t copied_bytes = 0;
    // Found in a sibling but not copied (the sibling's object changed): downloaded instead.
    std::size_t fallbacks = 0;
    // The first store error (a failed search, or a copy that failed; those packages are
    // downloaded); empty iff none.
    std::string note;
};

// Copies into `repo` (prefix ending in '/') the packages of `wanted` that a sibling repository
// holds: the siblings are the prefixes right below `repo`'s parent prefix that have an rpmirror
// state object (one LIST, one GET per sibling). Objects are copied with `acl`, s3::kParallelCopies
// at a time (s3::copy_stored_all). Never fails: a
// package not copied is left to the download.
S3DedupeOutcome copy_from_siblings(s3::S3Client& client, const s3::S3Location& repo,
                                   std::span<const S3Wanted> wanted, std::string_view acl);

}  // namespace rpmirror::dedupe
