// `rpmirror snapshot create|list|publish|remove`: where a repository's snapshots are, from what
// the command line says about its mirror (rpmirror/snapshot/snapshot.hpp does the rest).
#pragma once

#include <optional>
#include <string>

#include "rpmirror/s3/s3.hpp"
#include "rpmirror/snapshot/snapshot.hpp"
#include "rpmirror/util/error.hpp"

namespace rpmirror {

// A repository's mirror as `sync` made it, and where its snapshots are.
struct SnapshotPlace {
    std::string repo_id;              // --repo
    std::string download_path = ".";  // -p: a directory or s3://BUCKET/PREFIX
    bool norepopath = false;          // the mirror is -p itself (needs snapshot_dir)
    std::string snapshot_dir;         // --snapshot-dir; "": the download path
    s3::S3Overrides s3;               // the store's settings of an s3:// mirror
};

// The layout of `place`'s snapshots: its repository directory as `sync` names it
// (repo_directory), its snapshots and published names under snapshot_dir. With `writes` (the
// command adds snapshots or published names), first checks that those trees do not overlap the
// repository directory (check_tree_overlaps, owned by "rpmirror snapshot"); list and remove still
// work on such a layout (an older rpmirror made it), so that it can be cleaned up. Returns
// Error{BadInput} naming the download path iff --norepopath is given without snapshot_dir, the
// overlap's error, or snapshot_root_of_mirror's.
Result<SnapshotRoot> open_snapshot_place(const SnapshotPlace& place, bool writes);

}  // namespace rpmirror
