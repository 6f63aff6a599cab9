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

struct Command {
    CLI::App* app;
    std::function<int()> run;  // returns the process exit code
};

Command add_checksum_command(CLI::App& parent);
Command add_diff_command(CLI::App& parent);
Command add_exec_command(CLI::App& parent);
Command add_snapshot_command(CLI::App& parent);
Command add_sync_command(CLI::App& parent);
Command add_verify_command(CLI::App& parent);

}  // namespace rpmirror::cli
