// Snapshots: immutable, dated copies of a mirrored repository, and published names (`prod`,
// `test`) switched from one snapshot to another atomically. Behind `rpmirror snapshot`.
//
// Layout, beside the mirrors and on the same filesystem (packages are hard links):
//   <base>/snapshots/<repo id>/<NAME>/   a full repository: packages hard-linked from the live
//                                        mirror (or copied, `copy`), repodata/ copied
//   <base>/published/<PUB>/<repo id>     a symlink to ../../snapshots/<repo id>/<NAME>
// <base> is the download path (`-p`) unless given (--snapshot-dir). A published name is switched
// by creating a temporary symlink beside it and rename()ing it over the old one: one atomic
// rename, so a reader resolves the old snapshot or the new one, never a mix.
//
// Why a snapshot never changes under its readers (yum-utils #68): the live mirror never modifies
// a file in place. The downloader writes `.part` files and renames them over the final name, and
// repodata/ is swapped as a directory, so a re-sync that replaces a package gives the live name a
// new inode and leaves the snapshot's link on the old one. Retention needs no bookkeeping either:
// removing a snapshot unlinks its names, and the kernel frees exactly the files no other snapshot
// and not the live mirror still links (st_nlink reaches 0).
//
// Every function that changes something holds the repository's run lock (the one `sync` takes),
// so snapshots are never taken of a mirror being synced.
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

#include "rpmirror/s3/s3.hpp"
#include "rpmirror/util/error.hpp"

