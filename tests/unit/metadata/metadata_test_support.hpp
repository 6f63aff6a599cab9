// Helpers for the metadata tests: running the real tools (createrepo_c, sha256sum,
// scripts/make-sample-repo) and reading the files they write.
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace rpmirror::test {

// The source tree root, from this header's own path (tests/unit/metadata/...).
inline std::filesystem::path source_root() {
    return std::filesystem::path(__FILE__).parent_path().parent_path().parent_path().parent_path();
}

inline std::string read_text_file(const std::filesystem::path& path) {
    std::ifstream stream(path, std::ios::binary);
    std::ostringstream contents;
    contents << stream.rdbuf();
    return contents.str();
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

// Returns the first word `tool` (e.g. "sha256sum") prints for `file`: an independent digest.
inline std::string tool_digest(const std::string& tool, const std::filesystem::path& file,
                               const std::filesystem::path& scratch) {
    const std::filesystem::path log = scratch / (tool + ".out");
    if (run_command({tool, file.string()}, log) != 0) {
        return {};
    }
    const std::string output = read_text_file(log);
    return output.substr(0, output.find(' '));
}

}  // namespace rpmirror::test
