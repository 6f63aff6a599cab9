// What rpmirror knows about a mirror in object storage (`s3://BUCKET/PREFIX/REPO/`): the state
// object `<repo prefix>.rpmirror/state.json`, kept in the bucket beside the mirror so every
// worker that syncs or verifies it shares it, and the listing it is compared with.
//
// The state records, for every object rpmirror uploaded and verified, its size, the ETag the
// store gave it and the upstream checksum it was verified against. An object is trusted without
// reading it iff a listing (ListObjectsV2: size and ETag, 1000 objects per request) shows the same
// size and ETag: any rewrite of the object by anyone changes its ETag. A missing, unreadable or
// foreign state object is never an error for a sync: it only costs verification (re-uploads).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/checksum/checksum.hpp"
#include "rpmirror/s3/s3.hpp"
#include "rpmirror/util/error.hpp"
#include "s3/client.hpp"
#include "s3/config.hpp"

namespace rpmirror::s3 {

// Keys below a repository's prefix that belong to rpmirror, not to the mirror. Never listed as
// packages, never deleted by --delete, never published.
inline constexpr std::string_view kStateDirName = ".rpmirror/";
inline constexpr std::string_view kStateKey = ".rpmirror/state.json";
inline constexpr std::string_view kLockKey = ".rpmirror/lock";
// The state of an installation tree's own files (--treeinfo: .treeinfo and its images), beside
// the state of the repository at the tree's root.
inline constexpr std::string_view kTreeStateKey = ".rpmirror/treeinfo.json";

// One object as rpmirror uploaded and verified it.
struct StoredObject {
    std::uint64_t size = 0;
    std::string etag;  // as the store reported it (without quotes)
    ChecksumType checksum_type = ChecksumType::Sha256;
    std::string digest;  // lowercase hex, of `checksum_type`
};

struct MirrorState {
    // SHA-256 of the upstream repomd.xml of the last complete sync (all packages uploaded and,
    // with --download-metadata, the metadata published); empty = none completed yet.
    std::string repomd_sha256;
    // The options that shaped the last complete sync (selection, --download-metadata, ...), as
    // the local no-op compares them; a different fingerprint is not a no-op.
    std::string fingerprint;
    // Key relative to the repository prefix ("Packages/f/foo.rpm", "repodata/<sum>-primary.xml.gz")
    // -> what was uploaded there.
    std::map<std::string, StoredObject> objects;
    // Relative keys of the metadata records the previously published repomd.xml listed; kept one
    // more run after a new revision is published (readers that fetched the old repomd.xml can
    // still fetch its records), deleted at the run after.
    std::vector<std::string> previous_records;
    // The canned ACL (--s3-acl) every object of `objects` was last given; empty = none sent (the
    // bucket's default). Absent from states written before it was recorded: read as empty.
    std::string acl;
    // --gpgcheck: the trusted key ids (the options fingerprint's) every package of `objects` was
    // checked against before it was uploaded or kept; empty = some may be unchecked. Absent from
    // states written before it was recorded: read as empty.
    std::string signatures_checked;
    // The selection of the last complete sync (plan/selection_json.hpp's text), which verify
    // audits and --repair syncs with; empty = none recorded (states of older versions too).
    std::string selection;
    // How it published the metadata (plan/selection_json.hpp's publishing text); empty = none
    // recorded.
    std::string publishing;
};

// Returns the state as JSON ({"version":1,...}).
std::string to_json(const MirrorState& state);
// Parses what to_json wrote. Returns Error{BadInput} with subject `shown` (the object's s3:// URL)
// iff `json` is not such a document.
Result<MirrorState> parse_state(std::string_view json, std::string_view shown);

// Reads the state object of the repository at `repo` (its prefix ends in '/'). Returns nullopt
// iff there is none, or iff it is not a state document (a warning is not needed: it only costs
// verification); an Error for a failed request (credentials, bucket, network).
// `key`: another state object of the prefix (kTreeStateKey).
Result<std::optional<MirrorState>> load_state(S3Client& client, const S3Location& repo,
                                              std::string_view key = kStateKey);
// Writes the state object (one PUT: readers see the old or the new state, never a mix).
Result<void> store_state(S3Client& client, const S3Location& repo, const MirrorState& state,
                         std::string_view key = kStateKey);

// Every object below `repo`'s prefix, by key relative to it (rpmirror's own .rpmirror/ keys
// included). One ListObjectsV2 request per 1000 objects; `requests`, when given, receives how
// many were made.
Result<std::map<std::string, ListedObject>> list_mirror(S3Client& client, const S3Location& repo,
                                                        std::size_t* requests = nullptr);

// The key of object `key` (below `root_prefix`, which `repo.prefix` starts with) relative to
// `repo` as S3Location::key reads it: "../" segments for each directory it climbs.
std::string key_relative_to(const S3Location& repo, std::string_view root_prefix,
                            std::string_view key);

// As list_mirror, but every object below `root_prefix` (which `repo.prefix` starts with: an
// --upstream-layout root holding the repository and the blobs its hrefs climb to), by key
// relative to `repo` as S3Location::key reads it: those outside `repo`'s prefix start with ".."
// segments ("../../blobstore/<sha256>/x.rpm").
Result<std::map<std::string, ListedObject>> list_mirror_within(S3Client& client,
                                                               const S3Location& repo,
                                                               std::string_view root_prefix,
                                                               std::size_t* requests = nullptr);

// Returns true iff `listed` is still the object `stored` describes (same size and ETag).
bool still_matches(const StoredObject& stored, const ListedObject& listed);

// Copies `from_key` of `from` to `to_key` of `to` inside the store (S3Client::copy_object, with
// `acl`) iff it is still the object `expected` describes: the copy has the ETag `expected`
// records (an object of one PUT keeps it), or, for a multipart object to which the store gave a
// new ETag, `expected`'s size and the SHA-256 it vouches for (its digest, or else the
// x-amz-meta-sha256 stored with the source). Returns the copy as the state would record it
// (`expected`'s checksum, the copy's ETag); Error{Corrupt} naming the source iff it is another
// object now (the copy is deleted again); the client's errors.
Result<StoredObject> copy_stored(S3Client& client, const S3Location& from,
                                 std::string_view from_key, const StoredObject& expected,
                                 const S3Location& to, std::string_view to_key,
                                 std::string_view acl);

// One copy of copy_stored.
struct StoredCopy {
    S3Location from;
    std::string from_key;
    StoredObject expected;
    S3Location to;
    std::string to_key;
};

// How many copies run at once: a copy inside the store costs no bytes here, only the store's
// time, so more are in flight than uploads (--s3-parallel's default, 4).
inline constexpr unsigned kParallelCopies = 8;

// Runs copy_stored for each of `copies`, `parallel` at a time, each worker with a client of its
// own made from `config`. Returns one result per copy, in the order of `copies`.
std::vector<Result<StoredObject>> copy_stored_all(const S3Config& config,
                                                  std::span<const StoredCopy> copies,
                                                  std::string_view acl,
                                                  unsigned parallel = kParallelCopies);

}  // namespace rpmirror::s3
