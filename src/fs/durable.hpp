// The filesystem layer (src/fs/), part 2: whole files written at once, atomic replacement and
// flushing.
//
// rpmirror never fsyncs file by file: it flushes a whole filesystem with one syncfs() at the
// points where something is about to vouch for what was written (metadata about to be published,
// a state file about to record verified files). Everything goes through the fault seam.
// All functions are thread-safe.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "rpmirror/error.hpp"

namespace rpmirror::fs {

// Returns the whole content of the file `path`, or Error{NotFound} / Error{Io} naming it iff it
// cannot be read.
Result<std::string> read_file(const std::filesystem::path& path);

// Writes `contents` to the file `path`, created or truncated (a symlink at `path` is refused
// with ELOOP, never followed). Not flushed. Returns Error{Io} naming `path` iff it fails (a
// partly written file may then be left: write only where nobody reads yet, e.g. staging).
Result<void> write_file(const std::filesystem::path& path, std::string_view contents);

// Replaces the file `path` by one holding `contents`, atomically: written to `<path>.tmp` first,
// then renamed over `path`, so a reader (or a crash) sees the old content or the new, never a
// mix. Not flushed. Returns Error{Io} iff it fails; the temporary file is then removed.
Result<void> replace_file(const std::filesystem::path& path, std::string_view contents);

// Flushes the filesystem holding the directory `directory` (syncfs). Succeeds without doing
// anything iff `directory` does not exist (nothing was written there). Returns Error{Io} naming
// it iff the flush fails.
Result<void> flush_filesystem(const std::filesystem::path& directory);

// Makes the entries of the directory open as `dir_fd` durable (fsync of the directory), e.g.
// after renames in it. `shown` names it in errors. Returns Error{Io} iff it fails.
Result<void> sync_directory(int dir_fd, const std::filesystem::path& shown);

}  // namespace rpmirror::fs
