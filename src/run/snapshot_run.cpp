// Where a repository's snapshots are (rpmirror/run/snapshot_run.hpp).
#include "rpmirror/run/snapshot_run.hpp"

#include <filesystem>
#include <span>
#include <utility>
#include <vector>

#include "jobs/overlap.hpp"
#include "snapshot/snapshot.hpp"
#include "sync/sync.hpp"

namespace rpmirror {

Result<SnapshotRoot> open_snapshot_place(const SnapshotPlace& place, bool writes) {
    if (place.norepopath && place.snapshot_dir.empty()) {
        return make_error(ErrorCode::BadInput,
                          "with --norepopath, give --snapshot-dir (outside the mirror)",
                          place.download_path);
    }
    const std::filesystem::path download_path(place.download_path);
    SyncOptions layout;
    layout.download_path = download_path;
    layout.norepopath = place.norepopath;
    if (writes) {
        std::vector<OwnedTree> trees = sync_command_trees(
            std::span(&place.repo_id, 1), layout, /*snapshots=*/true,
            place.snapshot_dir.empty() ? std::nullopt
                                       : std::optional<std::filesystem::path>(place.snapshot_dir));
        for (OwnedTree& tree : trees) {
            if (tree.kind == TreeKind::Snapshots || tree.kind == TreeKind::Published) {
                tree.owner = "rpmirror snapshot";
            }
        }
        if (auto checked = check_tree_overlaps(trees); !checked) {
            return tl::unexpected(std::move(checked.error()));
        }
    }
    return snapshot_root(
        place.repo_id, repo_directory(layout, place.repo_id),
        place.snapshot_dir.empty() ? download_path : std::filesystem::path(place.snapshot_dir),
        place.s3);
}

}  // namespace rpmirror