namespace rpmirror {

struct RepoSyncReport;  // rpmirror/sync/sync_report.hpp

// Where one repository's live mirror, snapshots and published names are.
struct SnapshotRoot {
    std::string repo_id;
    std::filesystem::path repo_dir;       // the live mirror (holding repodata/)
    std::filesystem::path snapshots_dir;  // <base>/snapshots/<repo id>: one directory per snapshot
    std::filesystem::path published_dir;  // <base>/published: <PUB>/<repo id> symlinks
    // Set iff the mirror is in an S3 bucket: the store's settings (each unset one from the
    // environment and ~/.aws). The three paths above then hold s3:// URLs (s3://BUCKET/PREFIX/ID,
    // <base>/snapshots/ID, <base>/published), and a snapshot is a copy made inside the store
    // (doc/snapshot.md, "In a bucket").
    std::optional<s3::S3Overrides> s3;
};

// Returns the layout for `repo_id` mirrored at `repo_dir` with snapshots under `base` (all made
// absolute). Both are s3:// URLs for a mirror in a bucket (`s3`: the store's settings; nullopt:
// all from the environment), or both local paths. Returns Error{BadInput} iff `repo_dir` is
// `<base>/snapshots` or `<base>/published` (a repository with such an id needs another
// --snapshot-dir), iff one is s3:// and the other is not, or naming an s3:// URL that does not
// parse. Does not touch the filesystem or the store.
Result<SnapshotRoot> snapshot_root(std::string_view repo_id, const std::filesystem::path& repo_dir,
                                   const std::filesystem::path& base,
                                   const std::optional<s3::S3Overrides>& s3 = std::nullopt);

// The layout of a job's snapshots, as a sync's `snapshot =` takes them: under `base`
// (snapshot-dir) when set, else beside the mirror (the directory or prefix above `repo_dir`).
// Returns nullopt iff `base` is unset and nothing is above the mirror (a bucket's top, '/'), or
// snapshot_root's error.
Result<std::optional<SnapshotRoot>> snapshot_root_of_mirror(
    std::string_view repo_id, const std::filesystem::path& repo_dir,
    const std::optional<std::filesystem::path>& base,
    const std::optional<s3::S3Overrides>& s3 = std::nullopt);

// How the functions that change something take the repository's run lock.
struct SnapshotLock {
    std::filesystem::path state_dir;           // as SyncOptions::state_dir ("" = the default)
    std::optional<std::chrono::seconds> wait;  // as SyncOptions::lock_wait
};

// Returns Error{BadInput} naming `name` iff it cannot name a snapshot or a published name: empty,
// ".", "..", containing '/', a NUL or control character, starting with '.' (reserved for
// temporary names), or longer than 200 bytes. `what` ("snapshot name") starts the message.
Result<void> validate_snapshot_name(std::string_view name, std::string_view what);

// Returns the default name of a snapshot taken at `when`: UTC, `YYYYMMDDTHHMMSSZ`.
std::string default_snapshot_name(std::chrono::system_clock::time_point when);

struct SnapshotCreateOptions {
    std::optional<std::string> name;  // nullopt: default_snapshot_name(now)
    bool copy = false;                // copy packages instead of hard-linking them (--copy)
    SnapshotLock lock;
    bool use_checksum_cache = true;  // false: hash every file (--no-cache)
    unsigned threads = 0;            // hashing threads; 0 = all cores
    // Take none when the newest snapshot holds the mirror as it is (the same repomd.xml, its
    // signature and comps.xml for every repository, the same .treeinfo): create_snapshot then
    // returns that snapshot with `unchanged` set. For snapshots after a sync under a dated name.
    // Snapshots named kExportSnapshotPrefix* (an export's) are never that newest snapshot.
    bool only_if_changed = false;
};

struct SnapshotInfo {
    std::string name;
    std::filesystem::path dir;
    std::int64_t created_ns = 0;  // mtime of the snapshot directory (when it was filled)
    std::size_t packages = 0;     // *.rpm files
    std::size_t files = 0;        // regular files, metadata included
    std::uint64_t bytes = 0;      // apparent size of all its files
    // Bytes of files no other snapshot and not the live mirror links (st_nlink == 1): what
    // removing this snapshot frees.
    std::uint64_t unique_bytes = 0;
    std::vector<std::string> published_as;  // published names pointing at it, sorted
    // SnapshotCreateOptions::only_if_changed: no snapshot was taken, this one (the newest)
    // already holds the mirror as it is.
    bool unchanged = false;
};

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

// Returns the snapshots of `root`, oldest first (by created_ns, then name), with their published
// names; an empty list iff there are none. Entries starting with '.' (temporaries) and anything
// that is not a directory are ignored. Returns Error{Io} naming the directory iff it cannot be
// read. Reads only; walks each snapshot (lstat of every file).
Result<std::vector<SnapshotInfo>> list_snapshots(const SnapshotRoot& root);

// Every key of the live mirror of `root` (a package's "Packages/a.rpm", a record's) that one of
// its snapshots holds: what `rpmirror serve`'s cache-max-size never removes from the live
// mirror. An empty set iff there is no snapshot. The stores' errors. Reads only.
Result<std::unordered_set<std::string>> snapshot_held_keys(const SnapshotRoot& root);

// Where snapshot `name` of `root` is (for `diff` and readers): its directory, or its s3:// URL for
// a mirror in a bucket (a symlink in a snapshot's place is no snapshot).
// Error{NotFound} "no snapshot NAME of repository ID" iff there is none (a bucket's: no manifest),
// Error{BadInput} iff `name` is invalid; the store's errors. Reads only.
Result<std::filesystem::path> snapshot_location(const SnapshotRoot& root, std::string_view name);

// The snapshot the published name `published_name` of `root` points at now. Error{NotFound}
// naming where it would be iff there is no such published name; Error{BadInput} iff the name is
// invalid. Reads only.
Result<std::string> published_snapshot(const SnapshotRoot& root, std::string_view published_name);

// Points the published name `published_name` (`<published_dir>/<PUB>/<repo id>`) at snapshot
// `name`, creating `<published_dir>/<PUB>` if missing and replacing an existing symlink by one
// rename (made durable with fsync of the directory). Holds the run lock.
// Returns Error{NotFound} iff there is no such snapshot; Error{BadInput} iff a name is invalid;
// Error{Unsafe} naming the path iff something other than a symlink is there (a directory, a
// file): nothing is changed then; Error{Io} for any other failure (the old link then stays).
Result<void> publish_snapshot(const SnapshotRoot& root, std::string_view name,
                              std::string_view published_name, const SnapshotLock& lock);

// Removes snapshot `name`: renamed to a temporary name first (it disappears at once, as a whole),
// then deleted. Holds the run lock. Returns what it freed (SnapshotInfo as list_snapshots
// computed it just before), or: Error{NotFound} iff there is no such snapshot; Error{BadInput}
// naming the published names iff one points at it (unpublish or republish first); Error{Io}.
Result<SnapshotInfo> remove_snapshot(const SnapshotRoot& root, std::string_view name,
                                     const SnapshotLock& lock);

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

// A snapshot created, and the snapshots keep-N then removed (oldest first; none without keep).
struct SnapshotAndPrune {
    SnapshotInfo created;
    std::vector<SnapshotInfo> pruned;
};

// Creates a snapshot of `root` (create_snapshot) and, iff `keep` is set, then keeps the newest
// `keep` (prune_snapshots with `options.lock`). Returns what was done, or the first error: that
// of create_snapshot (nothing pruned then) or of prune_snapshots (the snapshot stays).
// Thread-safe for different repositories; the run lock serialises runs on one.
Result<SnapshotAndPrune> create_and_prune_snapshot(const SnapshotRoot& root,
                                                   const SnapshotCreateOptions& options,
                                                   std::optional<std::size_t> keep);

// What to do after a repository synced completely: `sync --snapshot[=NAME] [--keep-snapshots N]
// [--snapshot-dir DIR]` and a job's `snapshot =`, `keep-snapshots =`, `snapshot-dir =`.
struct SnapshotAfterSync {
    std::string name;  // the snapshot's name (one per run: every repository's is the same)
    // Where snapshots/ and published/ are (an s3:// URL for a mirror in a bucket); nullopt: the
    // directory above the repository's mirror.
    std::optional<std::filesystem::path> base;
    std::optional<std::size_t> keep;  // then keep only the newest N (and every published one)
    SnapshotLock lock;
    bool use_checksum_cache = true;     // false: hash every file (--no-cache)
    std::optional<s3::S3Overrides> s3;  // an s3:// mirror: the store's settings
    // SnapshotCreateOptions::only_if_changed: true for a dated name (`--snapshot` and
    // `snapshot = 1` without a name), so an unchanged mirror makes no new snapshot and
    // keep-N rotates no history out for an identical copy.
    bool only_if_changed = false;
};

// Snapshots the mirror of `report` (its repo_id and repo_dir; a local repo_dir made absolute,
// without a trailing '/') under `policy.base`, then prunes to `policy.keep`, as
// create_and_prune_snapshot. Call it only for a sync that succeeded (report.ok()): the snapshot
// refuses a mirror that is not complete and verified anyway. Returns what was done, or the error
// of snapshot_root (a bad layout: Error{BadInput}), create_snapshot or prune_snapshots.
// Thread-safe for different repositories (the job runner calls it from its workers).
Result<SnapshotAndPrune> snapshot_after_sync(const RepoSyncReport& report,
                                             const SnapshotAfterSync& policy);

}  // namespace rpmirror
