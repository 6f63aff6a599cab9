// A sync of a repository's metadata alone into a temporary directory
// (rpmirror/sync/remote_metadata.hpp).
#include <stdlib.h>

#include <cerrno>
#include <cstdlib>
#include <utility>

#include "rpmirror/sync/remote_metadata.hpp"

namespace rpmirror {

RemoteMetadata::RemoteMetadata(std::filesystem::path temp_dir, std::filesystem::path root)
    : temp_dir_(std::move(temp_dir)), root_(std::move(root)) {}

RemoteMetadata::RemoteMetadata(RemoteMetadata&& other) noexcept
    : temp_dir_(std::exchange(other.temp_dir_, {})), root_(std::exchange(other.root_, {})) {}

RemoteMetadata& RemoteMetadata::operator=(RemoteMetadata&& other) noexcept {
    if (this != &other) {
        RemoteMetadata discarded(std::move(*this));
        temp_dir_ = std::exchange(other.temp_dir_, {});
        root_ = std::exchange(other.root_, {});
    }
    return *this;
}

RemoteMetadata::~RemoteMetadata() {
    if (!temp_dir_.empty()) {
        std::error_code ignored;
        std::filesystem::remove_all(temp_dir_, ignored);
    }
}

Result<RemoteMetadata> RemoteMetadata::fetch(Syncer& syncer, const RepoConfig& repo,
                                             std::stop_token stop) {
    const char* tmpdir = std::getenv("TMPDIR");
    std::string pattern = std::string(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp") +
                          "/rpmirror-verify-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
        return make_errno_error("cannot create a temporary directory", pattern, errno);
    }
    RemoteMetadata metadata(pattern, std::filesystem::path(pattern) / repo.id);

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
