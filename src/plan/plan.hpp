// The plan stage: the selected packages against the local tree. Every selected package gets a
// safe local path; files already present are to be verified (size, then the checksum cache or a
// hash), missing ones downloaded (the downloader resumes a stray .part by itself).
//
// Also the state file that lets a sync with nothing to do finish without parsing primary.xml.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "checksum/hasher.hpp"
#include "index/index.hpp"
#include "metadata/metadata.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "rpmirror/plan/cache_trust.hpp"
#include "rpmirror/util/error.hpp"

namespace rpmirror {

struct PackageTarget {
    std::size_t position = 0;             // in the PackageIndex
    std::filesystem::path relative_path;  // lexically normal, relative to the repository directory
                                          // (starts with ".." only inside safe_write_path)
    std::size_t root_index = 0;           // into SyncPlan::roots
    std::filesystem::path destination;    // relative to roots[root_index], never with ".."
    // PathPolicy::flatten placed it inside the repository directory although its href climbs
    // out: published metadata must name it by `relative_path`.
    bool flattened = false;
};

struct SyncPlan {
    // Destination roots for the downloader: [0] the repository directory, [1] the safe write path
    // when some package lives outside the repository directory (Amazon Linux's blobstore).
    std::vector<std::filesystem::path> roots;
    // One per selected package, in selection order; a package whose path normalises to one
    // already planned ("./Packages/a.rpm" after "Packages/a.rpm") is counted in duplicate_paths.
    std::vector<PackageTarget> targets;
    std::vector<std::size_t> to_download;  // indices into targets: nothing under the final name
    std::vector<std::size_t> to_verify;    // indices into targets: a file exists; check it
    std::size_t duplicate_paths = 0;
    std::size_t flattened = 0;  // targets with `flattened`
};

// Plans `selection` of `index` against the files under `repo_dir`.
// Returns Error{Unsafe} naming the repository, the package and its href iff any href is unsafe
// (absolute, escaping the repository directory and not inside `policy.safe_write_path`, control
// characters, ...), reserved (inside repodata/ or a staging directory, or a .part name), or any
// xml:base is not an http:// or https:// URL (a file:// one would have the downloader copy local
// files): a repository with one hostile href is refused before anything is written.
// Reads only file metadata (lstat), never contents. Thread-safe.
Result<SyncPlan> plan_sync(const PackageIndex& index, const Selection& selection,
                           const std::filesystem::path& repo_dir, const PathPolicy& policy,
                           std::string_view repo_id);

// ---------------------------------------------------------------------------------------------
// The state of the last successful sync of one repository, for the fast no-op.

struct SyncStateFile {
    std::filesystem::path relative_path;  // as in PackageTarget
    std::uint64_t size = 0;
    std::int64_t mtime_ns = 0;
    // Also recorded: a file replaced by `cp -p` or `rsync -t` (same size and mtime, another
    // inode) or changed in place with its mtime put back, or whose checksum-cache xattrs were
    // removed (ctime), is verified again by the next sync.
    std::uint64_t inode = 0;
    std::int64_t ctime_ns = 0;
};

// What a sync selected with (-a, --source, -n, --min-buildtime, and the repository's
// includepkgs/excludepkgs merged in): `verify` applies it to the mirror by default.
struct RecordedSelection {
    SelectionOptions options;
    bool modular = false;  // newest-only took the repository's module streams into account
};

// How the last sync published the mirror's metadata, for verify --repair to publish it the same
// way again.
struct RecordedPublishing {
    std::string sign_key;            // --sign-key KEYID ("" = none)
    bool upstream_metadata = false;  // --upstream-metadata
    // SHA-256 of the advisories a filtered mirror's updateinfo left out (their lines, sorted,
    // each ending in '\n'); "" = none. The next publication tells them only if they changed.
    std::string advisories_left_out_sha256 = {};
};

struct SyncState {
    std::string repomd_sha256;         // of the repomd.xml the sync mirrored
    std::string options_fingerprint;   // what selected the packages (filters, metadata, layout)
    std::vector<SyncStateFile> files;  // every selected package, verified
    // nullopt iff the state was written by a version that did not record it.
    std::optional<RecordedSelection> selection = std::nullopt;
    // Of the repomd.xml published in the mirror iff it is not upstream's (a filtered mirror's
    // rewritten metadata); empty otherwise.
    std::string published_repomd_sha256 = {};
    // nullopt iff the state was written by a version that did not record it.
    std::optional<RecordedPublishing> publishing = std::nullopt;
    // The metadata the sync published (repodata/..., comps.xml, relative to the metadata
    // directory) as it left it: the no-op's proof that nobody changed it. Empty in states
    // written before it was recorded (their next sync is no no-op).
    std::vector<SyncStateFile> metadata_files = {};
};

// The state file of a repository directory, outside the mirror:
// `<state_dir>/repos/<name>-<hash of the directory's absolute path>.json` (see fs/state.hpp).
std::filesystem::path sync_state_path(const std::filesystem::path& state_dir,
                                      const std::filesystem::path& repo_dir);

// The name of the state file older versions kept inside the repository directory; a sync
// removes it (dnf reposync leaves no such file).
inline constexpr std::string_view kLegacyStateFileName = ".rpmirror-state.json";

// Returns the state read from `path`, or nullopt iff it is missing, unreadable or malformed (a
// bad state file only costs a full sync, never a wrong answer).
std::optional<SyncState> read_sync_state(const std::filesystem::path& path);

// The state a state file's `text` holds; nullopt iff it is none (read_sync_state's rule), and the
// text of `state` (write_sync_state's): the same format wherever a state is kept.
std::optional<SyncState> parse_sync_state(std::string_view text);
std::string sync_state_text(const SyncState& state);

// Writes `state` to `path` atomically (temporary file + rename), creating its directory.
// The caller flushes the filesystems holding the files it vouches for first (syncfs), so that
// after a power loss it never vouches for data that did not reach the disk.
// Returns Error{Io} iff it fails.
Result<void> write_sync_state(const std::filesystem::path& path, const SyncState& state);

// The name (beneath a tree's root) of the catalogue of the images an installation tree's syncs
// wrote: a sync state at sync_state_path(state_dir, root / name) (sync/catalogue.hpp).
inline constexpr std::string_view kTreeImagesCatalogue = ".treeinfo-images";

// A file rpmirror hard-linked itself (a snapshot's link): its record just before the link and
// just after it. A link moves only the ctime (and the link count).
struct RelinkedFile {
    SyncStateFile before;
    SyncStateFile after;
};

// Moves every record of the sync state at `state_path` that is exactly some `before` of
// `linked` (inode, size, mtime and ctime) to that file's `after` (the same inode, size and
// mtime), so that rpmirror's own links neither end the next sync's no-op nor its record's
// vouching (CacheTrust). Writes the state back iff a record moved. Error{Io} iff it cannot.
Result<void> follow_own_links(const std::filesystem::path& state_path,
                              std::span<const RelinkedFile> linked);

// Adds every file `state` records (packages and metadata, with their ctime) to `trust`
// (rpmirror/checksum/checksum.hpp's CacheTrust: the one rule for believing a cached checksum).
void vouch_for_state(CacheTrust& trust, const SyncState& state);

// The CacheTrust of the repository directory `repo_dir`: what its sync state in `state_dir`
// records, and the catalogue of a tree's images there (empty iff it has none). For sync, verify
// and repair.
std::shared_ptr<const CacheTrust> cache_trust_of(const std::filesystem::path& state_dir,
                                                 const std::filesystem::path& repo_dir);

// ("" = the default state directory, in both; cache_trust_of_state_dir:
// rpmirror/plan/cache_trust.hpp.)

// The record of a file whose lstat (or fstat) is `st`: size, mtime, inode and ctime.
SyncStateFile state_file_of(std::filesystem::path relative_path, const struct ::stat& st);

// Returns the size and mtime of the regular file at `path`, or nullopt iff it is not one.
std::optional<SyncStateFile> stat_for_state(const std::filesystem::path& repo_dir,
                                            const std::filesystem::path& relative_path);

}  // namespace rpmirror
