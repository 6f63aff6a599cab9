// `rpmirror sync --snapshot[=NAME] [--keep-snapshots N] [--snapshot-dir DIR]`: a snapshot of each
// repository after it synced completely (cli/snapshot.cpp).
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "rpmirror/snapshot/snapshot.hpp"
#include "rpmirror/sync/sync.hpp"

namespace rpmirror::cli {

struct SyncSnapshotArgs {
    std::vector<std::string> name;  // --snapshot[=NAME]: empty when given without NAME
    CLI::Option* snapshot_option = nullptr;
    std::size_t keep = 0;  // --keep-snapshots N
    CLI::Option* keep_option = nullptr;
    std::string snapshot_dir;  // --snapshot-dir
};

// Registers --snapshot, --keep-snapshots and --snapshot-dir on `app` (sync), storing into `args`.
void add_sync_snapshot_options(CLI::App& app, SyncSnapshotArgs& args);

// What create_and_prune_snapshot or snapshot_after_sync did, one line each ("ID: snapshot NAME:
// ...", "ID: removed snapshot NAME (freed X MB)").
std::vector<std::string> format_snapshot_done(std::string_view repo_id,
                                              const SnapshotAndPrune& done);

// The snapshots of one sync run: every repository's snapshot gets the same name (the run's start
// time in UTC unless NAME was given).
class SyncSnapshots {
  public:
    SyncSnapshots(const SyncSnapshotArgs& args, const SyncOptions& options);

    // Snapshots the repository of `report` iff --snapshot was given and the sync of it
    // succeeded (not with -u), then prunes to --keep-snapshots. Prints what it did to `human`
    // (unless `quiet`) and errors to stderr. Returns false iff that failed.
    bool after(const RepoSyncReport& report, std::FILE* human, bool quiet) const;

  private:
    const SyncSnapshotArgs& args_;
    const SyncOptions& options_;
    std::string name_;
};

}  // namespace rpmirror::cli
