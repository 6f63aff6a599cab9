// The filesystem layer (src/fs/), part 1: paths beneath a root directory.
//
// Every file rpmirror writes, reads for an audit or removes lies beneath a root the user named
// (the download path, the metadata path, --safe-write-path). These functions never leave that
// root: with openat2(RESOLVE_BENEATH) (Linux 5.6+) symlinks between directories that stay
// inside the root are followed and escaping ones fail with EXDEV; without openat2 (old kernels,
// seccomp filters) every component is opened on its own with O_NOFOLLOW, so no symlink is
// followed at all. The last component is never followed by lookups, creations and removals.
//
// Everything that creates or removes goes through the fault seam (fs/fault.hpp), so the crash
// tests reach it. Stages above use these functions and never call openat/mkdirat/unlinkat
// themselves. All functions are thread-safe.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "rpmirror/util/error.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror::fs {

// Opens `relative` (no ".." component, not absolute; empty = the root itself, duplicated)
// beneath the directory open as `root_fd` with `flags` (and `mode` with O_CREAT), resolved as
// described above. Returns the fd, or -1 with errno set: EXDEV or ELOOP iff the path would leave
// the root or a symlink was refused. Not for creating files (create_file_at is).
int open_beneath(int root_fd, const std::filesystem::path& relative, int flags, mode_t mode = 0);

// Opens the directory at `path` itself (O_RDONLY | O_DIRECTORY, symlink not followed iff
// `nofollow`). Returns an invalid fd with errno set iff it cannot.
UniqueFd open_directory(const std::filesystem::path& path, bool nofollow = false);

// Opens the directory `name` (one component) of the directory open as `dir_fd` for reading,
// never following a symlink (ELOOP or ENOTDIR then). Returns an invalid fd with errno iff it
// cannot.
UniqueFd open_child_directory(int dir_fd, const std::string& name);

// Opens the directory `relative` beneath `root_fd`, creating it (mode 0755 & ~umask) and every
// missing directory above it, each relative to its parent. `shown_root` names the root in
// errors. Returns Error{Unsafe} iff a symlink on the way leads outside the root (or is refused
// by the component walk), Error{Io} with errno for other failures.
Result<UniqueFd> make_directories_beneath(int root_fd, const std::filesystem::path& relative,
                                          const std::filesystem::path& shown_root);

// Creates (or opens, if it exists) the file `name` in the directory open as `dir_fd` with
// O_RDWR | O_NOFOLLOW (a symlink fails with ELOOP) | O_NONBLOCK (a planted FIFO never blocks;
// cleared again for a regular file). A "create" of `shown` in the fault seam. Returns -1 with
// errno set iff it cannot; the caller checks the file type with fstat.
int create_file_at(int dir_fd, const std::string& name, std::string_view shown);

// Renames `from` to `to`, both in the directory open as `dir_fd` (replacing `to`), through the
// fault seam. Same contract as renameat(2).
int rename_at(int dir_fd, const std::string& from, const std::string& to);

// Unlinks the entry `name` of the directory open as `dir_fd` (never following it), through the
// fault seam. Same contract as unlinkat(2) with no flags.
int unlink_at(int dir_fd, const std::string& name);

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

// Returns what is at `relative` beneath the directory open as `root_fd`, never following the
// last component. Opens nothing for reading (O_PATH).
Entry lookup_beneath(int root_fd, const std::filesystem::path& relative);

// Opens the directory `relative` (may be empty: the root itself) beneath `root_fd`. Returns an
// invalid fd with errno set iff it cannot (EXDEV or ELOOP when it would leave the root).
UniqueFd open_directory_beneath(int root_fd, const std::filesystem::path& relative);

enum class Removal {
    Removed,  // the entry was unlinked
    Missing,  // nothing there (or a directory on the way is missing)
    Kept,     // something else is there (a directory, FIFO, device; a symlink unless allowed)
};

// Unlinks the regular file `relative` beneath the directory `root` (and a symlink there iff
// `symlinks_too`, never following it), opening directories as open_directory_beneath does, so
// nothing outside `root` is ever touched. Returns what happened, or Error{Io} naming the path iff
// a lookup or the unlink fails for another reason than ENOENT.
Result<Removal> remove_beneath(const std::filesystem::path& root,
                               const std::filesystem::path& relative, bool symlinks_too);

// Removes the directory `relative` beneath `root` iff it is empty (a blob's own directory once its
// file is gone), through the fault seam, never following a symlink. Returns true iff it was
// removed; false when it is not there, not empty or not a directory, or cannot be removed.
bool remove_empty_directory_beneath(const std::filesystem::path& root,
                                    const std::filesystem::path& relative);

// `time` (a stat's st_mtim, st_ctim; a clock_gettime) in nanoseconds since the epoch.
inline std::int64_t timespec_ns(const struct timespec& time) {
    return static_cast<std::int64_t>(time.tv_sec) * 1'000'000'000 + time.tv_nsec;
}

// True iff `a` and `b` are (l)stats of one file whose content has not changed between them: the
// same device and inode, size and mtime (a link, a chmod or a cache entry written moves only the
// ctime).
inline bool same_content(const struct stat& a, const struct stat& b) {
    return a.st_dev == b.st_dev && a.st_ino == b.st_ino && a.st_size == b.st_size &&
           timespec_ns(a.st_mtim) == timespec_ns(b.st_mtim);
}

// Returns "symlink", "directory", "FIFO", "socket", "device" for a non-regular `mode`.
const char* file_kind_name(mode_t mode);

// TEST SEAM: forces (true) or stops forcing (false) the fallbacks of this layer — the component
// walk that replaces openat2 on kernels without it, and the plain-rename publish of filesystems
// without RENAME_EXCHANGE (fs/swap.hpp) — so tests cover both paths on any machine.
// RPMIRROR_FS_FALLBACK=1 in the environment (fs/fault.hpp) forces them from the start.
void force_fallbacks(bool forced);

// True iff the fallbacks are forced.
bool fallbacks_forced();

}  // namespace rpmirror::fs
