// On-change hooks: /bin/sh -c CMD after a job that changed the mirror.
#include "jobs/hooks.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

namespace rpmirror {

namespace {

constexpr std::array<std::string_view, 4> kHookVariables{
    "RPMIRROR_JOB", "RPMIRROR_REPO_ID", "RPMIRROR_DESTINATION", "RPMIRROR_METADATA_DIR"};

// posix_spawn's attributes and file actions, destroyed with their owner.
class SpawnAttributes {
  public:
    SpawnAttributes() { ::posix_spawnattr_init(&attributes_); }
    SpawnAttributes(const SpawnAttributes&) = delete;
    SpawnAttributes& operator=(const SpawnAttributes&) = delete;
    ~SpawnAttributes() { ::posix_spawnattr_destroy(&attributes_); }
    posix_spawnattr_t* get() { return &attributes_; }

  private:
    posix_spawnattr_t attributes_{};
};

class SpawnFileActions {
  public:
    SpawnFileActions() { ::posix_spawn_file_actions_init(&actions_); }
    SpawnFileActions(const SpawnFileActions&) = delete;
    SpawnFileActions& operator=(const SpawnFileActions&) = delete;
    ~SpawnFileActions() { ::posix_spawn_file_actions_destroy(&actions_); }
    posix_spawn_file_actions_t* get() { return &actions_; }

  private:
    posix_spawn_file_actions_t actions_{};
};

// Our environment without the hook variables, then the hook variables of `outcome`.
std::vector<std::string> hook_environment(const JobOutcome& outcome,
                                          const std::filesystem::path& metadata_dir) {
    std::vector<std::string> variables;
    for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
        const std::string_view variable(*entry);
        const std::string_view name = variable.substr(0, variable.find('='));
        if (std::find(kHookVariables.begin(), kHookVariables.end(), name) == kHookVariables.end()) {
            variables.emplace_back(variable);
        }
    }
    std::error_code ignored;
    const auto absolute = [&](const std::filesystem::path& path) {
        return path.empty() ? std::string() : std::filesystem::absolute(path, ignored).string();
    };
    variables.push_back(fmt::format("RPMIRROR_JOB={}", outcome.job));
    variables.push_back(fmt::format("RPMIRROR_REPO_ID={}", outcome.report.repo_id));
    variables.push_back(fmt::format("RPMIRROR_DESTINATION={}", absolute(outcome.report.repo_dir)));
    variables.push_back(fmt::format("RPMIRROR_METADATA_DIR={}", absolute(metadata_dir)));
    return variables;
}

tl::unexpected<Error> hook_failed(const std::string& command, const JobOutcome& outcome,
                                  const std::string& how, int sys_errno = 0) {
    return make_error(ErrorCode::Io, fmt::format("exec-on-change '{}' failed: {}", command, how),
                      outcome.job, sys_errno);
}

}  // namespace

Result<void> run_change_hook(const std::string& command, const JobOutcome& outcome,
                             const std::filesystem::path& metadata_dir) {
    std::vector<std::string> variables = hook_environment(outcome, metadata_dir);
    std::vector<char*> envp;
    for (std::string& variable : variables) {
        envp.push_back(variable.data());
    }
    envp.push_back(nullptr);
    std::string shell = "/bin/sh";
    std::string dash_c = "-c";
    std::string command_copy = command;
    std::array<char*, 4> argv{shell.data(), dash_c.data(), command_copy.data(), nullptr};

    SpawnFileActions actions;
    ::posix_spawn_file_actions_addopen(actions.get(), STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    SpawnAttributes attributes;
    // rpmirror blocks SIGINT/SIGTERM in every thread (one thread waits for them); the hook must
    // not inherit that, nor ignored dispositions.
    sigset_t signals;
    sigemptyset(&signals);
    ::posix_spawnattr_setsigmask(attributes.get(), &signals);
    sigfillset(&signals);
    ::posix_spawnattr_setsigdefault(attributes.get(), &signals);
    ::posix_spawnattr_setflags(attributes.get(), POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

    std::fflush(nullptr);  // what we printed comes before what the hook prints
    pid_t child = 0;
    const int spawn_errno = ::posix_spawn(&child, shell.c_str(), actions.get(), attributes.get(),
                                          argv.data(), envp.data());
    if (spawn_errno != 0) {
        return hook_failed(command, outcome, "cannot run " + shell, spawn_errno);
    }
    int status = 0;
    while (::waitpid(child, &status, 0) != child) {
        if (errno != EINTR) {
            return hook_failed(command, outcome, "cannot wait for it", errno);
        }
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        return {};
    }
    if (WIFSIGNALED(status)) {
        const int signal_number = WTERMSIG(status);
        const char* name = ::sigabbrev_np(signal_number);
        return hook_failed(
            command, outcome,
            fmt::format("killed by signal {}{}", signal_number,
                        name != nullptr ? fmt::format(" (SIG{})", name) : std::string()));
    }
    return hook_failed(command, outcome, fmt::format("exit status {}", WEXITSTATUS(status)));
}

std::optional<std::string> run_hook_after_job(const std::string& command, JobOutcome& outcome,
                                              const std::filesystem::path& metadata_dir) {
    if (command.empty() || !outcome.changed()) {
        return std::nullopt;
    }
    auto ran = run_change_hook(command, outcome, metadata_dir);
    if (ran) {
        return std::nullopt;
    }
    std::string line = ran.error().to_string();
    outcome.errors.push_back(line);
    return line;
}

}  // namespace rpmirror
