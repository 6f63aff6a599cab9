#include "checksum/sigbus_guard.hpp"

#include <csetjmp>
#include <csignal>
#include <mutex>

namespace rpmirror {

namespace {

struct GuardedRange {
    sigjmp_buf resume_point;
    const std::byte* begin;
    const std::byte* end;
};

// initial-exec TLS: reading it from a signal handler needs no allocation or locking.
thread_local GuardedRange* active_range __attribute__((tls_model("initial-exec"))) = nullptr;

struct sigaction previous_action;

void forward_to_previous(int signal_number, siginfo_t* info, void* context) {
    if ((previous_action.sa_flags & SA_SIGINFO) != 0 && previous_action.sa_sigaction != nullptr) {
        previous_action.sa_sigaction(signal_number, info, context);
        return;
    }
    if (previous_action.sa_handler != SIG_DFL && previous_action.sa_handler != SIG_IGN &&
        previous_action.sa_handler != nullptr) {
        previous_action.sa_handler(signal_number);
        return;
    }
    // Default action: restore it and deliver the signal again (SA_NODEFER lets it through at
    // once), terminating the process exactly as if we had never been installed.
    ::signal(signal_number, SIG_DFL);
    ::raise(signal_number);
}

void on_sigbus(int signal_number, siginfo_t* info, void* context) {
    GuardedRange* range = active_range;
    const auto* fault_address = static_cast<const std::byte*>(info->si_addr);
    if (range != nullptr && fault_address >= range->begin && fault_address < range->end) {
        siglongjmp(range->resume_point, 1);
    }
    forward_to_previous(signal_number, info, context);
}

void install_handler_once() {
    static std::once_flag installed;
    std::call_once(installed, [] {
        struct sigaction action {};
        action.sa_sigaction = on_sigbus;
        sigemptyset(&action.sa_mask);
        action.sa_flags = SA_SIGINFO | SA_NODEFER;
        ::sigaction(SIGBUS, &action, &previous_action);
    });
}

}  // namespace

bool consume_mapping_guarded(
    const std::byte* data, std::size_t size, std::size_t chunk_size,
    const std::function<void(std::size_t offset, std::size_t length)>& consume) {
    install_handler_once();
    GuardedRange range;
    range.begin = data;
    range.end = data + size;
    // No object with a destructor may be created between sigsetjmp and the end of the loop:
    // siglongjmp skips destructors.
    if (sigsetjmp(range.resume_point, 1) != 0) {
        active_range = nullptr;
        return false;
    }
    active_range = &range;
    for (std::size_t offset = 0; offset < size; offset += chunk_size) {
        const std::size_t length = size - offset < chunk_size ? size - offset : chunk_size;
        consume(offset, length);
    }
    active_range = nullptr;
    return true;
}

}  // namespace rpmirror
