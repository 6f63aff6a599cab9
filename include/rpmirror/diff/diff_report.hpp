// What `rpmirror diff` finds between two revisions of a repository or of an installation tree:
// packages added, removed, upgraded, downgraded or changed by name.arch and EVR, advisories that
// came and went (RepoDiff), images and repositories of a tree (TreeDiff), and their lines and
// JSON.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "rpmirror/index/updateinfo.hpp"

namespace rpmirror {

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
