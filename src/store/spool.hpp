// The spool of a store that is no local directory (a bucket, memory): the private directory its
// Staging (store/object_store.hpp) makes files in before they are committed (uploaded, read in)
// and unlinked. By default it is on a memory-backed filesystem (/dev/shm), so a sync into a
// bucket writes nothing to a local disk; its size is bounded by StageOptions::capacity
// (--s3-spool-size). A killed run's spool is removed by the next one.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "rpmirror/util/error.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror::store {

// The default parent of the spool: a tmpfs on every modern Linux.
inline constexpr const char* kDefaultSpoolParent = "/dev/shm";

struct S3Spool {
    std::filesystem::path dir;  // the fresh private directory (0700)
    // `dir/.owner`, flock(LOCK_EX)ed: keep it open while the spool is in use.
    UniqueFd owner;
    bool in_memory = false;  // on tmpfs or ramfs
    // Set iff the default memory-backed parent was unusable and the spool is on disk: names the
    // directory and says so.
    std::optional<std::string> warning;
};

// Returns true iff `path` is on a memory-backed filesystem (statfs: tmpfs or ramfs). False for a
// path that does not exist.
bool is_memory_backed(const std::filesystem::path& path);

// Creates the spool directory `<parent>/rpmirror-s3-spool-<pid>-XXXXXX`. `parent` is `chosen`
// (--s3-spool-dir, created if missing) when non-empty; otherwise `memory_parent` if it is a
// memory-backed directory with at least `needed_bytes` free (a container's /dev/shm is often
// 64 MiB), else $TMPDIR (/tmp) with S3Spool::warning set, naming the reason. Before creating it,
// removes the spool directories of `parent` whose run has ended (remove_stale_spools).
// Returns Error{Io} naming the parent or the directory iff it cannot be created.
Result<S3Spool> create_s3_spool(const std::filesystem::path& chosen, std::uint64_t needed_bytes,
                                const std::filesystem::path& memory_parent = kDefaultSpoolParent);

// Removes every directory of `parent` named exactly `rpmirror-s3-spool-<digits>-<6 letters or
// digits>` whose `.owner` file exists and is not flock()ed by anyone (the run that made it has
// ended, however it died). The pid in the name is never trusted: a run in another PID namespace
// or container sharing the directory holds its lock like any other. Anything else (other names,
// spools without `.owner`, locked ones) is left alone. Returns the directories removed.
std::vector<std::filesystem::path> remove_stale_spools(const std::filesystem::path& parent);

}  // namespace rpmirror::store
