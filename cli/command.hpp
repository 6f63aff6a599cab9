// How the CLI's subcommands plug into main(): each registers its options on the parent app and
// returns the function that runs it once the command line has been parsed.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace rpmirror::cli {

// Exit codes shared by every subcommand (sha256sum and dnf use the same meanings).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // the job ran and something failed
inline constexpr int kExitUsage = 2;    // the command line was wrong; nothing was done
// sync --publish-partial: metadata was published without packages that failed, and nothing else
// failed.
inline constexpr int kExitPartial = 3;

// The exit code of a run that had `current` so far, then `next`: a usage error (2) outranks a
// failure (1), which outranks a partial publication (3), which outranks success (0). Any other
// code (a signal's) outranks them all.
inline int worse_exit_code(int current, int next) {
    const auto rank = [](int code) {
        switch (code) {
            case kExitOk:
                return 0;
            case kExitPartial:
                return 1;
            case kExitFailure:
                return 2;
            case kExitUsage:
                return 3;
            default:
                return 4;
        }
    };
    return rank(next) > rank(current) ? next : current;
}

struct Command {
    CLI::App* app;
    std::function<int()> run;  // returns the process exit code
};

Command add_checksum_command(CLI::App& parent);
Command add_diff_command(CLI::App& parent);
Command add_exec_command(CLI::App& parent);
Command add_export_command(CLI::App& parent);
Command add_import_command(CLI::App& parent);
Command add_serve_command(CLI::App& parent);
Command add_snapshot_command(CLI::App& parent);
Command add_sync_command(CLI::App& parent);
Command add_verify_command(CLI::App& parent);

}  // namespace rpmirror::cli
