// Socket activation without libsystemd (see serve/listen_sockets.hpp).
#include "serve/listen_sockets.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace rpmirror::serve {

Result<std::vector<int>> activated_sockets() {
    const char* pid = std::getenv("LISTEN_PID");
    const char* count = std::getenv("LISTEN_FDS");
    if (pid == nullptr || count == nullptr || std::to_string(::getpid()) != pid) {
        return std::vector<int>{};
    }
    const std::string value = count;
    ::unsetenv("LISTEN_PID");
    ::unsetenv("LISTEN_FDS");
    ::unsetenv("LISTEN_FDNAMES");
    constexpr int kFirst = 3;  // SD_LISTEN_FDS_START
    int sockets = 0;
    if (value.empty() || value.size() > 4 ||
        value.find_first_not_of("0123456789") != std::string::npos ||
        (sockets = std::stoi(value)) == 0) {
        return make_error(ErrorCode::BadInput, "expected a positive number of sockets",
                          "LISTEN_FDS='" + value + "' (socket activation)");
    }
    std::vector<int> fds;
    for (int fd = kFirst; fd < kFirst + sockets; ++fd) {
        int type = 0;
        int listening = 0;
        socklen_t length = sizeof type;
        socklen_t listening_length = sizeof listening;
        if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length) != 0 || type != SOCK_STREAM ||
            ::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &listening_length) != 0 ||
            listening == 0) {
            return make_error(ErrorCode::BadInput, "not a listening stream socket",
                              "descriptor " + std::to_string(fd) + " (socket activation)");
        }
        (void)::fcntl(fd, F_SETFD, FD_CLOEXEC);
        fds.push_back(fd);
    }
    return fds;
}

}  // namespace rpmirror::serve
