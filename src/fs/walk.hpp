// The filesystem layer (src/fs/), part 4: walking the `*.rpm` files of a tree.
//
// One walk for every stage that looks for packages on disk (--delete's unlisted packages, the
// deduplication's candidates): no symlink is ever followed (directories are opened with
// O_NOFOLLOW one component at a time), only regular files named `*.rpm` are visited, another
// repository or a snapshot nested in the tree is not entered (unless asked: NestedTrees), and
// the caller decides which other directories are descended into. Thread-safe (no shared state).
#pragma once

#include <sys/stat.h>

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include "rpmirror/util/error.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror::fs {

// The names of a mirror's own metadata directories: the live `repodata/` and the staging
// directories beside it (publish.hpp's MetadataStage). They never hold packages: no walk for
// packages descends into them, and no package may be planned inside them.
inline constexpr std::string_view kLiveMetadataDirName = "repodata";
inline constexpr std::string_view kStagingDirPrefix = ".repodata.staging-";

// True iff `name` (one path component) is the live metadata directory or a staging directory.
inline bool is_metadata_dir_name(std::string_view name) {
    return name == kLiveMetadataDirName || name.starts_with(kStagingDirPrefix);
}

// The infixes of the names a snapshot is built under before it is renamed into place, and
// removed under after it was renamed away: `<snapshots>/<repo id>/.<NAME>.creating-XXXXXX`,
// `.<NAME>.removing-XXXXXX` (store/disk_objects.cpp's trees: a snapshot's on disk).
inline constexpr std::string_view kSnapshotStagingInfix = ".creating-";
inline constexpr std::string_view kSnapshotRemovingInfix = ".removing-";

// True iff `name` (one path component) is a snapshot being built or removed.
inline bool is_snapshot_staging_name(std::string_view name) {
    return name.starts_with('.') && (name.find(kSnapshotStagingInfix) != std::string_view::npos ||
                                     name.find(kSnapshotRemovingInfix) != std::string_view::npos);
}

// True iff `name` (one path component) is a download's temporary name: ".NAME.part"
// (download.hpp's part_file_name).
inline bool is_part_name(std::string_view name) {
    return name.size() > 6 && name.starts_with('.') && name.ends_with(".part");
}

// The name of rpmirror's own directory inside a destination (a bucket mirror's state and lease,
// a tree's record), and the prefix of its other own names (".rpmirror-prefetch", ...).
inline constexpr std::string_view kOwnDirName = ".rpmirror";

// True iff `key` (a '/'-separated path relative to a destination's root) is a name rpmirror
// itself owns wherever it appears, so that no file an upstream names may be written there: a
// component that is a metadata directory (repodata/, a staging directory), a snapshot being
// built or removed, rpmirror's own directory or one of its own names (".rpmirror",
// ".rpmirror-*"), or a download's temporary name (".NAME.part", download.hpp's
// part_file_name). One definition for every writer of upstream-named files.
inline bool is_reserved_key(std::string_view key) {
    while (!key.empty()) {
        const std::size_t slash = key.find('/');
        const std::string_view name = key.substr(0, slash);
        const bool last = slash == std::string_view::npos;
        if (is_metadata_dir_name(name) || is_snapshot_staging_name(name) || name == kOwnDirName ||
            name.starts_with(".rpmirror-") || (last && is_part_name(name))) {
            return true;
        }
        key = last ? std::string_view() : key.substr(slash + 1);
    }
    return false;
}

// Which subdirectories a walk may enter at all, whatever its DescendFilter says.
enum class NestedTrees {
    // Not another tree: a subdirectory that holds its own `repodata/repomd.xml` (another
    // repository, or a snapshot: rpmirror/snapshot/snapshot.hpp) or is a snapshot being built is
    // not
    // entered. A repository's own packages never sit in such a directory: upstream layouts put
    // them in plain subdirectories (Packages/a/, x86_64/os/Packages/, pool/), and a
    // repository's metadata is its top-level repodata/ only. So a walk for --delete (or
    // verify --extra) never lists, and never removes, what another tree holds.
    Skip,
    // Every subdirectory the filter allows: a search over trees that are not ours to change
    // (the deduplication's candidates, which are only read).
    Enter,
};

// Decides whether the directory `relative` (to the walk's root; its last component is the
// directory's name), whose lstat is `st`, is descended into.
using DescendFilter =
    std::function<bool(const std::filesystem::path& relative, const struct stat& st)>;

// Called for each regular `*.rpm` file: the directory open as `dir_fd` holds it as `name`, at
// `relative` to the root, with lstat `st`. Returns true to go on, false to end the walk early,
// or an error that ends the walk and is returned by walk_rpm_files.
using RpmVisitor =
    std::function<Result<bool>(int dir_fd, const std::string& name,
                               const std::filesystem::path& relative, const struct stat& st)>;

// Walks the directory open as `root` (ownership taken), shown as `shown_root` in errors: every
// regular `*.rpm` file of a directory is visited before its subdirectories are walked; entries
// that vanish meanwhile, or are replaced by symlinks, are skipped; with NestedTrees::Skip (the
// default), subdirectories that are another repository or a snapshot are not entered (the root
// itself is always walked). Returns Error{Io} naming the directory iff one cannot be read or
// opened for another reason, or the visitor's error.
// `wanted`, when given, replaces the `*.rpm` rule: the regular files whose name it accepts are
// visited (a download's temporary names, is_part_name).
Result<void> walk_rpm_files(UniqueFd root, const std::filesystem::path& shown_root,
                            const DescendFilter& descend, const RpmVisitor& visit,
                            NestedTrees nested = NestedTrees::Skip,
                            const std::function<bool(std::string_view)>& wanted = nullptr);

}  // namespace rpmirror::fs
