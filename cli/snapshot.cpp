// `rpmirror snapshot create|list|publish|remove`: dated, immutable copies of a mirrored
// repository and published names switched atomically (the snapshot library,
// rpmirror/snapshot/snapshot.hpp).
#include <chrono>
#include <string>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "command.hpp"
#include "output.hpp"
#include "repo_options.hpp"
#include "rpmirror/run/snapshot_run.hpp"
#include "rpmirror/snapshot/snapshot.hpp"
#include "s3_options.hpp"
#include "snapshot.hpp"

namespace rpmirror::cli {

namespace {

// Options every snapshot subcommand takes: which repository, where its mirror and snapshots are.
struct SnapshotWhere {
    std::string repo_id;
    std::string download_path = ".";
    bool norepopath = false;
    std::string snapshot_dir;
    RunStateArgs state;
    S3Args s3;  // an s3:// download path: the store's settings
};

struct SnapshotArgs {
    SnapshotWhere where;
    std::string name;          // create --name; the snapshot of publish/remove
    std::string published_as;  // publish --as
    bool copy = false;
    bool no_cache = false;
    std::size_t keep = 0;
    CLI::Option* keep_option = nullptr;
    bool json = false;
};

void add_where_options(CLI::App& app, SnapshotWhere& where) {
    app.add_option("--repo,--repoid", where.repo_id, "the repository id")->required();
    app.add_option("-p,--download-path", where.download_path,
                   "where the repository is mirrored, as for sync (default: .)");
    app.add_flag("--norepopath", where.norepopath,
                 "the mirror is the download path itself (needs --snapshot-dir)");
    app.add_option("--snapshot-dir", where.snapshot_dir,
                   "where snapshots/ and published/ are (default: the download path; on the "
                   "mirror's filesystem for hard links, in its store for an s3:// mirror)");
    add_run_state_options(app, where.state);
    add_s3_options(app, where.s3, /*transfer=*/false);
}

// The layout of `where`'s snapshots (open_snapshot_place); `writes`: the command adds snapshots
// or published names.
Result<SnapshotRoot> root_of(const SnapshotWhere& where, bool writes = false) {
    return open_snapshot_place({where.repo_id, where.download_path, where.norepopath,
                                where.snapshot_dir, s3_overrides(where.s3)},
                               writes);
}

SnapshotLock lock_of(const SnapshotWhere& where) {
    SnapshotLock lock;
    apply_run_state_options(where.state, lock.state_dir, lock.wait);
    if (!lock.state_dir.empty()) {
        lock.state_dir = std::filesystem::absolute(lock.state_dir);
    }
    return lock;
}

std::string format_info(const SnapshotInfo& info) {
    std::string published;
    for (const std::string& name : info.published_as) {
        published += (published.empty() ? " published as " : ", ") + name;
    }
    return fmt::format("{}: {} packages, {:.1f} MB ({:.1f} MB only here){}", info.name,
                       info.packages, static_cast<double>(info.bytes) / 1e6,
                       static_cast<double>(info.unique_bytes) / 1e6, published);
}

std::string format_list_json(const std::string& repo_id, const std::vector<SnapshotInfo>& list) {
    nlohmann::json snapshots = nlohmann::json::array();
    for (const SnapshotInfo& info : list) {
        const auto created = std::chrono::system_clock::time_point(
            std::chrono::duration_cast<std::chrono::system_clock::duration>(
                std::chrono::nanoseconds(info.created_ns)));
        snapshots.push_back({{"name", info.name},
                             {"path", info.dir.string()},
                             {"created", default_snapshot_name(created)},
                             {"packages", info.packages},
                             {"files", info.files},
                             {"bytes", info.bytes},
                             {"unique_bytes", info.unique_bytes},
                             {"published_as", info.published_as}});
    }
    return nlohmann::json{{"repository", repo_id}, {"snapshots", std::move(snapshots)}}.dump(2) +
           "\n";
}

// Prints what create_and_prune_snapshot or snapshot_after_sync did to `human` (unless `quiet`),
// or its error to stderr. Returns false iff it failed.
bool print_done(const Result<SnapshotAndPrune>& done, std::string_view repo_id, std::FILE* human,
                bool quiet) {
    if (!done) {
        print_error(done.error());
        return false;
    }
    if (!quiet) {
        for (const std::string& line : format_snapshot_done(repo_id, *done)) {
            fmt::print(human, "{}\n", line);
        }
    }
    return true;
}

int run_create(const SnapshotArgs& args) {
    auto root = root_of(args.where, /*writes=*/true);
    if (!root) {
        print_error(root.error());
        return kExitUsage;
    }
    SnapshotCreateOptions options;
    if (!args.name.empty()) {
        options.name = args.name;
    }
    options.copy = args.copy;
    options.use_checksum_cache = !args.no_cache;
    options.lock = lock_of(args.where);
    const bool has_keep = args.keep_option != nullptr && args.keep_option->count() > 0;
    return print_done(
               create_and_prune_snapshot(
                   *root, options, has_keep ? std::optional<std::size_t>(args.keep) : std::nullopt),
               root->repo_id, stdout, false)
               ? kExitOk
               : kExitFailure;
}

int run_list(const SnapshotArgs& args) {
    auto root = root_of(args.where);
    if (!root) {
        print_error(root.error());
        return kExitUsage;
    }
    auto list = list_snapshots(*root);
    if (!list) {
        print_error(list.error());
        return kExitFailure;
    }
    if (args.json) {
        fmt::print("{}", format_list_json(root->repo_id, *list));
        return kExitOk;
    }
    for (const SnapshotInfo& info : *list) {
        fmt::print("{}\n", format_info(info));
    }
    return kExitOk;
}

int run_publish(const SnapshotArgs& args) {
    auto root = root_of(args.where, /*writes=*/true);
    if (!root) {
        print_error(root.error());
        return kExitUsage;
    }
    if (auto published = publish_snapshot(*root, args.name, args.published_as, lock_of(args.where));
        !published) {
        print_error(published.error());
        return kExitFailure;
    }
    fmt::print("{}: published {} as {} ({})\n", root->repo_id, args.name, args.published_as,
               (root->published_dir / args.published_as / root->repo_id).string());
    return kExitOk;
}

int run_remove(const SnapshotArgs& args) {
    auto root = root_of(args.where);
    if (!root) {
        print_error(root.error());
        return kExitUsage;
    }
    auto removed = remove_snapshot(*root, args.name, lock_of(args.where));
    if (!removed) {
        print_error(removed.error());
        return kExitFailure;
    }
    fmt::print("{}: removed snapshot {} (freed {:.1f} MB)\n", root->repo_id, removed->name,
               static_cast<double>(removed->unique_bytes) / 1e6);
    return kExitOk;
}

}  // namespace

void add_sync_snapshot_options(CLI::App& app, SyncSnapshotArgs& args) {
    args.snapshot_option =
        app.add_option("--snapshot", args.name,
                       "[=NAME] after each repository synced completely, snapshot it (default "
                       "NAME: UTC YYYYMMDDTHHMMSSZ; needs --download-metadata)")
            ->expected(0, 1);
    args.keep_option = app.add_option("--keep-snapshots", args.keep,
                                      "with --snapshot: then keep only the newest N snapshots "
                                      "(and every published one)")
                           ->check(CLI::Range(std::size_t{1}, std::size_t{1000000}))
                           ->needs(args.snapshot_option);
    app.add_option("--snapshot-dir", args.snapshot_dir,
                   "with --snapshot: where snapshots/ and published/ are (default: the download "
                   "path)")
        ->needs(args.snapshot_option);
}

std::vector<std::string> format_snapshot_done(std::string_view repo_id,
                                              const SnapshotAndPrune& done) {
    if (done.created.unchanged) {
        return {fmt::format("{}: snapshot: none taken, unchanged since snapshot {}", repo_id,
                            done.created.name)};
    }
    std::vector<std::string> lines{
        fmt::format("{}: snapshot {}", repo_id, format_info(done.created))};
    for (const SnapshotInfo& gone : done.pruned) {
        lines.push_back(fmt::format("{}: removed snapshot {} (freed {:.1f} MB)", repo_id, gone.name,
                                    static_cast<double>(gone.unique_bytes) / 1e6));
    }
    return lines;
}

void add_sync_snapshot(const SyncSnapshotArgs& args, JobConfig& job) {
    if (args.snapshot_option == nullptr || args.snapshot_option->count() == 0) {
        return;
    }
    // (CLI11 stores "" for --snapshot without NAME: a dated name, the run's start.)
    job.snapshot = args.name.empty() ? std::string() : args.name.front();
    const bool has_keep = args.keep_option != nullptr && args.keep_option->count() > 0;
    job.keep_snapshots = has_keep ? args.keep : 0;
    if (!args.snapshot_dir.empty()) {
        job.snapshot_dir = std::filesystem::path(args.snapshot_dir);
    }
}

Command add_snapshot_command(CLI::App& parent) {
    auto args = std::make_shared<SnapshotArgs>();
    CLI::App* app = parent.add_subcommand(
        "snapshot",
        "Dated, immutable copies of a mirrored repository (hard links), published "
        "under names switched atomically");
    app->require_subcommand(1);

    CLI::App* create = app->add_subcommand(
        "create", "snapshot a complete, verified mirror (packages hard-linked, metadata copied)");
    add_where_options(*create, args->where);
    create->add_option("--name", args->name, "the snapshot's name (default: UTC YYYYMMDDTHHMMSSZ)");
    create->add_flag("--copy", args->copy, "copy packages instead of hard-linking them");
    create->add_flag("--no-cache", args->no_cache,
                     "verify the mirror by hashing every file, ignoring the checksum cache");
    args->keep_option =
        create
            ->add_option(
                "--keep-snapshots", args->keep,
                "then remove the oldest snapshots beyond the newest N (never a published one)")
            ->check(CLI::Range(std::size_t{1}, std::size_t{1000000}));

    CLI::App* list = app->add_subcommand("list", "list snapshots, oldest first");
    add_where_options(*list, args->where);
    list->add_flag("--json", args->json, "as JSON");

    CLI::App* publish =
        app->add_subcommand("publish", "point published/PUB/<repo id> at a snapshot, atomically");
    add_where_options(*publish, args->where);
    publish->add_option("snapshot", args->name, "the snapshot")->required();
    publish->add_option("--as", args->published_as, "the published name (e.g. prod)")->required();

    CLI::App* remove =
        app->add_subcommand("remove",
                            "remove a snapshot that is not published (frees only files "
                            "nothing else links)");
    add_where_options(*remove, args->where);
    remove->add_option("snapshot", args->name, "the snapshot")->required();

    return Command{app, [args, create, list, publish, remove]() -> int {
                       if (create->parsed()) {
                           return run_create(*args);
                       }
                       if (list->parsed()) {
                           return run_list(*args);
                       }
                       if (publish->parsed()) {
                           return run_publish(*args);
                       }
                       if (remove->parsed()) {
                           return run_remove(*args);
                       }
                       return kExitUsage;
                   }};
}

}  // namespace rpmirror::cli
