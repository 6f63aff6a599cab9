// The listening sockets a service manager passed (socket activation), for `rpmirror serve`.
#pragma once

#include <vector>

#include "rpmirror/util/error.hpp"

namespace rpmirror::serve {

// Socket activation, systemd's sd_listen_fds protocol without libsystemd: when LISTEN_PID is
// this process and LISTEN_FDS is N > 0, the listening sockets are the descriptors 3 .. 3+N-1.
// Returns them (each made close-on-exec) and removes the variables, so that no child takes them
// for its own; empty when the process was not started so (the variables absent, or meant for
// another process). Error{BadInput} iff they are set for this process but malformed or a
// descriptor is not a listening stream socket.
Result<std::vector<int>> activated_sockets();

}  // namespace rpmirror::serve
