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

// The layout of a job's snapshots, as a sync's `snapshot =` takes them: under `base`
// (snapshot-dir) when set, else beside the mirror (the directory or prefix above `repo_dir`).
// Returns nullopt iff `base` is unset and nothing is above the mirror (a bucket's top, '/');
// Error{BadInput} iff the mirror is `<base>/snapshots` or `<base>/published`, or one of the two
// is an s3:// URL and the other is not (or does not parse).
Result<std::optional<SnapshotRoot>> snapshot_root_of_mirror(
    std::string_view repo_id, const std::filesystem::path& repo_dir,
    const std::optional<std::filesystem::path>& base,
    const std::optional<s3::S3Overrides>& s3 = std::nullopt);

// How the functions that change something take the repository's run lock.
struct SnapshotLock {
    std::filesystem::path state_dir;           // as SyncOptions::state_dir ("" = the default)
    std::optional<std::chrono::seconds> wait;  // as SyncOptions::lock_wait
};

// Returns the default name of a snapshot taken at `when`: UTC, `YYYYMMDDTHHMMSSZ`.
std::string default_snapshot_name(std::chrono::system_clock::time_point when);

struct SnapshotCreateOptions {
    std::optional<std::string> name;  // nullopt: default_snapshot_name(now)
    bool copy = false;                // copy packages instead of hard-linking them (--copy)
    SnapshotLock lock;
    bool use_checksum_cache = true;  // false: hash every file (--no-cache)
    unsigned threads = 0;            // hashing threads; 0 = all cores
    // Take none when the newest snapshot holds the mirror as it is (the same repomd.xml, its
    // signature and comps.xml for every repository, the same .treeinfo): create_and_prune_snapshot
    // then returns that snapshot with `unchanged` set. For snapshots after a sync under a dated
    // name. Snapshots named export-* (an export's) are never that newest snapshot.
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

// Returns the snapshots of `root`, oldest first (by created_ns, then name), with their published
// names; an empty list iff there are none. Entries starting with '.' (temporaries) and anything
// that is not a directory are ignored. Returns Error{Io} naming the directory iff it cannot be
// read. Reads only; walks each snapshot (lstat of every file).
Result<std::vector<SnapshotInfo>> list_snapshots(const SnapshotRoot& root);

// Every key of the live mirror of `root` (a package's "Packages/a.rpm", a record's) that one of
// its snapshots holds: what `rpmirror serve`'s cache-max-size never removes from the live
// mirror. An empty set iff there is no snapshot. The stores' errors. Reads only.
Result<std::unordered_set<std::string>> snapshot_held_keys(const SnapshotRoot& root);

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

// A snapshot created, and the snapshots keep-N then removed (oldest first; none without keep).
struct SnapshotAndPrune {
    SnapshotInfo created;
    std::vector<SnapshotInfo> pruned;
};

// Creates a snapshot of the live mirror of `root` (packages hard-linked, or copied with `copy`;
// metadata copied; the result audited, flushed and renamed into place) and, iff `keep` is set,
// keeps the newest `keep` and every published one (an export's base, export-*, is neither
// counted nor removed), removing the others. Holds the repository's run lock. Returns what was
// done, or the first error: Error{BadInput} naming the repository unless the mirror is complete
// and verified (its last sync's state records the live repomd.xml; every record and package is
// there with its size and checksum), or iff the name is invalid or taken; Error{Unsupported} iff
// the filesystem refuses hard links (use `copy`) or packages lie beneath a safe write path;
// Error{Busy} iff a sync holds the lock; Error{Io} naming the file. Nothing is left under the
// name on a creation error; a pruning error leaves the new snapshot.
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
// of snapshot_root_of_mirror or create_and_prune_snapshot.
// Thread-safe for different repositories (the job runner calls it from its workers).
Result<SnapshotAndPrune> snapshot_after_sync(const RepoSyncReport& report,
                                             const SnapshotAfterSync& policy);

}  // namespace rpmirror
