// SignalStopper: how a long-running command (sync, serve) ends on SIGINT/SIGTERM.
#pragma once

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <stop_token>
#include <thread>

namespace rpmirror::cli {

constexpr int kExitSigint = 130;
constexpr int kExitSigterm = 143;

// SIGINT/SIGTERM stop the sync cleanly: blocked in every thread, received by one waiting thread
// that requests a stop (transfers end, .part files stay for resume) and remembers the signal.
// SIGUSR1, sent by the destructor, only wakes that thread so it can end at once.
class SignalStopper {
  public:
    SignalStopper() {
        sigemptyset(&signals_);
        sigaddset(&signals_, SIGINT);
        sigaddset(&signals_, SIGTERM);
        sigaddset(&signals_, SIGUSR1);
        pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
        waiter_ = std::jthread([this](std::stop_token done) {
            while (!done.stop_requested()) {
                const int received = sigwaitinfo(&signals_, nullptr);
                if (received == SIGINT || received == SIGTERM) {
                    signal_.store(received);
                    source_.request_stop();
                }
            }
        });
    }
    SignalStopper(const SignalStopper&) = delete;
    SignalStopper& operator=(const SignalStopper&) = delete;
    ~SignalStopper() {
        waiter_.request_stop();
        pthread_kill(waiter_.native_handle(), SIGUSR1);
    }  // waiter_ joins here

    std::stop_token token() const { return source_.get_token(); }
    int exit_code() const {
        switch (signal_.load()) {
            case SIGINT:
                return kExitSigint;
            case SIGTERM:
                return kExitSigterm;
            default:
                return 0;
        }
    }

  private:
    sigset_t signals_{};
    std::stop_source source_;
    std::atomic<int> signal_{0};
    std::jthread waiter_;
};

}  // namespace rpmirror::cli
