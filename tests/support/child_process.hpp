// Runs a check in a forked child, for tests that must change process-wide state (user id, mount
// namespace) without affecting the test runner.
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace rpmirror::test {

// Runs `body` in a child process and returns its exit code (the value `body` returns), or -1 iff
// the child died from a signal. The child never returns into the test framework.
inline int run_in_child(const std::function<int()>& body) {
    const pid_t child = ::fork();
    if (child == 0) {
        ::_exit(body());
    }
    int status = 0;
    if (child < 0 || ::waitpid(child, &status, 0) != child) {
        return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Returns the pid of a child that has exited and been reaped: a pid no process has (until the
// kernel hands it out again, which takes a full turn of the pid space).
inline pid_t dead_pid() {
    const pid_t child = ::fork();
    if (child == 0) {
        ::_exit(0);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    return child;
}

// Runs `argv` with stdout and stderr going to `log`; returns its exit status, or -1 iff it could
// not be run or died from a signal.
inline int run_command(const std::vector<std::string>& argv, const std::filesystem::path& log) {
    const pid_t child = ::fork();
    if (child == 0) {
        const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd >= 0) {
            ::dup2(fd, 1);
            ::dup2(fd, 2);
        }
        std::vector<char*> args;
        for (const std::string& arg : argv) {
            args.push_back(const_cast<char*>(arg.c_str()));
        }
        args.push_back(nullptr);
        ::execvp(args[0], args.data());
        ::_exit(127);
    }
    int status = 0;
    if (child < 0 || ::waitpid(child, &status, 0) != child) {
        return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace rpmirror::test
