// Runs a check in a forked child, for tests that must change process-wide state (user id, mount
// namespace) without affecting the test runner.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <functional>

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

}  // namespace rpmirror::test
