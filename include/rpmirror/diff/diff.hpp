// The diff stage: what changed between two revisions of a repository (two mirrors, a mirror and
// its upstream, later two snapshots), by name.arch and EVR, and which advisories came and went.
// Behind `rpmirror diff`.
//
//   <root>/repodata/repomd.xml -> primary.xml (checksum verified, parsed by the index stage) and
//   updateinfo.xml when listed (verified, streamed) -> RepoContents; two of them -> RepoDiff.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/index/index.hpp"
#include "rpmirror/index/updateinfo.hpp"
#include "rpmirror/s3/s3.hpp"
#include "rpmirror/util/error.hpp"

namespace rpmirror {

// What one repository revision lists.
struct RepoContents {
    std::string location;  // how messages and the diff name it (a path or a URL)
    PackageIndex packages;
    // The advisories of its updateinfo record; nullopt iff repomd.xml lists none.
    std::optional<std::vector<Advisory>> advisories;
};

// Reads the repository whose metadata is in `root`/repodata/: repomd.xml, then the primary
// record and (if listed) the updateinfo record, each verified against repomd.xml's size and
// checksum before it is parsed. `location` names the repository in the result and in errors
// ("" = `root`); files are named "<location>/repodata/...".
// Returns Error{NotFound} "no repository here (no repodata/repomd.xml)" naming `location` iff
// there is no repomd.xml; parse_repomd's errors; Error{BadInput} iff it lists no primary or an
// href leaves the root; verify_metadata_file's errors (Corrupt: a damaged primary.xml or
// updateinfo.xml, named); the parsers' errors. Thread-safe.
Result<RepoContents> read_repo_contents(const std::filesystem::path& root,
                                        std::string_view location = {});

// Reads the repository stored at `destination`: a directory (a mirror, a snapshot) or
// "s3://BUCKET/PREFIX" (a mirror, a snapshot or a published name in a bucket; `store`: its
// settings, each unset one from the environment and ~/.aws), through the one store opened for it,
// as read_repo_contents reads a directory: repomd.xml, the primary and the updateinfo record,
// read in place on disk or fetched from a bucket into a scratch directory removed before
// returning. `location` names it ("" = `destination`). Errors as read_repo_contents'
// (Error{NotFound} "no repository here (no repodata/repomd.xml)" naming the location), or the
// store's naming the file or object.
Result<RepoContents> read_stored_repository(
    std::string_view destination, std::string_view location = {},
    const std::optional<s3::S3Overrides>& store = std::nullopt);

// One package change, by name.arch.
struct PackageChange {
    std::string name;
    std::string arch;
    std::string old_evr;  // "[epoch:]version-release"; "" for an added package
    std::string new_evr;  // "" for a removed package
    // For a changed package (same EVR): "<type>:<hex>" of the old and the new file.
    std::string old_checksum;
    std::string new_checksum;
};

struct RepoDiff {
    std::string old_location;
    std::string new_location;
    // Per name.arch, the EVRs only one side lists are paired newest with newest: a pair is an
    // upgrade (the new side's EVR is higher) or a downgrade, the rest are added or removed.
    // An EVR both sides list with different package checksums is `changed`.
    // Each list is sorted by name, arch, then EVR (rpm order).
    std::vector<PackageChange> added;
    std::vector<PackageChange> removed;
    std::vector<PackageChange> upgraded;
    std::vector<PackageChange> downgraded;
    std::vector<PackageChange> changed;
    // Whether either side has an updateinfo record; without one, no advisory is compared.
    bool advisories_compared = false;
    // Advisories (by id) only the new side lists, and only the old side lists; sorted by id.
    std::vector<Advisory> advisories_added;
    std::vector<Advisory> advisories_removed;

