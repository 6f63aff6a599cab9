// TEST SEAM: the one place where crash and I/O-error tests reach into rpmirror.
//
// The few filesystem operations that matter for crash safety — creating a .part or temporary
// file, writing package or metadata bytes, flushing (syncfs/fsync), renaming (including the
// RENAME_EXCHANGE that publishes repodata/) and unlinking (--delete) — go through the wrappers
// below. Each operation kind has its own call counter. The environment variable RPMIRROR_FAULT,
// read once at startup, may arm one fault:
//
//   RPMIRROR_FAULT=kill:<op>:<n>             SIGKILL the process just before the n-th <op>
//   RPMIRROR_FAULT=errno:<op>:<n>:<ERRNO>    the n-th <op> fails with ERRNO (ENOSPC, EIO, EROFS,
//                                            EACCES, EDQUOT, EPERM, EMFILE, ENFILE) instead of
//                                            being made
//   RPMIRROR_FAULT=errno:<op>:<n>+:<ERRNO>   the n-th <op> and every later one fail
//
// <op> is one of create, write, sync, rename, unlink, open (opening a package to check its
// signature, --gpgcheck), s3 (a request to an object store that writes or deletes: PUT, POST,
// DELETE; an injected errno fails the request without sending it). Before a kill, one line
// "rpmirror-fault: kill before <op> #<n>: <subject>" goes to stderr (tests read it to tell which
// phase was hit). An unparsable value is reported on stderr and ignored.
//
// RPMIRROR_FS_FALLBACK=1 makes the filesystem layer (src/fs/) take the paths it takes where the
// kernel or the filesystem lacks a feature, on any machine: lookups walk components instead of
// using openat2(RESOLVE_BENEATH), and repodata/ is published with plain renames, as on NFS, CIFS
// and FUSE where renameat2(RENAME_EXCHANGE) fails with EINVAL.
//
// Unset (production), every wrapper costs one predictable branch on a cached flag and then makes
// the real system call. Thread-safe: the counters are atomic.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string_view>

namespace rpmirror::fault {

enum class Op { Create, Write, Sync, Rename, Unlink, Open, S3 };

namespace detail {
// True iff RPMIRROR_FAULT armed a fault; set once during static initialisation.
extern const bool is_armed;
// `fd` >= 0: the subject is the file open as `fd` (looked up only when a kill is due).
bool fails_slow(Op op, std::string_view subject, int fd = -1);
}  // namespace detail

// Counts one `op` on `subject` (a path or name, for the kill line). Returns true iff an injected
// error is due: errno is then set and the caller must behave as if the real call failed. Does not
// return when a kill is due.
inline bool fails(Op op, std::string_view subject) {
    return detail::is_armed && detail::fails_slow(op, subject);
}

// True iff RPMIRROR_FS_FALLBACK=1 was set at startup.
bool fallbacks_forced();

// The real system calls behind the seam; same contracts as the calls they wrap.
ssize_t pwrite(int fd, const void* data, std::size_t size, off_t offset);
ssize_t write(int fd, const void* data, std::size_t size);
int syncfs(int fd, std::string_view subject);
int fsync(int fd, std::string_view subject);
int renameat(int old_dir, const char* old_name, int new_dir, const char* new_name);
int renameat2(int old_dir, const char* old_name, int new_dir, const char* new_name, unsigned flags);
int rename(const char* old_path, const char* new_path);
int unlinkat(int dir_fd, const char* name, int flags);
int open_for_reading(const char* path, int flags);

}  // namespace rpmirror::fault
