// Repository-source options and their loading (see repo_options.hpp).
#include "repo_options.hpp"

#include <algorithm>

#include <fmt/core.h>

namespace rpmirror::cli {

void add_repo_source_options(CLI::App& app, RepoSourceArgs& args) {
    app.add_option("--repofrompath", args.repofrompath,
                   "ID,URL: a repository given on the command line; repeatable");
    app.add_option("-c,--config", args.config_file, "dnf configuration file");
    app.add_option("--reposdir", args.reposdirs, "directory of .repo files; repeatable");
    app.add_option("--varsdir", args.varsdirs, "directory of variable files; repeatable");
    app.add_option("--setopt", args.setopts, "KEY=VALUE or REPOID.KEY=VALUE; repeatable");
    app.add_option("--releasever", args.releasevers,
                   "value of $releasever (sync --upstream-layout: repeatable, each release "
                   "mirrored in turn)");
    app.add_option("--basearch", args.basearch, "value of $basearch");
    app.add_option("--forcearch", args.forcearch,
                   "ARCH: value of $arch, and $basearch derived from it (as dnf)");
    app.add_option("-x,--exclude,--excludepkgs", args.excludes,
                   "exclude packages matching these globs from every repository (repeatable, "
                   "comma lists)");
    app.add_option("--disableexcludes,--disable-excludes", args.disable_excludes,
                   "all, main or REPOID: ignore those excludes (repeatable, comma lists)");
    app.add_option("--installroot", args.installroot,
                   "DIR: read dnf.conf, repos and vars beneath DIR first, as dnf 4 (keys for "
                   "--gpgcheck from its rpm database)");
}

void add_run_state_options(CLI::App& app, RunStateArgs& args) {
    app.add_option("--state-dir", args.state_dir,
                   "where rpmirror keeps its state and locks (default /var/lib/rpmirror for root, "
                   "$XDG_STATE_HOME/rpmirror otherwise; $RPMIRROR_STATE_DIR overrides)");
    args.wait_lock_option =
        app.add_option("--wait-lock", args.wait_lock,
                       "[=SECONDS] wait for another rpmirror syncing the same repository (default: "
                       "fail at once; without SECONDS: wait as long as it takes)")
            ->expected(0, 1);
}

void apply_run_state_options(const RunStateArgs& args, std::filesystem::path& state_dir,
                             std::optional<std::chrono::seconds>& lock_wait) {
    if (!args.state_dir.empty()) {
        state_dir = std::filesystem::absolute(args.state_dir);
    }
    if (args.wait_lock_option != nullptr && args.wait_lock_option->count() > 0) {
        lock_wait = args.wait_lock.empty() ? std::chrono::hours(24 * 365)
                                           : std::chrono::seconds(args.wait_lock.front());
    }
}

namespace {

bool should_print(const ConfigWarning& warning, ConfigNoise noise) {
    switch (warning.kind) {
        case ConfigWarningKind::UnknownKey:
            return true;
        case ConfigWarningKind::IgnoredKey:
            return noise == ConfigNoise::Verbose;
        case ConfigWarningKind::DuplicateKey:
        case ConfigWarningKind::NoMatch:
            return noise != ConfigNoise::Quiet;
    }
    return true;
}

}  // namespace

ConfigNoise config_noise(bool quiet, bool verbose) {
    return quiet ? ConfigNoise::Quiet : verbose ? ConfigNoise::Verbose : ConfigNoise::Normal;
}

void print_config_warning(const ConfigWarning& warning, ConfigNoise noise) {
    if (should_print(warning, noise)) {
        fmt::print(stderr, "rpmirror: warning: {}\n", warning.to_string());
    }
}

void print_config_warnings(const std::vector<ConfigWarning>& warnings, ConfigNoise noise) {
    for (const ConfigWarning& warning : warnings) {
        print_config_warning(warning, noise);
    }
}

std::vector<std::string> split_option_list(const std::vector<std::string>& values) {
    return split_lists(values);
}

Result<std::vector<RepoConfig>> load_repo_sources(const RepoSourceArgs& args, ConfigNoise noise) {
    std::vector<ConfigWarning> warnings;
    auto repos = rpmirror::load_repo_sources(args, warnings);
    print_config_warnings(warnings, noise);
    return repos;
}

}  // namespace rpmirror::cli
