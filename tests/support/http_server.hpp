// Test servers on 127.0.0.1, started and stopped by the tests: a child-process owner, free-port
// and readiness helpers, and FaultServer (tests/integration/fault_server.py) with its request
// log. Header-only.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/source_tree.hpp"

namespace rpmirror::test {

// A child process, killed (SIGTERM, then SIGKILL) and reaped in the destructor.
class ChildProcess {
  public:
    ChildProcess() = default;
    // Starts `argv` (argv[0] looked up in PATH). With `capture_stdout`, the child's stdout is a
    // pipe readable through read_line(). Throws std::runtime_error iff fork/pipe fails.
    explicit ChildProcess(const std::vector<std::string>& argv, bool capture_stdout = false) {
        int pipe_fds[2] = {-1, -1};
        if (capture_stdout && ::pipe2(pipe_fds, O_CLOEXEC) != 0) {
            throw std::runtime_error("pipe2 failed");
        }
        std::vector<char*> args;
        for (const auto& arg : argv) {
            args.push_back(const_cast<char*>(arg.c_str()));
        }
        args.push_back(nullptr);
        pid_ = ::fork();
        if (pid_ < 0) {
            throw std::runtime_error("fork failed");
        }
        if (pid_ == 0) {
            if (capture_stdout) {
                ::dup2(pipe_fds[1], STDOUT_FILENO);
            }
            ::execvp(args[0], args.data());
            ::_exit(127);
        }
        if (capture_stdout) {
            ::close(pipe_fds[1]);
            stdout_fd_ = pipe_fds[0];
        }
    }
    ChildProcess(ChildProcess&& other) noexcept
        : pid_(std::exchange(other.pid_, -1)), stdout_fd_(std::exchange(other.stdout_fd_, -1)) {}
    ChildProcess& operator=(ChildProcess&& other) noexcept {
        if (this != &other) {
            stop();
            pid_ = std::exchange(other.pid_, -1);
            stdout_fd_ = std::exchange(other.stdout_fd_, -1);
        }
        return *this;
    }
    ~ChildProcess() { stop(); }

    pid_t pid() const { return pid_; }

    // Returns true iff the child has exited (it is reaped then).
    bool exited() {
        if (pid_ <= 0) {
            return true;
        }
        int status = 0;
        if (::waitpid(pid_, &status, WNOHANG) == pid_) {
            pid_ = -1;
            return true;
        }
        return false;
    }

    // Returns the next line of the child's stdout (without '\n'), or "" iff none came within
    // `timeout` or the child closed it.
    std::string read_line(std::chrono::milliseconds timeout) {
        std::string line;
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        while (stdout_fd_ >= 0) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) {
                return {};
            }
            struct pollfd pfd {
                stdout_fd_, POLLIN, 0
            };
            if (::poll(&pfd, 1, static_cast<int>(left.count())) <= 0) {
                continue;
            }
            char c = 0;
            if (::read(stdout_fd_, &c, 1) != 1) {
                return {};
            }
            if (c == '\n') {
                return line;
            }
            line += c;
        }
        return {};
    }

    void stop() {
        if (stdout_fd_ >= 0) {
            ::close(stdout_fd_);
            stdout_fd_ = -1;
        }
        if (pid_ <= 0) {
            return;
        }
        ::kill(pid_, SIGTERM);
        for (int round = 0; round < 500; ++round) {  // up to ~5 s, then SIGKILL
            if (exited()) {
                return;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        ::kill(pid_, SIGKILL);
        int status = 0;
        ::waitpid(pid_, &status, 0);
        pid_ = -1;
    }

  private:
    pid_t pid_ = -1;
    int stdout_fd_ = -1;
};

// Returns a port that was free on 127.0.0.1 a moment ago (bind to port 0, read it, close).
// Another process may take it before it is used: callers retry on a bind conflict.
inline int pick_free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in address {};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    socklen_t length = sizeof(address);
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
        if (fd >= 0) {
            ::close(fd);
        }
        throw std::runtime_error("cannot find a free port");
    }
    ::close(fd);
    return ntohs(address.sin_port);
}

