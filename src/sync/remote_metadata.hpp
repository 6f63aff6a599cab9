// A repository's current metadata fetched by a sync that selects no package: what `verify
// --remote` and `diff` audit against, and what a dependency closure is solved over.
#pragma once

#include <filesystem>
#include <memory>
#include <stop_token>

#include "rpmirror/config/config.hpp"
#include "rpmirror/util/error.hpp"
#include "sync/sync.hpp"

namespace rpmirror {

class ScratchDir;

// The repository's current metadata, fetched into a private temporary directory that is removed
// with this object. Move-only.
class RemoteMetadata {
  public:
    // Fetches every record of `repo`'s current repomd.xml (mirrors, metalink checks, checksums and
    // retries exactly as `sync --download-metadata` does them, by `syncer`), downloading no
    // package. Returns the sync's error (naming the repository and what failed) iff it fails.
    static Result<RemoteMetadata> fetch(Syncer& syncer, const RepoConfig& repo,
                                        std::stop_token stop = {});

    RemoteMetadata(RemoteMetadata&& other) noexcept;
    RemoteMetadata& operator=(RemoteMetadata&& other) noexcept;
    RemoteMetadata(const RemoteMetadata&) = delete;
    RemoteMetadata& operator=(const RemoteMetadata&) = delete;
    ~RemoteMetadata();

    // The directory holding the fetched `repodata/` (an AuditOptions::reference_root).
    const std::filesystem::path& root() const { return root_; }

  private:
    RemoteMetadata(std::unique_ptr<ScratchDir> scratch, std::filesystem::path root);
    std::unique_ptr<ScratchDir> scratch_;  // removed with the object
    std::filesystem::path root_;
};

}  // namespace rpmirror
