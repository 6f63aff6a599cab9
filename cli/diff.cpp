// `rpmirror diff`: what changed between two repository revisions (the diff stage), given as
// directories or URLs, or a mirrored repository against its upstream's current metadata.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/core.h>

#include "command.hpp"
#include "repo_options.hpp"
#include "rpmirror/audit/audit.hpp"
#include "rpmirror/diff/diff.hpp"
#include "rpmirror/download/download.hpp"
#include "rpmirror/metadata/metadata.hpp"
#include "rpmirror/snapshot/snapshot.hpp"
#include "rpmirror/sync/sync.hpp"
#include "s3_options.hpp"

namespace rpmirror::cli {

namespace {

struct DiffArgs {
    std::vector<std::string> locations;  // OLD [NEW]
    std::string repo_id;                 // --repo: the mirror of ID against its upstream
    std::string download_path = ".";
    std::string snapshot_dir;  // --snapshot-dir: where snapshots/ and published/ are
    S3Args s3;                 // the store of s3:// sides
    bool json = false;
    bool quiet = false;
    RepoSourceArgs sources;
};

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
    if (s3::is_s3_url(spec.argument)) {
        return Side{spec.argument, spec.argument, std::nullopt};
    }
    if (auto snapshot = snapshot_side(spec.argument, spec.snapshot_base, spec.store)) {
        if (!*snapshot) {
            return tl::unexpected(std::move(snapshot->error()));
        }
        return Side{**snapshot, spec.argument, std::nullopt};
    }
    std::error_code error;
    if (!std::filesystem::is_directory(spec.argument, error)) {
        return make_error(ErrorCode::BadInput,
                          "not a directory holding repodata/, a snapshot:ID/NAME or "
                          "published:PUB/ID, nor an http(s)://, file:// or s3:// URL",
                          spec.argument);
    }
    return Side{spec.argument, spec.argument, std::nullopt};
}

int diff_usage_error(const std::string& message) {
    fmt::print(stderr, "rpmirror: diff: {}\n", message);
    return kExitUsage;
}

std::filesystem::path snapshot_base(const DiffArgs& args) {
    return args.snapshot_dir.empty() ? std::filesystem::path(args.download_path)
                                     : std::filesystem::path(args.snapshot_dir);
}

// The two sides the command line names, or the exit code of a usage error.
std::variant<std::pair<SideSpec, SideSpec>, int> choose_sides(const DiffArgs& args) {
    if (args.repo_id.empty()) {
        if (args.locations.size() != 2) {
            return diff_usage_error(
                "give two repositories (OLD NEW: directories or URLs), or --repo ID to compare "
                "a mirror with its upstream");
        }
        return std::pair{
            SideSpec{args.locations[0], std::nullopt, snapshot_base(args), s3_overrides(args.s3)},
            SideSpec{args.locations[1], std::nullopt, snapshot_base(args), s3_overrides(args.s3)}};
    }
    if (args.locations.size() > 1) {
        return diff_usage_error("with --repo, give at most one repository (the old side)");
    }
    auto loaded =
        load_repo_sources(args.sources, args.quiet ? ConfigNoise::Quiet : ConfigNoise::Normal);
    if (!loaded) {
        return diff_usage_error(loaded.error().to_string());
    }
    const std::vector<std::string> patterns{args.repo_id};
    auto selected = select_repos(std::move(*loaded), patterns);
    if (!selected) {
        return diff_usage_error(selected.error().to_string());
    }
    if (selected->size() != 1) {
        return diff_usage_error(fmt::format("--repo '{}' matches {} repositories; name one",
                                            args.repo_id, selected->size()));
    }
    RepoConfig& repo = selected->front();
    const std::string old_side =
        args.locations.empty() ? (std::filesystem::path(args.download_path) / repo.id).string()
                               : args.locations[0];
    return std::pair{SideSpec{old_side, std::nullopt, snapshot_base(args), s3_overrides(args.s3)},
                     SideSpec{"", std::move(repo), {}, {}}};
}

bool is_remote(const SideSpec& spec) {
    return spec.upstream || is_http_url(spec.argument) || spec.argument.starts_with("file://");
}

// A side resolved before anything is read: every side but a remote one (whose resolution is its
// fetch), resolved once so that it is read where it was resolved (a published name looked up
// once).
using EarlySide = std::optional<Result<Side>>;

// Prints a diff: `json` alone with --json; else `lines` (not with -q), then each of `summaries`
// after "OLD -> NEW: ".
int print_diff(const DiffArgs& args, const std::string& json, const std::vector<std::string>& lines,
               const std::vector<std::string>& summaries, const std::string& old_location,
               const std::string& new_location) {
    if (args.json) {
        fmt::print("{}", json);
        return kExitOk;
    }
    if (!args.quiet) {
        for (const std::string& line : lines) {
            fmt::print("{}\n", line);
        }
    }
    for (const std::string& summary : summaries) {
        fmt::print("{} -> {}: {}\n", old_location, new_location, summary);
    }
    return kExitOk;
}

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

int run_diff(const DiffArgs& args) {
    auto chosen = choose_sides(args);
    if (const int* exit_code = std::get_if<int>(&chosen)) {
        return *exit_code;
    }
    const auto& [old_spec, new_spec] = std::get<std::pair<SideSpec, SideSpec>>(chosen);
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
                fmt::print(stderr, "rpmirror: diff: {}\n", read.error().to_string());
                return kExitFailure;
            }
            trees[side_index].emplace(std::move(*read));
        }
        const TreeDiff diff = diff_trees(*trees[0], *trees[1]);
        return print_diff(args, format_tree_diff_json(diff), format_tree_diff_lines(diff),
                          format_tree_diff_summary(diff), diff.old_location, diff.new_location);
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
            fmt::print(stderr, "rpmirror: diff: {}\n", read.error().to_string());
            return kExitFailure;
        }
        contents[side_index].emplace(std::move(*read));
    }
    const RepoDiff diff = diff_repositories(*contents[0], *contents[1]);
    return print_diff(args, format_diff_json(diff), format_diff_lines(diff),
                      {format_diff_summary(diff)}, diff.old_location, diff.new_location);
}

}  // namespace

