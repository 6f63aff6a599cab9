// The trees a run writes, and the one rule about them: no tree lies inside another owner's
// repository directory, nor a repository directory inside another tree.
//
// Why: a repository's `--delete` removes every package beneath its directory that its metadata
// does not list, `verify --extra` reports them, and removing a snapshot removes its whole
// directory. A second repository, a snapshot tree or a published tree nested in one of them (or
// the same directory) is therefore another owner's data in a place that is cleaned as one's own.
// Refused when a configuration or command line is loaded, before anything is written.
//
// Trees are compared as the directories they resolve to, not as spelled: `D/m`, `D/m/`,
// `D/x/../m`, a symlink to `D/m` and a bind mount of it are one directory. Each path is made
// absolute, its existing part resolved (symlinks, `..`) and identified by the device and inode of
// every directory on the way down from `/`; the part that does not exist yet is compared by its
// names below the deepest existing directory. So `A` lies inside `B` iff B's directory is one of
// A's ancestors (or A itself), whatever names lead there. An s3:// tree is a bucket and a key
// prefix (`s3://b/m` holds `s3://b/m/updates`; `s3://b/m` and `s3://b/mx` do not overlap); a local
// tree and an s3:// one never overlap.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/sync/sync_options.hpp"
#include "rpmirror/util/error.hpp"

namespace rpmirror {

enum class TreeKind {
    Repository,  // a repository directory (packages; repodata/ unless the metadata goes elsewhere)
    Metadata,    // a metadata directory apart from its repository's (--metadata-path)
    Snapshots,   // <snapshot base>/snapshots: the snapshots of every repository of that base
    Published,   // <snapshot base>/published: the published names (rpmirror/snapshot/snapshot.hpp)
};

// Returns "repository directory", "metadata directory", "snapshot tree" or "published tree".
std::string_view tree_kind_name(TreeKind kind);

// One tree a run writes, and who writes it (for the rules and the messages).
struct OwnedTree {
    TreeKind kind = TreeKind::Repository;
    // A local path (a relative one is taken from the working directory) or s3://BUCKET/PREFIX.
    std::filesystem::path path;
    std::string owner;     // who writes it: "job 'updates'", "repository 'fedora'"; never empty
    std::string given_by;  // where the path was given: "FILE:LINE", "-p /srv/m --norepopath"
};

// Two trees that may not overlap but do: `inner` is inside `outer`, or the same tree (`equal`).
struct TreeOverlap {
    std::size_t inner = 0;  // indexes into the trees given to find_tree_overlaps
    std::size_t outer = 0;
    bool equal = false;
    // "<inner path> (<kind> of <owner>, <given by>) is inside <outer path> (...)" with how the
    // paths resolved when their spelling does not show it, and why that is refused.
    std::string message;
};

// Returns every pair of `trees` that overlaps (the same tree, or one inside the other) without
// being allowed to, in the order of their first tree. Allowed: a repository directory and a
// metadata directory of one owner (its repodata/ may be anywhere), and two snapshot trees or two
// published trees that are the same directory (the jobs of one snapshot base share it). A path
// whose existing part cannot be examined (EACCES) is compared by its names from there on; an
// s3:// path that does not parse is left out (the sync refuses it with its own error).
// Reads the filesystem (stat of each directory on the way), writes nothing. Thread-safe.
std::vector<TreeOverlap> find_tree_overlaps(std::span<const OwnedTree> trees);

// The trees `rpmirror sync` writes for the repositories `repo_ids` with `options`: each
// repository directory (-p/<id>, or -p with --norepopath), its metadata directory when
// --metadata-path sets one, and iff `snapshots` (--snapshot) the snapshot and published trees
// beneath `snapshot_dir` (--snapshot-dir; nullopt: -p). Does not touch the filesystem.
std::vector<OwnedTree> sync_command_trees(std::span<const std::string> repo_ids,
                                          const SyncOptions& options, bool snapshots,
                                          const std::optional<std::filesystem::path>& snapshot_dir);

// Returns Error{BadInput} whose message is the first overlap's (and how many more there are)
// iff find_tree_overlaps(trees) finds any. Thread-safe.
Result<void> check_tree_overlaps(std::span<const OwnedTree> trees);

}  // namespace rpmirror
