// Trees that may not overlap (see rpmirror/jobs/overlap.hpp): local paths resolved to the device
// and inode of each directory on their way down, s3:// URLs to a bucket and prefix segments, then
// compared pairwise.
#include "rpmirror/jobs/overlap.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "rpmirror/s3/s3.hpp"
#include "rpmirror/sync/sync.hpp"

namespace rpmirror {

namespace {

using DirectoryId = std::pair<dev_t, ino_t>;

// A tree as it is compared.
struct ResolvedTree {
    bool is_s3 = false;
    bool comparable = true;  // false: an s3:// URL that does not parse
    std::string bucket;      // s3://
    // Local: the directories from "/" down to the deepest one of the path that exists.
    std::vector<DirectoryId> chain;
    // Local: the names of the path below chain.back() (not there yet); s3://: the prefix's
    // segments.
    std::vector<std::string> names;
    std::filesystem::path spelled;   // local: absolute and lexically normal, as given
    std::filesystem::path resolved;  // local: symlinks and ".." resolved as far as the path exists
};

std::filesystem::path without_trailing_slash(std::filesystem::path path) {
    while (!path.has_filename() && path.has_relative_path()) {
        path = path.parent_path();
    }
    return path;
}

ResolvedTree resolve_local(const std::filesystem::path& path) {
    ResolvedTree tree;
    std::error_code error;
    std::filesystem::path absolute = std::filesystem::absolute(path, error);
    if (error) {
        absolute = path;
    }
    tree.spelled = without_trailing_slash(absolute.lexically_normal());
    // The existing part through realpath (symlinks, ".." after a symlink), the rest lexically.
    const std::filesystem::path canonical = std::filesystem::weakly_canonical(absolute, error);
    tree.resolved = error ? tree.spelled : without_trailing_slash(canonical.lexically_normal());
    // Identified by device and inode (a bind mount of a directory is that directory), from "/"
    // down. A name that is not an existing directory (or cannot be examined) ends the chain; it
    // and the names after it are compared as names.
    std::filesystem::path walked = tree.resolved.root_path();
    struct stat st {};
    bool is_existing = ::stat(walked.c_str(), &st) == 0;
    if (is_existing) {
        tree.chain.emplace_back(st.st_dev, st.st_ino);
    }
    for (const std::filesystem::path& name : tree.resolved.relative_path()) {
        if (name.empty()) {
            continue;
        }
        if (is_existing) {
            walked /= name;
            is_existing = ::stat(walked.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
            if (is_existing) {
                tree.chain.emplace_back(st.st_dev, st.st_ino);
                continue;
            }
        }
        tree.names.push_back(name.string());
    }
    tree.comparable = !tree.chain.empty();
    return tree;
}

ResolvedTree resolve_s3(const std::string& url) {
    ResolvedTree tree;
    tree.is_s3 = true;
    const auto location = s3::S3Location::parse(url);  // its prefix: no "", "." or ".." segment
    if (!location) {
        tree.comparable = false;
        return tree;
    }
    tree.bucket = location->bucket;
    std::string_view prefix = location->prefix;
    while (!prefix.empty()) {
        const std::size_t slash = prefix.find('/');
        tree.names.emplace_back(prefix.substr(0, slash));
        prefix.remove_prefix(slash == std::string_view::npos ? prefix.size() : slash + 1);
    }
    return tree;
}

ResolvedTree resolve(const std::filesystem::path& path) {
    return s3::is_s3_url(path.native()) ? resolve_s3(path.native()) : resolve_local(path);
}

bool starts_with(const std::vector<std::string>& names, const std::vector<std::string>& prefix) {
    return names.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), names.begin());
}

// True iff `inner` is `outer` or lies beneath it.
bool contains(const ResolvedTree& outer, const ResolvedTree& inner) {
    if (!outer.comparable || !inner.comparable || outer.is_s3 != inner.is_s3) {
        return false;
    }
    if (outer.is_s3) {
        return outer.bucket == inner.bucket && starts_with(inner.names, outer.names);
    }
    if (outer.names.empty()) {
        // outer exists: inner is beneath it iff it is one of the directories inner passes.
        return std::find(inner.chain.begin(), inner.chain.end(), outer.chain.back()) !=
               inner.chain.end();
    }
    // outer does not exist yet: inner must go through the same missing names.
    return inner.chain.back() == outer.chain.back() && starts_with(inner.names, outer.names);
}

// True iff `inner` is `outer` or lies beneath it by their names alone.
bool lexically_contains(const std::filesystem::path& outer, const std::filesystem::path& inner) {
    return std::mismatch(outer.begin(), outer.end(), inner.begin(), inner.end()).first ==
           outer.end();
}

bool is_repository_side(TreeKind kind) {
    return kind == TreeKind::Repository || kind == TreeKind::Metadata;
}

// True iff the rules allow `a` and `b` to overlap (see find_tree_overlaps).
bool may_overlap(const OwnedTree& a, const OwnedTree& b, bool equal) {
    if (a.owner == b.owner && is_repository_side(a.kind) && is_repository_side(b.kind)) {
        return true;
    }
    return equal && a.kind == b.kind &&
           (a.kind == TreeKind::Snapshots || a.kind == TreeKind::Published);
}

std::string describe(const OwnedTree& tree) {
    return fmt::format("{} ({} of {}{}{})", tree.path.native(), tree_kind_name(tree.kind),
                       tree.owner, tree.given_by.empty() ? "" : ", ", tree.given_by);
}

// How the overlap shows when the spelling does not: the resolved paths, or the bind mount.
std::string how_resolved(const ResolvedTree& inner, const ResolvedTree& outer) {
    if (inner.is_s3 || lexically_contains(outer.spelled, inner.spelled)) {
        return "";
    }
    if (lexically_contains(outer.resolved, inner.resolved)) {
        return fmt::format(" (they resolve to {} and {})", inner.resolved.native(),
                           outer.resolved.native());
    }
    return fmt::format(" ({} and {} are one directory by device and inode: a bind mount)",
                       inner.resolved.native(), outer.resolved.native());
}

// Why a tree may not be inside (or be) `outer`.
std::string_view why_refused(const OwnedTree& outer, bool equal) {
    if (equal) {
        return "one tree cannot have two owners";
    }
    switch (outer.kind) {
        case TreeKind::Repository:
            return "the repository's --delete removes every package beneath its directory that "
                   "its own metadata does not list";
        case TreeKind::Metadata:
            return "a metadata directory is rewritten by its repository's every sync";
        case TreeKind::Snapshots:
            return "removing a snapshot (keep-snapshots) removes its whole directory";
        case TreeKind::Published:
            return "published names are switched by replacing their entries";
    }
    return "";
}

}  // namespace

