// A snapshot after a repository synced, then keep-N: what `sync --snapshot` and a job's
// `snapshot =` do (rpmirror/snapshot/snapshot.hpp).
#include "rpmirror/snapshot/snapshot.hpp"
#include "snapshot/snapshot.hpp"
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

Result<std::optional<SnapshotRoot>> snapshot_root_of_mirror(
    std::string_view repo_id, const std::filesystem::path& repo_dir,
    const std::optional<std::filesystem::path>& base, const std::optional<s3::S3Overrides>& s3) {
    const store::Destination mirror = store::Destination::of(repo_dir.native());
    const auto above = mirror.parent();
    if (!base && !above) {
        return std::optional<SnapshotRoot>();
    }
    auto root = snapshot_root(repo_id, mirror.path(), base ? *base : above->path(), s3);
    if (!root) {
        return tl::unexpected(std::move(root.error()));
    }
    return std::optional<SnapshotRoot>(std::move(*root));
}

Result<SnapshotAndPrune> snapshot_after_sync(const RepoSyncReport& report,
                                             const SnapshotAfterSync& policy) {
    auto root = snapshot_root_of_mirror(report.repo_id, report.repo_dir, policy.base, policy.s3);
    if (!root) {
        return tl::unexpected(std::move(root.error()));
    }
    if (!*root) {
        return make_error(ErrorCode::BadInput,
                          "nothing is above the mirror to keep its snapshots beside it (a "
                          "bucket's top or '/'): give --snapshot-dir",
                          store::Destination::of(report.repo_dir.native()).path().string());
    }
    SnapshotCreateOptions options;
    options.name = policy.name;
    options.lock = policy.lock;
    options.use_checksum_cache = policy.use_checksum_cache;
    options.only_if_changed = policy.only_if_changed;
    return create_and_prune_snapshot(**root, options, policy.keep);
}

}  // namespace rpmirror
