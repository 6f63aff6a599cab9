// Where downloaded files go: a destination root opened once, directories below it opened (and
// created) without ever leaving it, and the .part / final names of one file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <unordered_map>

#include "rpmirror/util/error.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror::download {

// Returns success iff `destination` is usable as a path below a root: relative, non-empty, no
// "." or ".." component, a file name that is not empty and not a .part name itself.
Result<void> check_destination_path(const std::filesystem::path& destination);

// An open .part file of one destination.
struct PartFile {
    int dir_fd = -1;  // the directory holding it (owned by the DestinationRoot)
    std::string part_name;
    std::string final_name;
    UniqueFd fd;                      // O_RDWR, positioned nowhere (pwrite/pread only)
    std::uint64_t existing_size = 0;  // its size when opened (a leftover from an earlier run)
};

// One destination root. Directory fds are cached for the life of the object.
// Not thread-safe (the download loop uses it); the dir fds it hands out stay valid until it is
// destroyed and may be used from any thread.
class DestinationRoot {
  public:
    // Creates `root` (and parents) if missing, then opens it.
    // Returns Error{Io}/Error{NotFound} naming `root` iff that fails.
    static Result<DestinationRoot> open(const std::filesystem::path& root);

    const std::filesystem::path& path() const { return path_; }

    // Opens (creating it, and the directories above it, as needed) the .part file of
    // `destination` (checked with check_destination_path). Directories are resolved beneath the
    // root (symlinks that stay inside it are followed); the .part itself must be a regular file
    // and is never followed.
    // Returns Error{Unsafe} iff a symlink (or "..") would lead outside the root, or the .part is
    // a symlink or not a regular file; Error{Io} with errno for other failures. The .part is
    // locked shared (flock) through the returned descriptor: a sync's cleanup of stale .part
    // files skips it (MirrorStore::remove_partials). `unlinked_once`: this is the second try,
    // the first having opened a file that cleanup unlinked meanwhile.
    Result<PartFile> open_part(const std::filesystem::path& destination,
                               bool unlinked_once = false);

  private:
    Result<int> directory_fd(const std::filesystem::path& relative_dir);

    std::filesystem::path path_;
    UniqueFd root_fd_;
    std::unordered_map<std::string, UniqueFd> directories_;
};

}  // namespace rpmirror::download