std::string_view tree_kind_name(TreeKind kind) {
    switch (kind) {
        case TreeKind::Repository:
            return "repository directory";
        case TreeKind::Metadata:
            return "metadata directory";
        case TreeKind::Snapshots:
            return "snapshot tree";
        case TreeKind::Published:
            return "published tree";
    }
    return "tree";
}

std::vector<TreeOverlap> find_tree_overlaps(std::span<const OwnedTree> trees) {
    std::vector<ResolvedTree> resolved;
    resolved.reserve(trees.size());
    for (const OwnedTree& tree : trees) {
        resolved.push_back(resolve(tree.path));
    }
    std::vector<TreeOverlap> overlaps;
    for (std::size_t first = 0; first < trees.size(); ++first) {
        for (std::size_t second = first + 1; second < trees.size(); ++second) {
            const bool first_inside = contains(resolved[second], resolved[first]);
            const bool second_inside = contains(resolved[first], resolved[second]);
            if (!first_inside && !second_inside) {
                continue;
            }
            const bool equal = first_inside && second_inside;
            if (may_overlap(trees[first], trees[second], equal)) {
                continue;
            }
            // The one inside is named first; of two equal ones, the later one.
            const std::size_t inner = first_inside && !equal ? first : second;
            const std::size_t outer = inner == first ? second : first;
            const bool is_s3 = resolved[inner].is_s3;
            const std::string_view relation =
                equal ? (is_s3 ? " is the same prefix as " : " is the same directory as ")
                      : (is_s3 ? " is under " : " is inside ");
            overlaps.push_back(
                {inner, outer, equal,
                 fmt::format("{}{}{}{}; refused: {}", describe(trees[inner]), relation,
                             describe(trees[outer]), how_resolved(resolved[inner], resolved[outer]),
                             why_refused(trees[outer], equal))});
        }
    }
    return overlaps;
}

std::vector<OwnedTree> sync_command_trees(
    std::span<const std::string> repo_ids, const SyncOptions& options, bool snapshots,
    const std::optional<std::filesystem::path>& snapshot_dir) {
    // (s3:// URLs take `/ NAME` as paths do: "s3://b/m" / "x" is "s3://b/m/x".)
    const std::string download_path = options.download_path.native();
    std::vector<OwnedTree> trees;
    for (const std::string& id : repo_ids) {
        const std::string owner = fmt::format("repository '{}'", id);
        trees.push_back(
            {TreeKind::Repository, repo_directory(options, id), owner,
             fmt::format("-p {}{}", download_path, options.norepopath ? " --norepopath" : "")});
        if (options.metadata_path) {
            trees.push_back({TreeKind::Metadata, metadata_directory(options, id), owner,
                             fmt::format("--metadata-path {}", options.metadata_path->native())});
        }
    }
    if (snapshots) {
        const std::filesystem::path base = snapshot_dir.value_or(options.download_path);
        const std::string given_by =
            snapshot_dir ? fmt::format("--snapshot-dir {}", snapshot_dir->native())
                         : fmt::format("no --snapshot-dir: under -p {}", download_path);
        trees.push_back({TreeKind::Snapshots, base / "snapshots", "--snapshot", given_by});
        trees.push_back({TreeKind::Published, base / "published", "--snapshot", given_by});
    }
    return trees;
}

Result<void> check_tree_overlaps(std::span<const OwnedTree> trees) {
    const std::vector<TreeOverlap> overlaps = find_tree_overlaps(trees);
    if (overlaps.empty()) {
        return {};
    }
    std::string message = overlaps.front().message;
    if (overlaps.size() > 1) {
        message += fmt::format(" (and {} more overlap{})", overlaps.size() - 1,
                               overlaps.size() > 2 ? "s" : "");
    }
    return make_error(ErrorCode::BadInput, std::move(message));
}

}  // namespace rpmirror
