// `rpmirror exec [--mode M] -- COMMAND ARGS...`: runs COMMAND with the librepo accelerator
// preloaded (README.md, "Faster stock dnf"), after checking that COMMAND will load a librepo at
// all. Which librepo builds are served is the accelerator's to decide (librepo_accel.hpp).
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "command.hpp"
#include "rpmirror/config/config.hpp"
#include "rpmirror/librepo_accel/librepo_accel.hpp"
#include "rpmirror/prefetch/prefetch.hpp"

namespace rpmirror::cli {

namespace {

// As env(1), nice(1) and timeout(1): the wrapper's own failure, a command that cannot be run, and
// one that does not exist; anything else is the command's own exit status.
constexpr int kExitRefused = 125;
constexpr int kExitCannotRun = 126;
constexpr int kExitNotFound = 127;

struct ExecArgs {
    std::string mode;
    bool prefetch = false;
    std::vector<std::string> command;
};

// --prefetch: when `command` is a `dnf install` the prefetch can model, fills dnf's cache for it
// (rpmirror/prefetch/prefetch.hpp). Says on stderr what it did or why it did nothing; never stops
// the command from running.
void prefetch_for(const std::vector<std::string>& command) {
    const auto started = std::chrono::steady_clock::now();
    auto install = parse_dnf_install_command(command);
    if (!install) {
        fmt::print(stderr, "rpmirror exec: no prefetch: {}\n", install.error().message);
        return;
    }
    if (::geteuid() != 0) {
        fmt::print(stderr,
                   "rpmirror exec: no prefetch: not root (dnf keeps a cache per user then)\n");
        return;
    }
    auto report = prefetch_for_dnf_install(*install);
    if (!report) {
        fmt::print(stderr, "rpmirror exec: no prefetch: {}\n", report.error().to_string());
        return;
    }
    for (const std::string& warning : report->warnings) {
        fmt::print(stderr, "rpmirror exec: prefetch: {}\n", warning);
    }
    if (!install->quiet) {
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        fmt::print(stderr,
                   "rpmirror exec: prefetched {} package(s), {:.1f} MB, and the metadata of {} "
                   "repositor{} ({} fetched) into {} in {:.2f} s (metadata {:.2f} s, resolve "
                   "{:.2f} s, packages {:.2f} s)\n",
                   report->packages, static_cast<double>(report->bytes) / 1e6, report->repositories,
                   report->repositories == 1 ? "y" : "ies", report->metadata_fetched,
                   report->cachedir.string(), seconds, report->metadata_seconds,
                   report->resolve_seconds, report->download_seconds);
    }
}

int run_exec(const ExecArgs& args) {
    if (args.prefetch) {
        prefetch_for(args.command);
    }
    std::error_code error;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
    const auto library = find_librepo_accel_library(self);
    if (!library) {
        fmt::print(stderr, "rpmirror exec: {}\n", library.error().to_string());
        return kExitRefused;
    }
    const char* configured_mode = std::getenv(kLibrepoAccelModeVariable);  // NOLINT
    const std::string mode_name =
        !args.mode.empty() ? args.mode
                           : (configured_mode != nullptr
                                  ? configured_mode
                                  : std::string(librepo_accel_mode_name(kDefaultLibrepoAccelMode)));
    const auto mode = parse_librepo_accel_mode(mode_name);
    if (!mode) {
        fmt::print(stderr,
                   "rpmirror exec: {}={} is not a mode (expected off, plain, buffer, mmap, "
                   "nofsync, full or deferred)\n",
                   kLibrepoAccelModeVariable, mode_name);
        return kExitRefused;
    }
    if (*mode != LibrepoAccelMode::Off) {
        const auto librepo = find_system_librepo();
        if (!librepo) {
            fmt::print(stderr,
                       "rpmirror exec: {} (the accelerator replaces librepo's checksum "
                       "code; without librepo it has nothing to do)\n",
                       librepo.error().to_string());
            return kExitRefused;
        }
        // A build not listed is not refused here: the accelerator checks it at run time
        // before serving it, and leaves every call to it if it differs.
    }
    std::string preload = library->string();
    if (const char* existing = std::getenv("LD_PRELOAD"); existing != nullptr && *existing) {
        preload += ':' + std::string(existing);
    }
    ::setenv("LD_PRELOAD", preload.c_str(), 1);  // NOLINT(concurrency-mt-unsafe)
    ::setenv(kLibrepoAccelModeVariable, mode_name.c_str(), 1);

    std::vector<char*> argv;
    for (const std::string& arg : args.command) {
        argv.push_back(const_cast<char*>(arg.c_str()));
    }
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    const int exec_errno = errno;
    fmt::print(stderr, "rpmirror exec: cannot run {}: {}\n", args.command.front(),
               std::strerror(exec_errno));
    return exec_errno == ENOENT ? kExitNotFound : kExitCannotRun;
}

}  // namespace

Command add_exec_command(CLI::App& parent) {
    auto args = std::make_shared<ExecArgs>();
    CLI::App* app = parent.add_subcommand(
        "exec",
        "Run a command (dnf, ...) with librepo's checksum code replaced by rpmirror's "
        "(LD_PRELOAD of librpmirror-librepo-accel.so)");
    app->add_option("--mode", args->mode,
                    "off, plain, buffer, mmap, nofsync, full or deferred (default: "
                    "$RPMIRROR_LIBREPO_ACCEL, else deferred)")
        ->check(CLI::IsMember({"off", "plain", "buffer", "mmap", "nofsync", "full", "deferred"}));
    app->add_flag("--prefetch", args->prefetch,
                  "When COMMAND is `dnf install ...`: first fetch the metadata and the packages "
                  "it will install into dnf's cache, as rpmirror fetches");
    app->add_option("command", args->command, "the command and its arguments, after --")
        ->required();
    app->footer(
        "Exit status: the command's; 125 when rpmirror exec refuses (no accelerator "
        "library, or no librepo to load), 126 when "
        "the command cannot be run, 127 when it is not found.");
    return {app, [args] { return run_exec(*args); }};
}

}  // namespace rpmirror::cli
