// `rpmirror diff` as one library call: two revisions of a repository (or of an installation
// tree), each side a directory, a bucket prefix, a snapshot or published name, a URL, or a
// configured repository's upstream, read and compared (what it finds:
// rpmirror/diff/diff_report.hpp).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "rpmirror/config/config.hpp"
#include "rpmirror/diff/diff_report.hpp"
#include "rpmirror/s3/s3.hpp"
#include "rpmirror/util/error.hpp"

namespace rpmirror {

// What a side of the diff is:
//  - `upstream` set: that repository's current metadata, fetched from its baseurl/mirrorlist/
//    metalink exactly as `sync --download-metadata` fetches it (verified), into a temporary
//    directory (an installation tree: its .treeinfo from its first baseurl);
//  - `argument` "http://...", "https://...", "file://...": the repository at that URL, fetched
//    the same way;
//  - `snapshot:ID/NAME`, `published:PUB/ID`: a snapshot of a mirror (rpmirror snapshot) under
//    DiffRequest::snapshot_base (a directory or an s3:// prefix), a published name read through
//    the snapshot it points at when the diff starts;
//  - "s3://BUCKET/PREFIX": a repository or tree in a bucket;
//  - anything else: a directory holding repodata/repomd.xml or a .treeinfo.
struct DiffSide {
    std::string argument;  // "" iff `upstream` is set
    std::optional<RepoConfig> upstream;
};

struct DiffRequest {
    DiffSide old_side;
    DiffSide new_side;
    std::filesystem::path snapshot_base;  // BASE of BASE/snapshots and BASE/published
    s3::S3Overrides store;                // the store of s3:// sides
};

// `rpmirror diff --repo ID [OLD]`: the repository of `sources` that `repo_id` selects (as --repo
// does; exactly one) as the new side, its upstream; the old side `old`, or without it its mirror
// <download_path>/<ID>. Appends the config stage's warnings to `warnings`. Returns loading's or
// selection's error ("--repo: no repository matches 'ID'"), or Error{BadInput} without a subject
// iff `repo_id` matches several repositories.
Result<std::pair<DiffSide, DiffSide>> upstream_diff_sides(
    const RepoSourceRequest& sources, const std::string& repo_id,
    const std::optional<std::string>& old, const std::filesystem::path& download_path,
    std::vector<ConfigWarning>& warnings);

// Reads both sides and compares them: a repository diff, or a tree diff iff a side read before
// any fetch (a directory, bucket prefix or snapshot) holds an installation tree (the other side
// is then read as one too). Returns the first side's error: a fetch's (naming the URL typed, or
// the repository), Error{BadInput} naming an argument that is none of the above, Error{NotFound}
// for a side without a repository (or without the tree the other side has), the store's.
Result<std::variant<RepoDiff, TreeDiff>> diff_revisions(const DiffRequest& request);

}  // namespace rpmirror