Command add_diff_command(CLI::App& parent) {
    auto args = std::make_shared<DiffArgs>();
    CLI::App* app = parent.add_subcommand(
        "diff",
        "Compare two revisions of a repository: packages added, removed, upgraded, downgraded\n"
        "and changed (same EVR, other checksum) by name.arch, advisories added and removed.\n"
        "  rpmirror diff OLD NEW          directories holding repodata/, http(s):// file:// "
        "URLs,\n"
        "                                 s3://BUCKET/PREFIX, snapshot:ID/NAME or "
        "published:PUB/ID\n"
        "                                 (under -p DIR or -p s3://BUCKET/PREFIX)\n"
        "  rpmirror diff --repo ID [OLD]  the mirror <DIR>/<ID> (or OLD) against ID's upstream\n"
        "An installation tree (a directory or a bucket prefix holding .treeinfo) is compared\n"
        "whole: each repository it names, and its images by checksum.");
    app->add_option("locations", args->locations, "OLD and NEW repositories (directories or URLs)")
        ->expected(0, 2);
    app->add_option("--repo,--repoid", args->repo_id,
                    "compare with this configured repository's current metadata (its upstream)");
    app->add_option("-p,--download-path", args->download_path,
                    "with --repo and no OLD: the mirror is <DIR>/<ID>; snapshots are under it "
                    "(default: .)");
    app->add_option("--snapshot-dir", args->snapshot_dir,
                    "where snapshots/ and published/ are, for snapshot:ID/NAME and "
                    "published:PUB/ID (default: the download path)");
    app->add_flag("--json", args->json, "print the diff as JSON on stdout");
    app->add_flag("-q,--quiet", args->quiet, "print the summary line only");
    add_repo_source_options(*app, args->sources);
    add_s3_options(*app, args->s3, /*transfer=*/false);
    return Command{app, [args] { return run_diff(*args); }};
}

}  // namespace rpmirror::cli
