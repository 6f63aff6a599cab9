// Looking files up beneath a root directory without following symlinks out of it: what the
// audit sees at a path, and the directory fd a repair unlinks from.
#pragma once

#include <sys/stat.h>

#include <filesystem>

#include "rpmirror/error.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror::audit {

enum class EntryKind {
    Regular,    // a regular file; `st` holds its fstat
    Missing,    // no such entry (or a component is not a directory)
    Symlink,    // the last component is a symlink (not followed)
    Directory,  // a directory where a file was expected
    Other,      // FIFO, socket, device
    Escapes,    // a symlinked directory on the way leads outside the root (or loops)
    Error,      // any other failure; `sys_errno` says why
};

struct Entry {
    EntryKind kind = EntryKind::Error;
    struct stat st {};
    int sys_errno = 0;
};

// Returns what is at `relative` (no ".." component, not absolute) beneath the directory open as
// `root_fd`, looked up with openat2(RESOLVE_BENEATH) and O_NOFOLLOW on the last component (symlinks
// between directories that stay inside the root are followed, as the downloader follows them);
// without openat2, component by component where no symlink is followed at all. Opens nothing for
// reading (O_PATH). Thread-safe.
Entry lookup_beneath(int root_fd, const std::filesystem::path& relative);

// Opens the directory `relative` (may be empty: the root itself) beneath `root_fd` as
// lookup_beneath resolves it. Returns an invalid fd with errno set iff it cannot (EXDEV or ELOOP
// when it would leave the root). Thread-safe.
UniqueFd open_directory_beneath(int root_fd, const std::filesystem::path& relative);

enum class Removal {
    Removed,  // the entry was unlinked
    Missing,  // nothing there (or a directory on the way is missing)
    Kept,     // something else is there (a directory, FIFO, device; a symlink unless allowed)
};

// Unlinks the regular file `relative` beneath the directory `root` (and a symlink there iff
// `symlinks_too`, never following it), opening directories as open_directory_beneath does, so
// nothing outside `root` is ever touched. Returns what happened, or Error{Io} naming the path iff
// a lookup or the unlink fails for another reason than ENOENT. Thread-safe.
Result<Removal> remove_beneath(const std::filesystem::path& root,
                               const std::filesystem::path& relative, bool symlinks_too);

// Returns "symlink", "directory", "FIFO", "socket", "device" for a non-regular `mode`.
const char* file_kind_name(mode_t mode);

}  // namespace rpmirror::audit
