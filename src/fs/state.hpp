// The filesystem layer (src/fs/), part 3: rpmirror's own state, kept outside the mirror, and the
// lock that lets one run at a time work on a repository directory.
//
// A mirror tree holds only what `dnf reposync` leaves there (packages, repodata/, comps) plus
// transient .part and staging names during a run. What rpmirror knows about a repository
// directory (the no-op state, the lock) lives in a state directory, one entry per repository
// directory, named after its absolute path. A missing or stale entry is never trusted: it only
// costs verification.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <stop_token>
#include <string>

#include "rpmirror/error.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror::fs {

// The state directory used when none is given: $RPMIRROR_STATE_DIR if set, else
// /var/lib/rpmirror for root, else $XDG_STATE_HOME/rpmirror, else ~/.local/state/rpmirror.
std::filesystem::path default_state_dir();

// The entry for `repo_dir` in `state_dir`, without extension:
// `<state_dir>/repos/<last component of repo_dir>-<16 hex digits of a hash of its absolute,
// lexically normal path>`. Hosts that share a state directory (NFS) and mount the mirror at
// the same path share entries. Does not touch the filesystem.
std::filesystem::path state_entry(const std::filesystem::path& state_dir,
                                  const std::filesystem::path& repo_dir);

// An exclusive lock on one repository directory, held for the life of the object: an OFD lock
// (fcntl F_OFD_SETLK) on `<entry>.lock`, which also holds the holder's pid for messages.
// Released when destroyed or when the process dies (also by SIGKILL). NFSv4 carries OFD locks
// to the server, so hosts sharing the state directory exclude each other. Move-only.
class RunLock {
  public:
    // Takes the lock of `repo_dir` in `state_dir` (created with parents if missing).
    // Without `wait`, fails at once if another process holds it; with `wait`, retries (every
    // 100 ms) until it is free, `wait` has passed or `stop` is requested.
    // Returns Error{Busy} "repository directory <repo_dir> is being synced by another rpmirror
    // (pid N)" (no subject) iff it is held elsewhere; Error{Interrupted} iff stopped while waiting;
    // Error{Io} naming the lock file iff the state directory cannot be used.
    static Result<RunLock> acquire(const std::filesystem::path& state_dir,
                                   const std::filesystem::path& repo_dir,
                                   std::optional<std::chrono::seconds> wait = std::nullopt,
                                   std::stop_token stop = {});

    RunLock(RunLock&&) noexcept = default;
    RunLock& operator=(RunLock&&) noexcept = default;

    const std::filesystem::path& path() const { return path_; }

  private:
    RunLock(UniqueFd fd, std::filesystem::path path) : fd_(std::move(fd)), path_(std::move(path)) {}
    UniqueFd fd_;
    std::filesystem::path path_;
};

}  // namespace rpmirror::fs
