// `rpmirror diff` as one library call (rpmirror/run/diff_run.hpp).
#include "rpmirror/run/diff_run.hpp"

#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "config/repo_files.hpp"
#include "diff/diff.hpp"
#include "download/download.hpp"
#include "metadata/metadata.hpp"
#include "rpmirror/snapshot/snapshot.hpp"
#include "snapshot/snapshot.hpp"
#include "store/destination.hpp"
#include "sync/remote_metadata.hpp"
#include "sync/sync.hpp"

namespace rpmirror {

namespace {

// One side of the diff, ready to read: a directory holding repodata/.
struct Side {
    std::filesystem::path root;
    std::string location;                 // how the output names it
    std::optional<RemoteMetadata> fetch;  // metadata fetched into a temporary directory
};

// What a side of the diff is: a location typed on the command line, or (`diff --repo ID`) the
// current metadata of a configured repository.
struct SideSpec {
    std::string argument;                 // a directory or a URL; "" iff `upstream` is set
    std::optional<RepoConfig> upstream;   // the repository's mirrors, as `sync` reaches them
    std::filesystem::path snapshot_base;  // BASE of BASE/snapshots and BASE/published
    s3::S3Overrides store;                // for s3:// sides
};

// `snapshot:ID/NAME` -> BASE/snapshots/ID/NAME; `published:PUB/ID` -> the snapshot
// BASE/published/PUB/ID points at. Returns nullopt iff `argument` is neither form.
std::optional<Result<std::filesystem::path>> snapshot_side(std::string_view argument,
                                                           const std::filesystem::path& base,
                                                           const s3::S3Overrides& store) {
    const bool published = argument.starts_with("published:");
    if (!published && !argument.starts_with("snapshot:")) {
        return std::nullopt;
    }
    const std::string_view rest = argument.substr(argument.find(':') + 1);
    const std::size_t slash = rest.find('/');
    if (slash == std::string_view::npos || slash == 0 || slash + 1 == rest.size() ||
        rest.find('/', slash + 1) != std::string_view::npos) {
        return make_error(ErrorCode::BadInput,
                          published ? "expected published:PUB/ID" : "expected snapshot:ID/NAME",
                          std::string(argument));
    }
    const std::string first(rest.substr(0, slash));
    const std::string second(rest.substr(slash + 1));
    const std::string& repo_id = published ? second : first;
    auto root = snapshot_root(repo_id, base / repo_id, base, store);
    if (!root) {
        return tl::unexpected(std::move(root.error()));
    }
    if (!published) {
        return snapshot_location(*root, second);
    }
    // The snapshot the name points at now: read from it, not through the name, so a publish
    // switching the name during the diff cannot mix two snapshots.
    auto target = published_snapshot(*root, first);
    if (!target) {
        return tl::unexpected(std::move(target.error()));
    }
    return snapshot_location(*root, *target);
}

// THE one place where an argument of `rpmirror diff` becomes a repository to read:
//  - `upstream` set: that repository's current metadata, fetched from its baseurl/mirrorlist/
//    metalink exactly as `sync --download-metadata` fetches it (verified), into a temporary
//    directory;
//  - "http://...", "https://...", "file://...": the repository at that URL, fetched the same way;
//  - anything else: a local directory holding repodata/repomd.xml (a mirror, a repository).
//  - `snapshot:ID/NAME`, `published:PUB/ID`: a snapshot of the mirror (rpmirror snapshot), under
//    the download path or --snapshot-dir (in a bucket too);
//  - "s3://BUCKET/PREFIX": a repository in a bucket (read by run_diff through the store).
// Returns the fetch's error (naming the URL) or Error{BadInput} naming the argument.
Result<Side> resolve_side(const SideSpec& spec, Syncer& syncer) {
    std::optional<RepoConfig> remote = spec.upstream;
    if (!remote && (is_http_url(spec.argument) || spec.argument.starts_with("file://"))) {
        auto config = repo_from_path("diff," + spec.argument);
        if (!config) {
            return tl::unexpected(std::move(config.error()));
        }
        remote = std::move(*config);
    }
    if (remote) {
        auto fetched = RemoteMetadata::fetch(syncer, *remote);
        if (!fetched) {
            Error error = std::move(fetched.error());
            if (!spec.upstream && error.subject == remote->id) {
                error.subject = spec.argument;  // the URL typed, not the made-up repository id
            }
            return tl::unexpected(std::move(error));
        }
        Side side;
        side.root = fetched->root();
        side.location = spec.upstream ? spec.upstream->id + " (upstream)" : spec.argument;
        side.fetch.emplace(std::move(*fetched));
        return side;
    }
    if (auto snapshot = snapshot_side(spec.argument, spec.snapshot_base, spec.store)) {
        if (!*snapshot) {
            return tl::unexpected(std::move(snapshot->error()));
        }
        return Side{**snapshot, spec.argument, std::nullopt};
    }
    // A prefix in a bucket is read as it is given (what it holds only its store tells).
    if (!store::Destination::of(spec.argument).may_exist()) {
        return make_error(ErrorCode::BadInput,
                          "not a directory holding repodata/, a snapshot:ID/NAME or "
                          "published:PUB/ID, nor an http(s)://, file:// or s3:// URL",
                          spec.argument);
    }
    return Side{spec.argument, spec.argument, std::nullopt};
}

bool is_remote(const SideSpec& spec) {
    return spec.upstream || is_http_url(spec.argument) || spec.argument.starts_with("file://");
}

// A side resolved before anything is read: every side but a remote one (whose resolution is its
// fetch), resolved once so that it is read where it was resolved (a published name looked up
// once).
using EarlySide = std::optional<Result<Side>>;

// What a side resolved early holds (a directory or a bucket prefix: a mirror, a snapshot, a
// published name), read once through its store.
using StoredSide = std::optional<Result<StoredRevision>>;

// One side of a tree's diff: one resolved early (`stored`: what it holds), or a tree at a URL
// (its .treeinfo fetched, then each repository's metadata as `sync --download-metadata` fetches
// it, kept in `fetched` while read).
Result<TreeContents> read_tree_side(const SideSpec& spec, EarlySide& early, StoredSide& stored,
                                    Syncer& syncer, std::vector<RemoteMetadata>& fetched) {
    if (early) {
        if (!*early) {
            return tl::unexpected(std::move(early->error()));
        }
        if (!*stored) {
            return tl::unexpected(std::move(stored->error()));
        }
        if (!(*stored)->tree) {
            return make_error(ErrorCode::NotFound, "no installation tree here (no .treeinfo)",
                              (*early)->location);
        }
        return std::move(*(*stored)->tree);
    }
    RepoConfig config;
    std::string location = spec.argument;
    if (spec.upstream) {
        config = *spec.upstream;
        location = config.id + " (upstream)";
        if (config.baseurls.empty()) {
            return make_error(ErrorCode::Unsupported,
                              "the mirror is an installation tree and this repository has no "
                              "baseurl to read the upstream tree from; give the tree's URL as the "
                              "new side",
                              config.id);
        }
    } else {
        auto made = repo_from_path("diff," + spec.argument);
        if (!made) {
            return tl::unexpected(std::move(made.error()));
        }
        config = std::move(*made);
    }
    const std::string base = config.baseurls.front();
    auto text = fetch_document(join_url(base, ".treeinfo"), DownloadOptions{});
    if (!text) {
        return tl::unexpected(std::move(text.error()));
    }
    return read_tree_contents(
        *text, location, [&](const std::string& path) -> Result<RepoContents> {
            RepoConfig part = config;
            part.mirrorlist.reset();
            part.metalink.reset();
            part.baseurls = {path.empty() ? base : join_url(base, path) + "/"};
            auto metadata = RemoteMetadata::fetch(syncer, part);
            if (!metadata) {
                return tl::unexpected(std::move(metadata.error()));
            }
            fetched.push_back(std::move(*metadata));
            return read_repo_contents(fetched.back().root(),
                                      path.empty() ? location : location + "/" + path);
        });
}

}  // namespace

Result<std::pair<DiffSide, DiffSide>> upstream_diff_sides(
    const RepoSourceRequest& sources, const std::string& repo_id,
    const std::optional<std::string>& old, const std::filesystem::path& download_path,
    std::vector<ConfigWarning>& warnings) {
    auto loaded = load_repo_sources(sources, warnings);
    if (!loaded) {
        return tl::unexpected(std::move(loaded.error()));
    }
    const std::vector<std::string> patterns{repo_id};
    auto selected = select_repos(std::move(*loaded), patterns);
    if (!selected) {
        return tl::unexpected(std::move(selected.error()));
    }
    if (selected->size() != 1) {
        return make_error(ErrorCode::BadInput,
                          fmt::format("--repo '{}' matches {} repositories; name one", repo_id,
                                      selected->size()));
    }
    RepoConfig& repo = selected->front();
    std::string old_side = old ? *old : (download_path / repo.id).string();
    return std::pair{DiffSide{std::move(old_side), std::nullopt}, DiffSide{"", std::move(repo)}};
}

Result<std::variant<RepoDiff, TreeDiff>> diff_revisions(const DiffRequest& request) {
    const SideSpec old_spec{request.old_side.argument, request.old_side.upstream,
                            request.snapshot_base, request.store};
    const SideSpec new_spec{request.new_side.argument, request.new_side.upstream,
                            request.snapshot_base, request.store};
    Syncer syncer;
    const SideSpec* specs[2] = {&old_spec, &new_spec};
    EarlySide early[2];
    for (int side_index = 0; side_index < 2; ++side_index) {
        if (!is_remote(*specs[side_index])) {
            early[side_index] = resolve_side(*specs[side_index], syncer);
        }
    }

    // What each side resolved early holds, read through its store: a tree iff it has a .treeinfo.
    StoredSide stored[2];
    bool any_tree = false;
    for (int side_index = 0; side_index < 2; ++side_index) {
        const EarlySide& side = early[side_index];
        if (side && *side) {
            stored[side_index] = read_stored_revision((*side)->root.native(), (*side)->location,
                                                      specs[side_index]->store);
            any_tree = any_tree || (*stored[side_index] && (*stored[side_index])->tree);
        }
    }

    // A mirror or snapshot of an installation tree (sync --treeinfo): the other side is one too;
    // each repository both name, their images, and the repositories only one names.
    if (any_tree) {
        std::vector<RemoteMetadata> fetched;
        std::optional<TreeContents> trees[2];
        for (int side_index = 0; side_index < 2; ++side_index) {
            auto read = read_tree_side(*specs[side_index], early[side_index], stored[side_index],
                                       syncer, fetched);
            if (!read) {
                return tl::unexpected(std::move(read.error()));
            }
            trees[side_index].emplace(std::move(*read));
        }
        return diff_trees(*trees[0], *trees[1]);
    }

    std::optional<RepoContents> contents[2];
    for (int side_index = 0; side_index < 2; ++side_index) {
        Result<RepoContents> read = RepoContents{};
        if (stored[side_index]) {
            read = *stored[side_index]
                       ? Result<RepoContents>(std::move(*(*stored[side_index])->repository))
                       : tl::unexpected(std::move(stored[side_index]->error()));
        } else {
            auto side = early[side_index] ? std::move(*early[side_index])
                                          : resolve_side(*specs[side_index], syncer);
            read = side ? read_repo_contents(side->root, side->location)
                        : tl::unexpected(std::move(side.error()));
        }
        if (!read) {
            return tl::unexpected(std::move(read.error()));
        }
        contents[side_index].emplace(std::move(*read));
    }
    return diff_repositories(*contents[0], *contents[1]);
}

}  // namespace rpmirror
