// A snapshot after a repository synced, then keep-N: what `sync --snapshot` and a job's
// `snapshot =` do (rpmirror/snapshot/snapshot.hpp).
#include "rpmirror/snapshot/snapshot.hpp"
#include "store/destination.hpp"

#include "sync/sync.hpp"

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
    const store::Destination mirror = store::Destination::of(report.repo_dir.native());
    const auto above = mirror.parent();
    if (!policy.base && !above) {
        return make_error(ErrorCode::BadInput,
                          "nothing is above the mirror to keep its snapshots beside it (a "
                          "bucket's top or '/'): give --snapshot-dir",
                          mirror.path().string());
    }
    auto root = snapshot_root(report.repo_id, mirror.path(),
                              policy.base ? *policy.base : above->path(), policy.s3);
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
