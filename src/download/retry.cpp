// The Engine's failed attempts: recorded, the mirror marked, the received bytes kept or dropped,
// and the next attempt scheduled (mirror failover, backoff, Retry-After), or the file given up.
#include "download/engine.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

namespace rpmirror::download {

void Engine::record_attempt(Transfer& transfer, std::string outcome, bool permanent,
                            std::optional<std::chrono::seconds> retry_after) {
    const Attempt& attempt = transfer.attempt;
    if (!attempt.note.empty()) {
        outcome += " (" + attempt.note + ")";
    }
    FileResult& result = file_of(transfer).result;
    result.attempts.push_back(DownloadAttempt{attempt.url, std::move(outcome),
                                              attempt.response.status, attempt.range_start,
                                              attempt.bytes, retry_after, permanent});
    result.bytes_received += attempt.bytes;
    report.bytes_received += attempt.bytes;
}

void Engine::fail_attempt(Transfer& transfer, std::string outcome, FailureKind kind,
                          std::optional<std::chrono::seconds> retry_after) {
    record_attempt(transfer, std::move(outcome), kind == FailureKind::Permanent, retry_after);
    if (kind == FailureKind::Local) {
        finish_failed(transfer, Error{ErrorCode::Io, transfer.result.attempts.back().outcome,
                                      transfer.shown_path, 0});
        return;
    }
    note_mirror_failure(transfer, kind);
    if (transfer.owner != nullptr) {
        if (kind == FailureKind::Permanent || kind == FailureKind::RestartSame) {
            transfer.accepted = 0;  // the range is written again, over what it had
        }
    } else if (kind == FailureKind::Permanent || kind == FailureKind::RestartSame) {
        transfer.sink->restart();
        transfer.accepted = 0;
    }
    if (kind == FailureKind::Transient) {
        ++transfer.transient_failures;
    }
    if (stopping) {
        interrupt(transfer);
        return;
    }
    if (transfer.attempts > options.retries) {
        finish_failed(transfer, exhausted_error(transfer, false));
        return;
    }
    const std::optional<MirrorChoice> next =
        choose_next_mirror(transfer.attempt.base.empty() ? std::vector<std::string>{}
                                                         : transfer.request->mirrors->order(),
                           transfer.marks, transfer.attempt.base, kind);
    if (!next) {
        finish_failed(transfer, exhausted_error(transfer, true));
        return;
    }
    if (next->base_url != transfer.attempt.base) {
        // A property of the mirror that failed (a file without a digest: always as sent).
        transfer.store_as_sent = transfer.expected_digest.empty();
    }
    transfer.next_base = next->base_url;
    schedule_retry(transfer, next->after_backoff ? backoff(transfer, retry_after)
                                                 : std::chrono::milliseconds(0));
}

bool Engine::retry_as_sent(Transfer& transfer, const std::string& outcome) {
    const Attempt& attempt = transfer.attempt;
    if (!attempt.decoding || !is_encoded(attempt.response.content_encoding) ||
        transfer.store_as_sent) {
        return false;
    }
    transfer.store_as_sent = true;
    fail_attempt(transfer,
                 outcome + " (decoded from Content-Encoding: " + attempt.response.content_encoding +
                     "); fetching it again, stored as sent",
                 FailureKind::RestartSame);
    return true;
}

void Engine::note_mirror_failure(Transfer& transfer, FailureKind kind) {
    const std::string& base = transfer.attempt.base;
    if (base.empty()) {
        return;
    }
    if (kind != FailureKind::RestartSame) {
        transfer.request->mirrors->record_failure(base);
    }
    mark_failure(transfer.marks, base, kind);
}

void Engine::schedule_retry(Transfer& transfer, std::chrono::milliseconds delay) {
    set_state(transfer, TransferState::RetryWait);
    transfer.not_before = Clock::now() + delay;
    retry_wait.push_back(transfer.index);
}

std::chrono::milliseconds Engine::backoff(const Transfer& transfer,
                                          std::optional<std::chrono::seconds> retry_after) {
    if (retry_after) {
        return std::min<std::chrono::milliseconds>(*retry_after, options.max_retry_after);
    }
    const unsigned exponent = std::min(transfer.transient_failures, 20U) - 1;
    const double full =
        std::min(static_cast<double>(options.retry_base_delay.count()) * std::pow(2.0, exponent),
                 static_cast<double>(options.max_retry_delay.count()));
    std::uniform_real_distribution<double> jitter(0.5, 1.0);
    return std::chrono::milliseconds(static_cast<std::int64_t>(full * jitter(random)));
}

Error Engine::exhausted_error(const Transfer& transfer, bool all_mirrors) {
    std::string message;
    if (all_mirrors) {
        const std::size_t mirrors =
            is_absolute_url(transfer.request->href) ? 1 : transfer.request->mirrors->size();
        message = mirrors == 1 ? "the only mirror failed: "
                               : "all " + std::to_string(mirrors) + " mirrors failed: ";
    } else {
        message = "gave up after " + std::to_string(transfer.attempts) + " attempts: ";
    }
    bool first = true;
    ErrorCode code = ErrorCode::Network;
    const FileResult& result = (transfer.owner != nullptr ? *transfer.owner : transfer).result;
    for (const auto& attempt : result.attempts) {
        message += (first ? "" : "; ") + attempt.url + ": " + attempt.outcome;
        first = false;
    }
    if (!result.attempts.empty() &&
        result.attempts.back().outcome.find("mismatch") != std::string::npos) {
        code = ErrorCode::Corrupt;
    }
    return Error{code, std::move(message), transfer.shown_path, 0};
}

}  // namespace rpmirror::download
