// What rpmirror wrote beneath a root outside any repository's own directory (Amazon Linux's
// shared blobs under --upstream-layout, an installation tree's images under --treeinfo), so that
// a later --delete removes only its own files, and only once nothing lists them.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/plan/plan.hpp"
#include "rpmirror/util/error.hpp"

namespace rpmirror {

// --keep-releases: true iff `tree` is another release of the repository at `mine` (both
// relative to the layout root, generic form): as many directories, the same last one (the
// architecture), and exactly one other that differs (the release's GUID). `guids/G2/x86_64` is a
// release of `guids/G1/x86_64`; `guids/G1/aarch64` is not.
bool is_release_of(const std::filesystem::path& mine, const std::filesystem::path& tree);

// Who owns each key beneath a destination's root: every key has one owner (a repository's
// packages, a tree's images, a layout's blobs, rpmirror's own names: fs::is_reserved_key), and
// a writer claims a key before it writes it. Keys are '/'-separated and lexically normal.
class Owners {
  public:
    // Records `owner` ("repository addons/HA", ...) as the owner of `key`; the first owner
    // recorded for a key keeps it.
    void add(const std::string& key, const std::string& owner);

    // The owner of `key` other than `claimant`: rpmirror itself for a reserved name, the owner
    // recorded for it, or nullopt iff `claimant` may write it.
    std::optional<std::string> other_owner(const std::string& key, std::string_view claimant) const;

    // Error{Unsafe} naming the key and both owners iff another owns `key`; `shown` is the key
    // as the user sees it (the full path).
    Result<void> claim(const std::string& key, std::string_view claimant,
                       const std::string& shown) const;

    // Every key recorded (reserved names are a rule, not a list: not among them).
    const std::map<std::string, std::string>& keys() const { return owners_; }

  private:
    std::map<std::string, std::string> owners_;
};

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

    // Vouches in `trust` for every file recorded (CacheTrust: their cached checksums are
    // believed while they are as recorded).
    void vouch(CacheTrust& trust) const;

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
