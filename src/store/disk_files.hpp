// The disk ObjectStore's file helpers (disk_objects.cpp), over src/fs/ and the fault seam: what
// a directory holds, a whole subtree removed, a file's bytes copied. Internal to src/store.
#pragma once

#include <sys/stat.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "store/object_store.hpp"

namespace rpmirror::store::disk {

// A file's ObjectInfo from its lstat.
ObjectInfo info_of(const struct stat& st);

// True iff link(2) failed with `error` because the filesystem refuses hard links here.
bool refuses_links(int error);

// A name for a temporary entry beside `name`, unlikely to collide (".NAME<infix><random>").
std::string temporary_name(std::string_view name, std::string_view infix);

// Removes the entry `name` of the directory `dir_fd` and everything beneath it, never following
// a symlink, through the fault seam. Returns the errno of the first failure (0: all gone, or
// nothing was there).
int remove_all_at(int dir_fd, const std::string& name);

// The entries of the directory open as `dir_fd` with their lstat, "." and ".." left out; Error{Io}
// naming `shown` iff it cannot be read.
Result<std::vector<std::pair<std::string, struct stat>>> entries_of(int dir_fd,
                                                                    const std::string& shown);

// Copies the regular file open as `source` (its stat `st`) into the file `name` of `to_dir`
// (created or truncated), with its mode and times. `shown` names the destination in errors.
Result<void> copy_bytes(int source, const struct stat& st, int to_dir, const std::string& name,
                        const std::string& shown);

// Makes the regular file `from_name` of the directory `from_dir` (`shown_from` names it) appear
// as the new entry `name` of `dir_fd` (`shown` names it) as `request.mode` says, after checking
// `request.pin` (Error{Corrupt} iff it is not that file): the copy operations' one step on disk.
// Error{Unsafe} iff the source is no regular file; Error{Unsupported} iff CopyMode::Link or
// CopyMode::Clone is refused by the filesystem; Error{Corrupt} iff the source's name was replaced
// while it was linked (nothing is left at `name`).
Result<void> place_at(int from_dir, const std::string& from_name, const std::string& shown_from,
                      const CopyRequest& request, int dir_fd, const std::string& name,
                      const std::string& shown);

// Writes `bytes` into the file `name` of `dir_fd` (created or truncated), flushed to the disk
// before it is closed iff `flush`. `shown` names it.
Result<void> write_file_at(int dir_fd, const std::string& name, std::string_view bytes,
                           const std::string& shown, bool flush = false);

}  // namespace rpmirror::store::disk
