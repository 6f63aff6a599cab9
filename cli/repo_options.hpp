// Command-line options that say where repository definitions come from (dnf's -c, --reposdir,
// --repofrompath, --setopt, variables), and loading them with the config stage. Shared by the
// subcommands that need repository configurations.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "rpmirror/config/config.hpp"

namespace rpmirror::cli {

// The options' values (dnf's list options: comma lists, split by the library).
using RepoSourceArgs = RepoSourceRequest;

// Registers --repofrompath, -c/--config, --reposdir, --varsdir, --setopt, --releasever,
// --basearch, --forcearch, -x/--exclude/--excludepkgs, --disableexcludes and --installroot on
// `app`, storing into `args` (which must outlive the parse).
void add_repo_source_options(CLI::App& app, RepoSourceArgs& args);

// Where rpmirror keeps its state, and how a run waits for another on the same repository:
// --state-dir DIR, --wait-lock[=SECONDS].
struct RunStateArgs {
    std::string state_dir;
    std::vector<unsigned> wait_lock;  // empty: not given; [] when given without a value
    CLI::Option* wait_lock_option = nullptr;
};

// Registers --state-dir and --wait-lock on `app`, storing into `args`.
void add_run_state_options(CLI::App& app, RunStateArgs& args);

// Copies --state-dir and --wait-lock into `state_dir` and `lock_wait` (without SECONDS: wait
// as long as it takes).
void apply_run_state_options(const RunStateArgs& args, std::filesystem::path& state_dir,
                             std::optional<std::chrono::seconds>& lock_wait);

// How much of the config stage's findings to print.
enum class ConfigNoise {
    Quiet,    // -q: only unknown keys (likely typos)
    Normal,   // also duplicates and --setopt globs that match nothing
    Verbose,  // -v: also keys dnf knows but rpmirror ignores (a stock dnf.conf has several)
};

// The noise of -q (`quiet`) and -v (`verbose`).
ConfigNoise config_noise(bool quiet, bool verbose);

// Prints the config stage's `warning` to stderr iff `noise` shows it.
void print_config_warning(const ConfigWarning& warning, ConfigNoise noise);

// Prints the config stage's `warnings` to stderr as `noise` says.
void print_config_warnings(const std::vector<ConfigWarning>& warnings, ConfigNoise noise);

// Splits each value at commas (and whitespace, as dnf's list options), dropping empty items.
std::vector<std::string> split_option_list(const std::vector<std::string>& values);

// Loads every repository the sources define (enabled or not), printing the config stage's
// warnings to stderr as `noise` says.
// Returns the config stage's error (BadInput, NotFound, Io) iff loading fails, and
// Error{BadInput} naming --forcearch iff its value is not an architecture name.
Result<std::vector<RepoConfig>> load_repo_sources(const RepoSourceArgs& args, ConfigNoise noise);

}  // namespace rpmirror::cli
