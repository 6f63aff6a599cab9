// `rpmirror exec [--mode M] -- COMMAND ARGS...`: runs COMMAND with the librepo accelerator
// preloaded (README.md, "Faster stock dnf"), after checking that COMMAND will load a librepo at
// all. Which librepo builds are served is the accelerator's to decide (librepo_accel.hpp).
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "command.hpp"
#include "rpmirror/librepo_accel.hpp"

namespace rpmirror::cli {

namespace {

// As env(1), nice(1) and timeout(1): the wrapper's own failure, a command that cannot be run, and
// one that does not exist; anything else is the command's own exit status.
constexpr int kExitRefused = 125;
constexpr int kExitCannotRun = 126;
constexpr int kExitNotFound = 127;

struct ExecArgs {
    std::string mode;
    std::vector<std::string> command;
};

int run_exec(const ExecArgs& args) {
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
    app->add_option("command", args->command, "the command and its arguments, after --")
        ->required();
    app->footer(
        "Exit status: the command's; 125 when rpmirror exec refuses (no accelerator "
        "library, or no librepo to load), 126 when "
        "the command cannot be run, 127 when it is not found.");
    return {app, [args] { return run_exec(*args); }};
}

}  // namespace rpmirror::cli
