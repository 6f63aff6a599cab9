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

#include "index/index.hpp"
#include "rpmirror/diff/diff_report.hpp"
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

// Compares two repository revisions (see RepoDiff). A package listed twice at the same EVR on one
// side counts once (the first entry's checksum). Never fails. Thread-safe.
RepoDiff diff_repositories(const RepoContents& old_side, const RepoContents& new_side);

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

// Compares two revisions of a tree (see TreeDiff). Never fails. Thread-safe.
TreeDiff diff_trees(const TreeContents& old_side, const TreeContents& new_side);

}  // namespace rpmirror
