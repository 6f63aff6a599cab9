// The filesystem layer (src/fs/): directories made and removed whole, and files placed as copies
// of others. The one implementation of each for every stage that keeps local files of its own
// (staging directories, spools, scratch copies, the state directory's keepsakes), so that each
// goes through the fault seam (fs/fault.hpp) and none follows a symlink it removes.
// All functions are thread-safe.
#pragma once

#include <filesystem>
#include <string_view>

#include "rpmirror/util/error.hpp"

namespace rpmirror::fs {

// Makes the directory `path` and any missing parent. Succeeds iff it is a directory afterwards.
// Returns Error{Io} naming `path` iff it cannot be made (a file in the way, no permission):
// "cannot create `what`: <reason>".
Result<void> make_directories(const std::filesystem::path& path,
                              std::string_view what = "the directory");

// Removes `path` and, if it is a directory, everything beneath it; a symlink is removed, never
// followed. A `path` that does not exist is no error. Returns Error{Io} naming what could not
// be removed; what was removed before stays removed.
Result<void> remove_tree(const std::filesystem::path& path);

// Removes the file (or symlink) `path`; a directory is refused (Error{Io}, EISDIR). A `path`
// that does not exist is no error. Returns Error{Io} naming it iff it cannot be removed.
Result<void> remove_file(const std::filesystem::path& path);

// Renames `from` to `to` (replacing a file at `to`). Returns Error{Io} naming `from` iff it fails.
Result<void> rename_file(const std::filesystem::path& from, const std::filesystem::path& to);

// How place_copy made its copy.
enum class CopyMethod { Link, Copy };

// Puts a file holding `source`'s content at `target`, atomically: a hard link (or, where links
// fail: another filesystem, one without hard links, a permission) a copy at `<target>.tmp`, then
// renamed over `target`, so a reader sees the old file or the new one, whole. Makes `target`'s
// directory. Not flushed. Returns Error{Io} naming the file iff it fails; the temporary file is
// removed then and `target` is as it was.
Result<CopyMethod> place_copy(const std::filesystem::path& source,
                              const std::filesystem::path& target);

// Copies `source` to `target` (created or truncated, never through a symlink at `target`),
// without the atomic rename: for a file nobody reads yet (a staging directory's part file).
Result<void> copy_file(const std::filesystem::path& source, const std::filesystem::path& target);

}  // namespace rpmirror::fs
