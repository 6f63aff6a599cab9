// `rpmirror sync --snapshot[=NAME] [--keep-snapshots N] [--snapshot-dir DIR]`: a snapshot of each
// repository after it synced completely (cli/snapshot.cpp).
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "rpmirror/jobs/jobs_config.hpp"
#include "rpmirror/snapshot/snapshot.hpp"
#include "rpmirror/sync/sync_report.hpp"

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

// --snapshot[=NAME], --keep-snapshots and --snapshot-dir as the job keys `snapshot`,
// `keep-snapshots` and `snapshot-dir` of `job` (run_sync takes each snapshot): nothing iff
// --snapshot was not given.
void add_sync_snapshot(const SyncSnapshotArgs& args, JobConfig& job);

}  // namespace rpmirror::cli
