// What rpmirror wrote beneath a root outside any repository's own directory (Amazon Linux's
// shared blobs under --upstream-layout, an installation tree's images under --treeinfo), so that
// a later --delete removes only its own files, and only once nothing lists them.
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/error.hpp"
#include "rpmirror/plan.hpp"

namespace rpmirror {

// --keep-releases: true iff `tree` is another release of the repository at `mine` (both
// relative to the layout root, generic form): as many directories, the same last one (the
// architecture), and exactly one other that differs (the release's GUID). `guids/G2/x86_64` is a
// release of `guids/G1/x86_64`; `guids/G1/aarch64` is not.
bool is_release_of(const std::filesystem::path& mine, const std::filesystem::path& tree);

class Catalogue {
  public:
    // The catalogue `name` of `root`, kept in `state_dir` as a sync state (plan.hpp's format,
    // paths relative to `root`) of a directory that is never created. Missing or unreadable, it
    // is empty: nothing is removed for it.
    static Catalogue load(const std::filesystem::path& state_dir, const std::filesystem::path& root,
                          std::string_view name);

    // Records the regular files at `relative` (beneath the root) as they are now: size, mtime,
    // inode and ctime (state_file_of). Those not there are skipped.
    void record(const std::vector<std::filesystem::path>& relative);

    // True iff the file at `relative` (generic, lexically normal) is recorded and still the file
    // recorded.
    bool holds(const std::string& relative) const;

    // Removes every recorded file that `referenced` (paths relative to the root, lexically
    // normal) does not name and that is still the file recorded (through fs::remove_beneath:
    // never outside the root, never a symlink), then its directory when that is left empty
    // (never the root). A recorded file that is gone is forgotten; one that changed is
    // forgotten and left in place, with a line in `warnings`. Returns the paths removed.
    Result<std::vector<std::string>> collect(const std::set<std::string>& referenced,
                                             std::vector<std::string>& warnings);

    // Writes it back, atomically. Returns Error{Io} iff it cannot.
    Result<void> save() const;

  private:
    Catalogue(std::filesystem::path path, std::filesystem::path root)
        : path_(std::move(path)), root_(std::move(root)) {}

    std::filesystem::path path_;
    std::filesystem::path root_;
    std::map<std::string, SyncStateFile> files_;
};

}  // namespace rpmirror
