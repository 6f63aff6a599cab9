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

struct RepoSourceArgs {
    std::vector<std::string> repofrompath;
    std::string config_file;
    std::vector<std::string> reposdirs;
    std::vector<std::string> varsdirs;
    std::vector<std::string> setopts;
    // --releasever, in order. Once for every command; several times only for `sync
    // --upstream-layout`, which mirrors each release (load_repo_sources takes one).
    std::vector<std::string> releasevers;
    std::string basearch;
    std::string forcearch;                      // --forcearch: $arch, and $basearch from it
    std::vector<std::string> excludes;          // -x/--exclude/--excludepkgs (comma lists)
    std::vector<std::string> disable_excludes;  // --disableexcludes (comma lists)
    std::string installroot;                    // --installroot: where dnf.conf, repos, vars are
};

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

// Prints the config stage's `warnings` to stderr as `noise` says.
void print_config_warnings(const std::vector<ConfigWarning>& warnings, ConfigNoise noise);

// Splits each value at commas (and whitespace, as dnf's list options), dropping empty items.
std::vector<std::string> split_option_list(const std::vector<std::string>& values);

// The absolute --installroot ("/" when not given).
std::filesystem::path installroot_of(const RepoSourceArgs& args);

// The config stage's sources and variables as `args` give them (dnf.conf, repos directories,
// --setopt, --installroot, $releasever, $basearch from --forcearch, variable directories).
struct LoadedSources {
    ConfigSources sources;
    VariableContext variables;
};

// Returns them; Error{BadInput} naming --forcearch iff its value is not an architecture name, or
// --releasever iff given more than once; the config stage's error iff the variables cannot be
// read.
Result<LoadedSources> config_sources_of(const RepoSourceArgs& args);

// Loads every repository the sources define (enabled or not), printing the config stage's
// warnings to stderr as `noise` says.
// Returns the config stage's error (BadInput, NotFound, Io) iff loading fails, and
// Error{BadInput} naming --forcearch iff its value is not an architecture name.
Result<std::vector<RepoConfig>> load_repo_sources(const RepoSourceArgs& args, ConfigNoise noise);

}  // namespace rpmirror::cli
