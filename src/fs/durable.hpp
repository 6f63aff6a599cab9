// The filesystem layer (src/fs/), part 2: whole files written at once, atomic replacement and
// flushing.
//
// rpmirror never fsyncs file by file: it flushes a whole filesystem with one syncfs() at the
// points where something is about to vouch for what was written (metadata about to be published,
// a state file about to record verified files). The exception is FUSE, where syncfs() does not
// reach the filesystem's daemon (Linux forwards it to virtiofs only: a syncfs of a FUSE mount
// returns 0 at once and flushes nothing): there every file and directory changed beneath the
// directory being flushed is fsynced, in parallel. Everything goes through the fault seam.
// All functions are thread-safe.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/util/error.hpp"

namespace rpmirror::fs {

// Returns the whole content of the file `path`, or Error{NotFound} / Error{Io} naming it iff it
// cannot be read.
Result<std::string> read_file(const std::filesystem::path& path);

// Writes all of `bytes` to `fd` at its offset, retrying short writes and EINTR. Returns
// Error{Io} "cannot write" naming `shown` iff a write fails.
Result<void> write_all(int fd, std::string_view bytes, std::string_view shown);

// Writes `contents` to the file `path`, created or truncated (a symlink at `path` is refused
// with ELOOP, never followed). Not flushed. Returns Error{Io} naming `path` iff it fails (a
// partly written file may then be left: write only where nobody reads yet, e.g. staging).
Result<void> write_file(const std::filesystem::path& path, std::string_view contents);

// Replaces the file `path` by one holding `contents`, atomically: written to `<path>.tmp` first,
// then renamed over `path`, so a reader (or a crash) sees the old content or the new, never a
// mix. Not flushed. Returns Error{Io} iff it fails; the temporary file is then removed.
Result<void> replace_file(const std::filesystem::path& path, std::string_view contents);

// Makes everything written beneath the directory `directory` durable: one syncfs of its
// filesystem, or on FUSE an fsync of every file and directory beneath it whose ctime or mtime is
// at most 10 minutes older than the process (so clocks of a network filesystem's server may be
// that far behind). Succeeds without doing anything iff `directory` does not exist (nothing was
// written there). Returns Error{Io} naming it (or the file) iff the flush fails.
Result<void> flush_filesystem(const std::filesystem::path& directory);

// flush_filesystem of each of `directories`, one syncfs per filesystem however many of them it
// holds (on FUSE each directory is walked). Directories that do not exist are skipped.
Result<void> flush_filesystems(const std::vector<std::filesystem::path>& directories);

// fsyncs each of the files (or directories) `paths`, on up to 16 threads: on network storage a
// flush is a round trip, and they overlap. A path that no longer exists is skipped; a symlink is
// not followed (an error). Returns Error{Io} naming the first that fails.
Result<void> flush_files(const std::vector<std::filesystem::path>& paths);

// True iff a syncfs of the filesystem holding the open file `fd` makes it durable: false on FUSE
// (statfs type FUSE_SUPER_MAGIC), true elsewhere and when fstatfs fails.
bool syncfs_reaches_storage(int fd);

// Makes the entries of the directory open as `dir_fd` durable (fsync of the directory), e.g.
// after renames in it. `shown` names it in errors. Returns Error{Io} iff it fails.
Result<void> sync_directory(int dir_fd, const std::filesystem::path& shown);

}  // namespace rpmirror::fs
