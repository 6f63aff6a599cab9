// Trees that may not overlap (see jobs/overlap.hpp): each destination resolved once
// (store::Destination::resolve), then compared pairwise.
#include "jobs/overlap.hpp"

#include <algorithm>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "store/destination.hpp"
#include "sync/sync.hpp"

namespace rpmirror {

namespace {

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
    std::vector<store::Destination::Resolved> resolved;
    resolved.reserve(trees.size());
    for (const OwnedTree& tree : trees) {
        resolved.push_back(store::Destination::of(tree.path.native()).resolve());
    }
    std::vector<TreeOverlap> overlaps;
    for (std::size_t first = 0; first < trees.size(); ++first) {
        for (std::size_t second = first + 1; second < trees.size(); ++second) {
            const bool first_inside = resolved[second].contains(resolved[first]);
            const bool second_inside = resolved[first].contains(resolved[second]);
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
            overlaps.push_back({inner, outer, equal,
                                fmt::format("{}{}{}{}; refused: {}", describe(trees[inner]),
                                            resolved[inner].relation(equal), describe(trees[outer]),
                                            resolved[inner].how(resolved[outer]),
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
