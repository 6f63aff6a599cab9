// A sync of a repository's metadata alone into a temporary directory
// (sync/remote_metadata.hpp).
#include <utility>

#include "fs/scratch_dir.hpp"
#include "sync/remote_metadata.hpp"

namespace rpmirror {

RemoteMetadata::RemoteMetadata(std::unique_ptr<ScratchDir> scratch, std::filesystem::path root)
    : scratch_(std::move(scratch)), root_(std::move(root)) {}

RemoteMetadata::RemoteMetadata(RemoteMetadata&& other) noexcept = default;
RemoteMetadata& RemoteMetadata::operator=(RemoteMetadata&& other) noexcept = default;
RemoteMetadata::~RemoteMetadata() = default;

Result<RemoteMetadata> RemoteMetadata::fetch(Syncer& syncer, const RepoConfig& repo,
                                             std::stop_token stop) {
    auto scratch = ScratchDir::create("rpmirror-verify");
    if (!scratch) {
        return tl::unexpected(std::move(scratch.error()));
    }
    const std::filesystem::path pattern = scratch->path();
    RemoteMetadata metadata(std::make_unique<ScratchDir>(std::move(*scratch)), pattern / repo.id);

    // A sync of the metadata alone: every package excluded, repodata/ downloaded, verified
    // (metalink, sizes, checksums) and published into the temporary directory.
    RepoConfig metadata_only = repo;
    metadata_only.excludepkgs.push_back("*");
    SyncOptions options;
    options.download_path = pattern;
    options.state_dir = std::filesystem::path(pattern) / ".state";  // removed with the rest
    options.download_metadata = true;
    options.upstream_metadata = true;  // upstream's records as they are, never rewritten
    RepoSyncReport report = syncer.sync(metadata_only, options, nullptr, std::move(stop));
    if (report.error) {
        return tl::unexpected(std::move(*report.error));
    }
    if (!report.metadata_published) {
        return make_error(ErrorCode::Network, "the repository's metadata could not be fetched",
                          repo.id);
    }
    return metadata;
}

}  // namespace rpmirror
