// A snapshot after a repository synced, then keep-N: what `sync --snapshot` and a job's
// `snapshot =` do (rpmirror/snapshot/snapshot.hpp).
#include "rpmirror/snapshot/snapshot.hpp"
#include "rpmirror/store/destination.hpp"

#include "rpmirror/sync/sync.hpp"

namespace rpmirror {

Result<SnapshotAndPrune> create_and_prune_snapshot(const SnapshotRoot& root,
                                                   const SnapshotCreateOptions& options,
                                                   std::optional<std::size_t> keep) {
    auto created = create_snapshot(root, options);
    if (!created) {
        return tl::unexpected(std::move(created.error()));
    }
    SnapshotAndPrune done{std::move(*created), {}};
    if (keep && !done.created.unchanged) {
        auto pruned = prune_snapshots(root, *keep, options.lock);
        if (!pruned) {
            return tl::unexpected(std::move(pruned.error()));
        }
        done.pruned = std::move(*pruned);
    }
    return done;
}

Result<SnapshotAndPrune> snapshot_after_sync(const RepoSyncReport& report,
                                             const SnapshotAfterSync& policy) {
    const std::filesystem::path repo_dir = store::normal_destination(report.repo_dir);
    auto root = snapshot_root(report.repo_id, repo_dir,
                              policy.base ? *policy.base : repo_dir.parent_path(), policy.s3);
    if (!root) {
        return tl::unexpected(std::move(root.error()));
    }
    SnapshotCreateOptions options;
    options.name = policy.name;
    options.lock = policy.lock;
    options.use_checksum_cache = policy.use_checksum_cache;
    options.only_if_changed = policy.only_if_changed;
    return create_and_prune_snapshot(*root, options, policy.keep);
}

}  // namespace rpmirror
