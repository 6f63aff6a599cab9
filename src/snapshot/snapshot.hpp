// The snapshot stage's own operations behind rpmirror/snapshot/snapshot.hpp: the single steps
// (create, prune) that create_and_prune_snapshot combines, names, and where a snapshot is.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "rpmirror/snapshot/snapshot.hpp"

namespace rpmirror {

// Returns the layout for `repo_id` mirrored at `repo_dir` with snapshots under `base` (all made
// absolute). Both are s3:// URLs for a mirror in a bucket (`s3`: the store's settings; nullopt:
// all from the environment), or both local paths. Returns Error{BadInput} iff `repo_dir` is
// `<base>/snapshots` or `<base>/published` (a repository with such an id needs another
// --snapshot-dir), iff one is s3:// and the other is not, or naming an s3:// URL that does not
// parse. Does not touch the filesystem or the store.
Result<SnapshotRoot> snapshot_root(std::string_view repo_id, const std::filesystem::path& repo_dir,
                                   const std::filesystem::path& base,
                                   const std::optional<s3::S3Overrides>& s3 = std::nullopt);

// Returns Error{BadInput} naming `name` iff it cannot name a snapshot or a published name: empty,
// ".", "..", containing '/', a NUL or control character, starting with '.' (reserved for
// temporary names), or longer than 200 bytes. `what` ("snapshot name") starts the message.
Result<void> validate_snapshot_name(std::string_view name, std::string_view what);

// Creates a snapshot of the live mirror of `root`, holding the repository's run lock.
// Refuses (Error{BadInput} naming the repository) unless the mirror is complete and verified:
// the state of its last successful sync must exist and record the repomd.xml that is live, the
// mirror must hold repodata/, and every metadata record and every package the recorded selection
// keeps must be present with its size and checksum (sizes first, digests from the checksum cache,
// hashed when not cached; the audit stage). Packages beneath a safe write path are refused
// (Error{Unsupported}). Files are linked (copied with `copy`; metadata always copied) into
// `<snapshots_dir>/.<NAME>.creating-XXXXXX`, that directory is audited again (so nothing that
// changed in between is vouched for), flushed (syncfs), and renamed to NAME without replacing
// anything. Temporaries of interrupted runs are removed first.
// Returns the snapshot, or: Error{BadInput} iff the name is invalid or exists; Error{Unsupported}
// naming the destination iff the filesystem refuses hard links (EXDEV: another filesystem,
// EPERM, ENOTSUP, EMLINK), saying to use `copy`; Error{Busy} iff a sync holds the lock;
// Error{Io} naming the file for any other failure. On any error nothing is left under NAME or
// the temporary name.
Result<SnapshotInfo> create_snapshot(const SnapshotRoot& root,
                                     const SnapshotCreateOptions& options);

// Where snapshot `name` of `root` is (for `diff` and readers): its directory, or its s3:// URL for
// a mirror in a bucket (a symlink in a snapshot's place is no snapshot).
// Error{NotFound} "no snapshot NAME of repository ID" iff there is none (a bucket's: no manifest),
// Error{BadInput} iff `name` is invalid; the store's errors. Reads only.
Result<std::filesystem::path> snapshot_location(const SnapshotRoot& root, std::string_view name);

// The snapshot the published name `published_name` of `root` points at now. Error{NotFound}
// naming where it would be iff there is no such published name; Error{BadInput} iff the name is
// invalid. Reads only.
Result<std::string> published_snapshot(const SnapshotRoot& root, std::string_view published_name);

// The names of the snapshots `rpmirror export` keeps of the state it exported (export-<bundle>):
// the base the far side holds, which the next incremental bundle (`--base`) is made against.
inline constexpr std::string_view kExportSnapshotPrefix = "export-";

// Keeps the newest `keep` snapshots (list_snapshots order) and every one a published name points
// at, and removes the others as remove_snapshot does. Snapshots named kExportSnapshotPrefix* are
// neither counted nor removed: an export's base leaves only by `rpmirror snapshot remove`. Holds
// the run lock. Returns the removed snapshots, oldest first, or the first error (snapshots removed
// before it stay removed).
Result<std::vector<SnapshotInfo>> prune_snapshots(const SnapshotRoot& root, std::size_t keep,
                                                  const SnapshotLock& lock);

}  // namespace rpmirror