    // Returns true iff nothing changed.
    bool empty() const;
};

// Compares two repository revisions (see RepoDiff). A package listed twice at the same EVR on one
// side counts once (the first entry's checksum). Never fails. Thread-safe.
RepoDiff diff_repositories(const RepoContents& old_side, const RepoContents& new_side);

// Returns the human form: one line per change, in the order added, removed, upgraded,
// downgraded, changed, advisories added, advisories removed:
//   "added      name.arch  evr", "upgraded   name.arch  old -> new",
//   "changed    name.arch  evr  (sha256:ab… -> sha256:cd…)", "advisory added    ID  (type)  title";
// nothing iff the diff is empty.
std::vector<std::string> format_diff_lines(const RepoDiff& diff);

// Returns the one-line summary, e.g. "3 added, 1 removed, 2 upgraded, 0 downgraded, 0 changed;
// advisories: 1 added, 0 removed" (the advisory part only when advisories were compared).
std::string format_diff_summary(const RepoDiff& diff);

// Returns the diff as JSON (a stable, versioned form; see the README), ending in a newline.
std::string format_diff_json(const RepoDiff& diff);

// One revision of an installation tree (`sync --treeinfo`): the files of its .treeinfo's
// [checksums] and each repository it names.
struct TreeContents {
    std::string location;
    std::map<std::string, std::string> images;         // path in the tree -> "<type>:<hex>"
    std::map<std::string, RepoContents> repositories;  // by path in the tree ("" = its root)
};

// Reads a tree from its .treeinfo `treeinfo` (named "<location>/.treeinfo" in errors): its
// [checksums], and each repository it names through `read_repository` (called with the
// repository's path in the tree, "" for the root, in .treeinfo's order). Returns Error{BadInput}
// naming the file and line iff .treeinfo does not parse, or the first error of
// `read_repository`.
using TreeRepositoryReader = std::function<Result<RepoContents>(const std::string& path)>;
Result<TreeContents> read_tree_contents(std::string_view treeinfo, std::string_view location,
                                        const TreeRepositoryReader& read_repository);

// A revision as a mirror stores it: an installation tree (`sync --treeinfo`: a .treeinfo at its
// root) or a repository.
struct StoredRevision {
    std::optional<TreeContents> tree;        // iff it holds a .treeinfo
    std::optional<RepoContents> repository;  // iff it holds none
};

// Reads the revision stored at `destination` (as read_stored_repository: a directory or a bucket
// prefix, through one store): its .treeinfo and each repository it names (read below it, named
// "<location>/<path>") if it holds one, else the repository. Errors as read_tree_contents' and
// read_stored_repository's.
Result<StoredRevision> read_stored_revision(
    std::string_view destination, std::string_view location = {},
    const std::optional<s3::S3Overrides>& store = std::nullopt);

// An image of a tree that differs between two revisions ("" for the side that lacks it).
struct ImageChange {
    std::string path;
    std::string old_checksum;  // "<type>:<hex>"
    std::string new_checksum;
};

struct TreeDiff {
    std::string old_location;
    std::string new_location;
    // Images by path, each list sorted by path.
    std::vector<ImageChange> images_added;
    std::vector<ImageChange> images_removed;
    std::vector<ImageChange> images_changed;  // the same path with another checksum
    // Repositories (paths in the tree; "" the root) only one side names, sorted.
    std::vector<std::string> repositories_added;
    std::vector<std::string> repositories_removed;
    // The repositories both sides name, by path, compared as diff_repositories does.
    std::vector<std::pair<std::string, RepoDiff>> repositories;

    // Returns true iff nothing changed.
    bool empty() const;
};

// Compares two revisions of a tree (see TreeDiff). Never fails. Thread-safe.
TreeDiff diff_trees(const TreeContents& old_side, const TreeContents& new_side);

// Returns the human form: each repository's lines (format_diff_lines) prefixed "<path>: " ("/: "
// for the root), then "image added      PATH", "image removed    PATH",
// "image changed    PATH  (sha256:ab… -> sha256:cd…)", "repository added    PATH",
// "repository removed  PATH".
std::vector<std::string> format_tree_diff_lines(const TreeDiff& diff);

// Returns the summary lines: one per repository both sides name ("<path>: " then
// format_diff_summary), then "images: 1 added, 0 removed, 2 changed; repositories: 0 added,
// 0 removed".
std::vector<std::string> format_tree_diff_summary(const TreeDiff& diff);

// Returns the diff as JSON, ending in a newline: {"version": 1, "old", "new", "tree": {"images":
// {"added": [{"path", "checksum"}], "removed": [...], "changed": [{"path", "old_checksum",
// "new_checksum"}]}, "repositories": {"added": [PATH], "removed": [PATH]}}, "repositories":
// {PATH: the object format_diff_json gives for that repository}, "empty": bool}.
std::string format_tree_diff_json(const TreeDiff& diff);

}  // namespace rpmirror
