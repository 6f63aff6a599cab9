// --with-dependencies over a sync's repositories: their metadata fetched (as verify --remote
// does), the closure solved (resolve/resolve.hpp), each repository given its share.
#pragma once

#include <span>
#include <stop_token>
#include <string>
#include <vector>

#include "resolve/resolve.hpp"
#include "rpmirror/config/config.hpp"
#include "rpmirror/util/error.hpp"
#include "sync/remote_metadata.hpp"
#include "sync/sync.hpp"

namespace rpmirror {

// The metadata assign_closure fetched, in temporary directories removed when it is destroyed:
// kept alive while the repositories sync, which copy their records from it.
class ClosureMetadata {
  public:
    ClosureMetadata(std::vector<RemoteMetadata> fetched, std::vector<std::string> left_out)
        : fetched_(std::move(fetched)), left_out_(std::move(left_out)) {}

    // Closure::left_out: what to warn about.
    const std::vector<std::string>& left_out() const { return left_out_; }

  private:
    std::vector<RemoteMetadata> fetched_;
    std::vector<std::string> left_out_;
};

// --with-dependencies: fetches the metadata of every repository of `repos` (as `verify --remote`
// does: mirrors, metalink, checksums, into temporary directories), solves the closure of
// `request` over all of them in their order, and gives each its share (RepoConfig::closure; an
// empty one for a repository that contributes nothing) and the fetched records as
// RepoConfig::record_sources (the sync copies them instead of downloading them again). Returns
// what was fetched, to keep until the syncs end; or the fetch's error naming the repository, or
// resolve_closure's, and nothing is changed then. `closure_only` (closure-repos) are solved over
// too, after `repos`, but not mirrored: what the closure takes from them is only counted, in
// ClosureMetadata::left_out.
Result<ClosureMetadata> assign_closure(Syncer& syncer, std::vector<RepoConfig>& repos,
                                       const ClosureRequest& request, std::stop_token stop = {},
                                       std::span<const RepoConfig> closure_only = {});

}  // namespace rpmirror
