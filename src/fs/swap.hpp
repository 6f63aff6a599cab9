// The filesystem layer (src/fs/), part 4: swapping a staged directory in for a live one — how
// repodata/ is published.
//
// Where the filesystem supports renameat2(RENAME_EXCHANGE) (ext4, xfs, btrfs, tmpfs) the swap is
// one atomic rename: a reader sees the old directory or the new one. NFS, CIFS and FUSE refuse
// the flags with EINVAL; there the staged files are merged into the live directory by plain
// renames in an order that keeps what a reader needs (see MergeOrder), and files of older
// revisions are removed only when no recently published index lists them.
#pragma once

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "rpmirror/util/error.hpp"

namespace rpmirror::fs {

enum class SwapMethod {
    Exchanged,  // renameat2(RENAME_EXCHANGE): the old directory now has the staging name
    Created,    // there was no live directory: the staging directory was renamed to it
    Merged,     // the fallback: the staged files were renamed into the live directory
};

// The order of a merge. Every staged regular file not in `last` is renamed into the live
// directory first (a live file of the same name and size is kept instead: names of repository
// records carry their checksum). Then every name of `last` but the first that the live directory
// holds is removed, and the staged names of `last` are renamed in, in order. With
// last = {"repomd.xml", "repomd.xml.asc"}: the old signature goes, the new index replaces the
// old in one rename, then its signature comes — an index never sits beside a signature of
// another. Finally, regular files of the live directory that are neither staged, nor in `last`,
// nor in `retain` (the files the replaced index listed, for readers that read it a moment ago)
// are removed.
struct MergeOrder {
    std::vector<std::string> last;
    std::set<std::string> retain;
};

// Makes the staged directory `staging_name` the live directory `live_name`, both entries of
// the directory `parent` (never followed if symlinks). Uses RENAME_EXCHANGE (RENAME_NOREPLACE
// when there is no live directory yet) and falls back to a merge in `order` iff the filesystem
// refuses those flags (EINVAL, ENOTSUP, ENOSYS) or RPMIRROR_FS_FALLBACK=1. Makes the result
// durable (fsync of the directories changed). Does not flush file contents: syncfs first.
// Returns how it swapped, or Error{Unsafe} iff the live entry exists and is not a directory,
// Error{Io} naming the file iff a rename fails (after a failed merge, the live directory holds
// its old index and possibly some new, unlisted files; nothing it lists is missing).
Result<SwapMethod> swap_in_directory(const std::filesystem::path& parent,
                                     const std::string& staging_name, const std::string& live_name,
                                     const MergeOrder& order);

}  // namespace rpmirror::fs
