// --with-dependencies over a sync's repositories: their metadata fetched, the closure solved,
// each given its share (sync/closure.hpp).
#include <algorithm>
#include <cerrno>
#include <fstream>
#include <optional>
#include <span>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "index/index.hpp"
#include "index/updateinfo.hpp"
#include "metadata/metadata.hpp"
#include "resolve/plain_primary.hpp"
#include "sync/closure.hpp"

namespace rpmirror {

namespace {

std::vector<std::string> repo_ids(const std::vector<RepoConfig>& repos) {
    std::vector<std::string> ids;
    for (const RepoConfig& repo : repos) {
        ids.push_back(repo.id);
    }
    return ids;
}

// The file of the fetched repository at `root` holding its record `type`, or nullopt iff its
// repomd.xml lists none.
Result<std::optional<std::filesystem::path>> record_path(const std::filesystem::path& root,
                                                         std::string_view type) {
    auto record = fetched_record(root, type);
    if (!record) {
        return tl::unexpected(std::move(record.error()));
    }
    if (!*record) {
        return std::nullopt;
    }
    return root / (*record)->location_href;
}

// Adds the packages the advisories `request` selects list, from the updateinfo of the fetched
// repository at `root`, to request.advised_nevras. Returns whether it publishes advisories.
Result<bool> add_advised_nevras(const std::filesystem::path& root, ClosureRequest& request) {
    auto updateinfo = record_path(root, "updateinfo");
    if (!updateinfo) {
        return tl::unexpected(std::move(updateinfo.error()));
    }
    if (!*updateinfo) {
        return false;  // a repository of dependencies only
    }
    auto advisories = parse_updateinfo_file(**updateinfo, (*updateinfo)->filename().string());
    if (!advisories) {
        return tl::unexpected(std::move(advisories.error()));
    }
    for (const Advisory& advisory : *advisories) {
        if (advisory_selected(advisory, request.advisories, request.built_by)) {
            request.advised_nevras.insert(request.advised_nevras.end(), advisory.nevras.begin(),
                                          advisory.nevras.end());
        }
    }
    return true;
}

}  // namespace

Result<ClosureMetadata> assign_closure(Syncer& syncer, std::vector<RepoConfig>& repos,
                                       const ClosureRequest& given, std::stop_token stop,
                                       std::span<const RepoConfig> closure_only) {
    ClosureRequest request = given;
    std::vector<RemoteMetadata> fetched;
    std::vector<ClosureRepo> sources;
    bool advised = false;                // a repository publishes advisories
    std::vector<const RepoConfig*> all;  // the mirrored repositories, then the closure-only ones
    for (const RepoConfig& repo : repos) {
        all.push_back(&repo);
    }
    for (const RepoConfig& repo : closure_only) {
        if (std::none_of(repos.begin(), repos.end(),
                         [&repo](const RepoConfig& mirrored) { return mirrored.id == repo.id; })) {
            all.push_back(&repo);
        }
    }
    for (std::size_t at = 0; at < all.size(); ++at) {
        const RepoConfig& repo = *all[at];
        const bool mirrored = at < repos.size();
        auto metadata = RemoteMetadata::fetch(syncer, repo, stop);
        if (!metadata) {
            Error error = std::move(metadata.error());
            error.message = "--with-dependencies: the metadata of " + repo.id +
                            " cannot be fetched: " + error.message;
            return tl::unexpected(std::move(error));
        }
        // The sync verified and placed the records there (record_destination's checks).
        const std::filesystem::path plain = metadata->root() / "primary.xml";
        if (auto written = write_plain_primary(metadata->root(), plain); !written) {
            Error error = std::move(written.error());
            error.message = "--with-dependencies: " + error.message;
            return tl::unexpected(std::move(error));
        }
        if (request.advisories.active() && mirrored) {
            auto published = add_advised_nevras(metadata->root(), request);
            if (!published) {
                Error error = std::move(published.error());
                error.message = "--advisories: " + repo.id + ": " + error.message;
                return tl::unexpected(std::move(error));
            }
            advised = advised || *published;
        }
        auto modules = record_path(metadata->root(), "modules");
        if (!modules) {
            Error error = std::move(modules.error());
            error.message = "--with-dependencies: " + error.message;
            return tl::unexpected(std::move(error));
        }
        sources.push_back({repo.id, plain, repo.priority, repo.cost, modules->value_or("")});
        fetched.push_back(std::move(*metadata));
    }
    if (request.advisories.active() && !advised) {
        return make_error(ErrorCode::BadInput,
                          "no repository of the closure publishes advisories (no updateinfo "
                          "record in repomd.xml): --advisories cannot select from them",
                          fmt::format("{}", fmt::join(repo_ids(repos), ", ")));
    }
    auto closure = resolve_closure(sources, request, stop);
    if (!closure) {
        return tl::unexpected(std::move(closure.error()));
    }
    for (std::size_t index = 0; index < repos.size(); ++index) {
        const std::set<std::string>& share = closure->shares[repos[index].id];
        repos[index].closure = std::vector<std::string>(share.begin(), share.end());
        repos[index].record_sources.push_back(fetched[index].root() / "repodata");
    }
    for (std::size_t index = repos.size(); index < all.size(); ++index) {
        if (const std::size_t taken = closure->shares[all[index]->id].size(); taken > 0) {
            closure->left_out.push_back(
                fmt::format("{} package(s) the closure needs come from {}, which this run does "
                            "not mirror (closure-repos)",
                            taken, all[index]->id));
        }
    }
    return ClosureMetadata(std::move(fetched), std::move(closure->left_out));
}

}  // namespace rpmirror