// Returns true iff a TCP connection to 127.0.0.1:`port` succeeds.
inline bool can_connect(int port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return false;
    }
    struct sockaddr_in address {};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    const bool connected =
        ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
    ::close(fd);
    return connected;
}

// Reads a file of JSON lines; lines that do not parse (a line being written) are skipped.
inline std::vector<nlohmann::json> read_json_lines(const std::filesystem::path& path) {
    std::vector<nlohmann::json> entries;
    std::ifstream stream(path);
    std::string line;
    while (std::getline(stream, line)) {
        auto parsed = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
        if (!parsed.is_discarded()) {
            entries.push_back(std::move(parsed));
        }
    }
    return entries;
}

inline std::filesystem::path source_tree_tests_dir() {
    // Not __FILE__: ccache with CCACHE_BASEDIR makes it relative to the build directory.
    return source_root() / "tests";
}

// One request as fault_server.py logged it.
struct LoggedRequest {
    std::string method;
    std::string path;
    std::string query;  // the raw query string, "" if none
    std::string range;  // the Range header, "" if none
    nlohmann::json headers;
    int step = 0;
    int in_flight = 0;  // requests being answered when it arrived, itself included
    // Proxy mode: "forward", "s3_error", "ok_with_error" or "drop"; "serve" otherwise.
    std::string action;
    int connection = 0;  // the connection it came on, numbered from 1 as they were accepted
};

// tests/integration/fault_server.py, serving `root` with the behaviours of `script` (see the
// script's docstring). The log and the script live in `work_dir`.
class FaultServer {
  public:
    FaultServer(const std::filesystem::path& root, const nlohmann::json& script,
                const std::filesystem::path& work_dir)
        : FaultServer({"--root", root.string()}, script, work_dir) {}

    // Proxy mode: forwards every request to `upstream` ("http://127.0.0.1:PORT", an S3 gateway)
    // but where `script`'s "rules" say otherwise.
    static FaultServer proxy(const std::string& upstream, const nlohmann::json& script,
                             const std::filesystem::path& work_dir) {
        return FaultServer({"--upstream", upstream}, script, work_dir);
    }

    int port() const { return port_; }
    // Returns "http://127.0.0.1:<port><path>".
    std::string url(const std::string& path = "") const {
        return "http://127.0.0.1:" + std::to_string(port_) + path;
    }

    // Returns every request seen so far, in arrival order.
    std::vector<LoggedRequest> requests() const {
        std::vector<LoggedRequest> requests;
        for (const auto& entry : read_json_lines(log_path_)) {
            requests.push_back(LoggedRequest{
                entry.value("method", ""), entry.value("path", ""), entry.value("query", ""),
                entry.value("range", ""), entry.value("headers", nlohmann::json::object()),
                entry.value("step", 0), entry.value("in_flight", 0), entry.value("action", ""),
                entry.value("connection", 0)});
        }
        return requests;
    }

    // Returns the requests for `path` only.
    std::vector<LoggedRequest> requests_for(const std::string& path) const {
        std::vector<LoggedRequest> matching;
        for (auto& request : requests()) {
            if (request.path == path) {
                matching.push_back(std::move(request));
            }
        }
        return matching;
    }

  private:
    FaultServer(std::vector<std::string> mode, const nlohmann::json& script,
                const std::filesystem::path& work_dir)
        : log_path_(work_dir / "fault_server.log") {
        const auto script_path = work_dir / "fault_server.json";
        std::ofstream(script_path) << script.dump();
        const auto server = source_tree_tests_dir() / "integration" / "fault_server.py";
        std::vector<std::string> argv{"python3", server.string()};
        argv.insert(argv.end(), mode.begin(), mode.end());
        argv.insert(argv.end(), {"--script", script_path.string(), "--log", log_path_.string()});
        process_ = ChildProcess(argv, /*capture_stdout=*/true);
        const std::string line = process_.read_line(std::chrono::seconds(20));
        if (line.empty()) {
            throw std::runtime_error("fault_server.py did not report its port");
        }
        port_ = std::stoi(line);
    }

    std::filesystem::path log_path_;
    ChildProcess process_;
    int port_ = 0;
};

}  // namespace rpmirror::test
