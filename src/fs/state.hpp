// The filesystem layer (src/fs/), part 3: rpmirror's own state, kept outside the mirror, and the
// lock that lets one run at a time work on a repository directory.
//
// A mirror tree holds only what `dnf reposync` leaves there (packages, repodata/, comps) plus
// transient .part and staging names during a run. What rpmirror knows about a repository
// directory (the no-op state, the lock) lives in a state directory, one entry per repository
// directory, named after its absolute path (and a lock per directory, named after its device and
// inode). A missing or stale entry is never trusted: it only costs verification.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include "rpmirror/util/error.hpp"
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

// The lock file of the directory `device`:`inode` in `state_dir`:
// `<state_dir>/repos/by-inode/<major>.<minor>-<inode>.lock`. Does not touch the filesystem.
std::filesystem::path directory_lock_path(const std::filesystem::path& state_dir, dev_t device,
                                          ino_t inode);

// What RunLock::acquire does when the repository directory does not exist.
enum class MissingDirectory {
    Create,             // create it (with parents), then lock it: a sync, verify --repair
    LockOnlyIfPresent,  // only the lock by spelling (a snapshot of no mirror fails anyway)
};

// An exclusive lock on one repository directory, held for the life of the object: OFD locks
// (fcntl F_OFD_SETLK) on two files of the state directory, each holding the holder's pid and
// spelling of the directory for messages:
//   - `<entry>.lock` (state_entry: the directory's absolute path as spelled). Hosts sharing the
//     state directory on NFS (NFSv4 carries OFD locks to the server) and mounting the mirror at
//     the same path exclude each other through it; device numbers differ between hosts.
//   - directory_lock_path(): the directory's device and inode, so that two spellings of one
//     directory on this host (a symlink, `..`, a bind mount) exclude each other too.
// Taken in that order, always, so two runs never wait for each other crosswise. Released when
// destroyed or when the process dies (also by SIGKILL). Move-only.
class RunLock {
  public:
    // Takes the lock of `repo_dir` in `state_dir` (created with parents if missing); the
    // repository directory is created first (with its parents) unless `missing` says otherwise:
    // its inode names the second lock. What was created is removed on release iff still empty.
    // Without `wait`, fails at once if another process holds it; with `wait`, retries (every 100
    // ms) until it is free, `wait` has passed or `stop` is requested. Returns Error{Busy}
    // "repository directory <repo_dir> is being synced by another rpmirror (pid N)" (no subject; ",
    // as <its spelling>" after the pid iff the holder spelled the directory differently) iff it is
    // held elsewhere (a lock by inode whose holder's spelling no longer names that directory is
    // one being released by a run that removed its directory: waited for up to 5 s, always);
    // Error{Interrupted} iff stopped while waiting; Error{Io} naming the lock file
    // iff the state directory cannot be used, naming `repo_dir` iff it cannot be created or opened.
    static Result<RunLock> acquire(const std::filesystem::path& state_dir,
                                   const std::filesystem::path& repo_dir,
                                   std::optional<std::chrono::seconds> wait = std::nullopt,
                                   std::stop_token stop = {},
                                   MissingDirectory missing = MissingDirectory::Create);

    RunLock(RunLock&& other) noexcept
        : by_path_(std::move(other.by_path_)),
          by_inode_(std::move(other.by_inode_)),
          path_(std::move(other.path_)),
          created_(std::exchange(other.created_, {})) {}
    RunLock& operator=(RunLock&& other) noexcept;
    // Removes the directories acquire created that are still empty (a run that wrote nothing
    // leaves nothing), then releases the locks.
    ~RunLock();

    // The lock file by spelling.
    const std::filesystem::path& path() const { return path_; }

  private:
    RunLock(UniqueFd by_path, std::filesystem::path path)
        : by_path_(std::move(by_path)), path_(std::move(path)) {}
    void remove_created();

    UniqueFd by_path_;
    UniqueFd by_inode_;  // invalid only with LockOnlyIfPresent and no directory
    std::filesystem::path path_;
    std::vector<std::filesystem::path> created_;  // by acquire, outermost first
};

}  // namespace rpmirror::fs
