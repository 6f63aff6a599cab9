// The Engine's state and its loop: set_state (the one place a transfer's state changes), and the
// loop that drives curl, the sinks' completions and the starts of queued and waiting transfers.
#include "download/engine.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cmath>

namespace rpmirror::download {

void Engine::set_state(Transfer& transfer, TransferState next) {
    assert(is_allowed_transition(transfer.state, next));
    if (transfer.state == TransferState::Running) {
        --running;
        transfer.attempt.connection.reset();
    } else if (transfer.state == TransferState::Verifying) {
        --verifying;
    }
    transfer.state = next;
    if (next == TransferState::Running) {
        assert(!budget_client || transfer.attempt.connection);
        ++running;
    } else if (next == TransferState::Verifying) {
        ++verifying;
    }
}

void Engine::begin_verification(Transfer& transfer, Verification verification) {
    transfer.verification = verification;
    set_state(transfer, TransferState::Verifying);
}

void Engine::drain_curl_messages() {
    int left = 0;
    while (CURLMsg* message = curl_multi_info_read(multi, &left)) {
        if (message->msg != CURLMSG_DONE) {
            continue;
        }
        Transfer* transfer = nullptr;
        curl_easy_getinfo(message->easy_handle, CURLINFO_PRIVATE, &transfer);
        const CURLcode code = message->data.result;
        if (transfer != nullptr && transfer->state == TransferState::Running) {
            on_curl_done(*transfer, code);
        }
    }
}

void Engine::drain_completions() {
    for (const Completion& completion : completions.take()) {
        Transfer& transfer = *transfers[completion.transfer];
        if (completion.kind == Completion::Kind::Unpause) {
            resume_paused(true, completion.transfer);
        } else if (completion.kind == Completion::Kind::UnpauseAll) {
            resume_paused(false, 0);
        } else if (transfer.state == TransferState::Verifying) {
            on_sink_finished(transfer);
        }
    }
}

void Engine::start_ready() {
    budget_refused = false;
    start_ready_transfers();
    if (budget_client && !budget_refused) {
        budget_client.stop_waiting();  // nothing (more) to start: hold no one back
    }
}

void Engine::start_ready_transfers() {
    if (stopping) {
        return;
    }
    const auto now = Clock::now();
    // Retries whose wait is over go first, then new files. A refusal of the budget ends
    // the pass: the loop is woken when a token is released.
    for (std::size_t position = 0;
         position < retry_wait.size() && running < options.max_parallel;) {
        Transfer& transfer = *transfers[retry_wait[position]];
        if (transfer.not_before > now) {
            ++position;
            continue;
        }
        const std::size_t index = retry_wait[position];
        retry_wait.erase(retry_wait.begin() + static_cast<std::ptrdiff_t>(position));
        if (!try_start(transfer)) {
            retry_wait.insert(retry_wait.begin() + static_cast<std::ptrdiff_t>(position), index);
            return;
        }
    }
    while (!queue.empty() && running < options.max_parallel && !stopping) {
        Transfer& transfer = *transfers[queue.front()];
        queue.pop_front();
        if (!try_start(transfer)) {
            queue.push_front(transfer.index);
            return;
        }
        if (fail_fast_triggered) {
            break;
        }
    }
}

void Engine::report_progress(bool force) {
    if (progress == nullptr) {
        return;
    }
    const auto now = Clock::now();
    if (!force && now - last_progress < std::chrono::milliseconds(100)) {
        return;
    }
    last_progress = now;
    std::uint64_t done = bytes_finished;
    for (const auto& transfer : transfers) {
        if (transfer->state == TransferState::Running ||
            transfer->state == TransferState::Verifying) {
            done += transfer->accepted;
        }
    }
    progress->progress(done, bytes_total);
}

int Engine::poll_timeout_ms() {
    auto timeout = std::chrono::milliseconds(progress != nullptr ? 100 : 1000);
    const auto now = Clock::now();
    if (!stopping && running < options.max_parallel) {
        for (std::size_t index : retry_wait) {
            if (budget_refused && transfers[index]->not_before <= now) {
                continue;  // ready, but waits for a token: woken when one is released
            }
            const auto wait =
                std::chrono::ceil<std::chrono::milliseconds>(transfers[index]->not_before - now);
            timeout = std::min(timeout, std::max(wait, std::chrono::milliseconds(0)));
        }
    }
    if (!paused.empty() && options.throttle > 0) {
        refill_tokens();
        if (tokens > 0) {
            resume_paused(false, 0);
        } else {
            const auto wait = std::chrono::milliseconds(
                static_cast<std::int64_t>(
                    std::ceil(-tokens * 1000.0 / static_cast<double>(options.throttle))) +
                1);
            timeout = std::min(timeout, wait);
        }
    }
    return static_cast<int>(timeout.count());
}

void Engine::loop() {
    for (;;) {
        if (!stopping && (stop.stop_requested() || fail_fast_triggered)) {
            report.interrupted = stop.stop_requested();
            stop_everything();
        }
        drain_completions();
        start_ready();
        int still_running = 0;
        curl_multi_perform(multi, &still_running);
        drain_curl_messages();
        drain_completions();
        start_ready();
        report_progress(false);
        const bool idle =
            running == 0 && verifying == 0 && (stopping || (queue.empty() && retry_wait.empty()));
        if (idle) {
            break;
        }
        curl_multi_poll(multi, nullptr, 0, poll_timeout_ms(), nullptr);
    }
    report_progress(true);
}

}  // namespace rpmirror::download
