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
#include "rpmirror/config/config.hpp"
#include "rpmirror/run/diff_run.hpp"
#include "s3_options.hpp"

namespace rpmirror::cli {

namespace {

struct DiffArgs {
    std::vector<std::string> locations;  // OLD [NEW]: `old` and `new` as given
    std::string repo_id;                 // --repo: the mirror of ID against its upstream
    std::string download_path = ".";
    std::string snapshot_dir;  // --snapshot-dir: where snapshots/ and published/ are
    S3Args s3;                 // the store of s3:// sides
    bool json = false;
    bool quiet = false;
    RepoSourceArgs sources;
};

int diff_usage_error(const std::string& message) {
    fmt::print(stderr, "rpmirror: diff: {}\n", message);
    return kExitUsage;
}

// The two sides the command line names, or the exit code of a usage error.
std::variant<std::pair<DiffSide, DiffSide>, int> choose_sides(const DiffArgs& args) {
    if (args.repo_id.empty()) {
        if (args.locations.size() != 2) {
            return diff_usage_error(
                "give two repositories (OLD NEW: directories or URLs), or --repo ID to compare "
                "a mirror with its upstream");
        }
        return std::pair{DiffSide{args.locations[0], std::nullopt},
                         DiffSide{args.locations[1], std::nullopt}};
    }
    if (args.locations.size() > 1) {
        return diff_usage_error("with --repo, give at most one repository (the old side)");
    }
    std::vector<ConfigWarning> warnings;
    auto sides = upstream_diff_sides(
        args.sources, args.repo_id,
        args.locations.empty() ? std::nullopt : std::optional<std::string>(args.locations[0]),
        args.download_path, warnings);
    print_config_warnings(warnings, args.quiet ? ConfigNoise::Quiet : ConfigNoise::Normal);
    if (!sides) {
        return diff_usage_error(sides.error().to_string());
    }
    return std::move(*sides);
}

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

int run_diff(const DiffArgs& args) {
    auto chosen = choose_sides(args);
    if (const int* exit_code = std::get_if<int>(&chosen)) {
        return *exit_code;
    }
    auto& [old_side, new_side] = std::get<std::pair<DiffSide, DiffSide>>(chosen);
    const std::filesystem::path snapshot_base = args.snapshot_dir.empty()
                                                    ? std::filesystem::path(args.download_path)
                                                    : std::filesystem::path(args.snapshot_dir);
    auto diff = diff_revisions(DiffRequest{std::move(old_side), std::move(new_side), snapshot_base,
                                           s3_overrides(args.s3)});
    if (!diff) {
        fmt::print(stderr, "rpmirror: diff: {}\n", diff.error().to_string());
        return kExitFailure;
    }
    if (const TreeDiff* trees = std::get_if<TreeDiff>(&*diff)) {
        return print_diff(args, format_tree_diff_json(*trees), format_tree_diff_lines(*trees),
                          format_tree_diff_summary(*trees), trees->old_location,
                          trees->new_location);
    }
    const RepoDiff& repos = std::get<RepoDiff>(*diff);
    return print_diff(args, format_diff_json(repos), format_diff_lines(repos),
                      {format_diff_summary(repos)}, repos.old_location, repos.new_location);
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
    // Two positionals of one value each, so usage reads "[old] [new]".
    app->add_option_function<std::string>(
        "old",
        [args](const std::string& value) {
            args->locations.insert(args->locations.begin(), value);
        },
        "the old revision (a directory, URL, s3:// prefix, snapshot: or published: name)");
    app->add_option_function<std::string>(
        "new", [args](const std::string& value) { args->locations.push_back(value); },
        "the new revision (as OLD)");
    app->add_option("--repo,--repoid", args->repo_id,
                    "compare with this configured repository's current metadata (its upstream)");
    app->add_option("-p,--download-path", args->download_path,
                    "with --repo and no OLD: the mirror is <DIR>/<ID>; snapshots are under it "
                    "(default: .)");
    app->add_option("--snapshot-dir", args->snapshot_dir,
                    "where snapshots/ and published/ are, for snapshot:ID/NAME and "
                    "published:PUB/ID (default: the download path)");
    // A flag (stdout), unlike sync's and verify's --json FILE: `diff --json OLD NEW` is how it
    // is used, and an optional value would take OLD for the file.
    app->add_flag("--json", args->json, "print the diff as JSON on stdout");
    app->add_flag("-q,--quiet", args->quiet, "print the summary line only");
    add_repo_source_options(*app, args->sources);
    add_s3_options(*app, args->s3, /*transfer=*/false);
    return Command{app, [args] { return run_diff(*args); }};
}

}  // namespace rpmirror::cli
