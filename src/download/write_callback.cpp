// The Engine's write callback (the hot path: every chunk of every body goes through it), and the
// pausing and resuming of transfers for the bandwidth limit and the worker's lag.
#include "checksum/hasher.hpp"
#include "download/engine.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace rpmirror::download {

std::size_t Engine::on_body(char* data, std::size_t size, std::size_t count, void* user) {
    auto& transfer = *static_cast<Transfer*>(user);
    Attempt& attempt = transfer.attempt;
    const std::size_t length = size * count;
    if (attempt.response.discard_body || length == 0) {
        return length;
    }
    Engine& engine = *transfer.engine;
    PartSink& sink = *file_of(transfer).sink;
    const std::uint64_t most = transfer.request->expected_size == kUnknownSize
                                   ? kMaxUnknownSizeBytes
                                   : expected_bytes(transfer);
    if (transfer.accepted + length > most) {
        attempt.abort = AbortReason::SizeMismatch;
        attempt.abort_message =
            (transfer.request->expected_size == kUnknownSize
                 ? "size unknown, and more than " + std::to_string(most)
                 : "size mismatch: more than the expected " + std::to_string(most)) +
            " bytes (aborted)";
        return 0;
    }
    if (sink.has_failed()) {
        attempt.abort = AbortReason::LocalIo;
        return 0;
    }
    if (engine.options.throttle > 0) {
        engine.refill_tokens();
        if (engine.tokens <= 0) {
            engine.pause(transfer);
            return CURL_WRITEFUNC_PAUSE;
        }
        engine.tokens -= static_cast<double>(length);
    }
    if (sink.should_pause()) {
        engine.pause(transfer);
        return CURL_WRITEFUNC_PAUSE;
    }
    const bool written =
        transfer.owner != nullptr
            ? sink.write_range(transfer.range_begin + transfer.accepted, data, length)
            : sink.write(data, length);
    if (!written) {
        attempt.abort = AbortReason::LocalIo;
        return 0;
    }
    transfer.accepted += length;
    attempt.bytes += length;
    return length;
}

void Engine::pause(Transfer& transfer) {
    if (!transfer.attempt.paused) {
        transfer.attempt.paused = true;
        paused.push_back(transfer.index);
        ++report.throttle_pauses;
    }
}

void Engine::resume_paused(bool only_index, std::size_t index) {
    std::vector<std::size_t> candidates;
    if (only_index) {
        auto found = std::find(paused.begin(), paused.end(), index);
        if (found == paused.end()) {
            return;
        }
        paused.erase(found);
        candidates.push_back(index);
    } else {
        candidates = std::exchange(paused, {});
    }
    for (std::size_t candidate : candidates) {
        Transfer& transfer = *transfers[candidate];
        transfer.attempt.paused = false;
        if (transfer.state == TransferState::Running && transfer.attempt.easy) {
            // May call on_body at once, which may pause it again.
            curl_easy_pause(transfer.attempt.easy.get(), CURLPAUSE_CONT);
        }
    }
}

}  // namespace rpmirror::download
