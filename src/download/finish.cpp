// The Engine's ends of a file: what its sink's verification found, done, failed (and the
// fail-fast it may trigger), interrupted (its .part kept), and the stop of everything.
#include "download/engine.hpp"

#include <cerrno>
#include <string>

#include "checksum/hasher.hpp"
#include "fs/beneath.hpp"

namespace rpmirror::download {

void Engine::finish_failed(Transfer& transfer, Error error) {
    if (transfer.owner != nullptr) {  // a range's failure is its file's
        Transfer& file = *transfer.owner;
        cancel_ranges(file, false);
        finish_failed(file, std::move(error));
        return;
    }
    if (transfer.state == TransferState::Segmented) {
        cancel_ranges(transfer, false);
    }
    if (transfer.sink) {
        transfer.sink->close();
        if (transfer.accepted == 0 && transfer.dir_fd >= 0) {
            fs::unlink_at(transfer.dir_fd, transfer.part_name);
        }
    }
    set_state(transfer, TransferState::Failed);
    transfer.result.status = FileStatus::Failed;
    transfer.result.error = std::move(error);
    ++report.failed;
    // A full disk, an exhausted quota or a read-only filesystem would fail every later file
    // the same way: start no more transfers (running ones keep their .part files).
    const int local_errno =
        transfer.result.error->code == ErrorCode::Io ? transfer.result.error->sys_errno : 0;
    if (options.fail_fast || local_errno == ENOSPC || local_errno == EDQUOT ||
        local_errno == EROFS) {
        fail_fast_triggered = true;
    }
    if (progress != nullptr) {
        progress->file_finished(transfer.index, transfer.result);
    }
}

void Engine::finish_done(Transfer& transfer, FileStatus status) {
    set_state(transfer, TransferState::Done);
    transfer.result.status = status;
    if (status == FileStatus::Downloaded) {
        ++report.downloaded;
        if (!transfer.attempt.base.empty()) {
            transfer.request->mirrors->record_success(transfer.attempt.base);
        }
    } else {
        ++report.already_present;
    }
    bytes_finished += transfer.request->expected_size == kUnknownSize
                          ? transfer.accepted
                          : transfer.request->expected_size;
    if (progress != nullptr) {
        progress->file_finished(transfer.index, transfer.result);
    }
}

void Engine::interrupt(Transfer& transfer) {
    if (transfer.owner != nullptr) {
        if (transfer.attempt.easy) {
            detach(transfer);
            record_attempt(transfer, "interrupted", false);
        }
        set_state(transfer, TransferState::Interrupted);
        return;
    }
    if (transfer.state == TransferState::Segmented) {
        // Keep the bytes before the first gap: a resume continues from there.
        std::uint64_t prefix = 0;
        for (std::size_t index : transfer.ranges) {
            const Transfer& range = *transfers[index];
            prefix = range.range_begin + range.accepted;
            if (range.range_begin + range.accepted < range.range_end) {
                break;
            }
        }
        cancel_ranges(transfer, true);
        transfer.sink->keep_prefix(prefix);
        transfer.accepted = prefix;
    }
    if (transfer.attempt.easy) {
        detach(transfer);
        record_attempt(transfer, "interrupted", false);
    }
    if (transfer.sink) {
        transfer.sink->close();  // the .part is kept for the next run
        if (transfer.accepted == 0 && transfer.dir_fd >= 0) {
            fs::unlink_at(transfer.dir_fd, transfer.part_name);
        }
    }
    set_state(transfer, TransferState::Interrupted);
    transfer.result.status = FileStatus::Interrupted;
    ++report.not_finished;
    if (progress != nullptr) {
        progress->file_finished(transfer.index, transfer.result);
    }
}

void Engine::stop_everything() {
    stopping = true;
    for (auto& transfer : transfers) {
        if (transfer->owner != nullptr) {
            continue;  // a range: ended with its file
        }
        if (transfer->state == TransferState::Running ||
            transfer->state == TransferState::RetryWait ||
            transfer->state == TransferState::Segmented) {
            interrupt(*transfer);
        } else if (transfer->state == TransferState::Queued) {
            set_state(*transfer, TransferState::NotStarted);
            transfer->result.status = FileStatus::NotStarted;
            ++report.not_finished;
        }
    }
    queue.clear();
    retry_wait.clear();
}

void Engine::on_sink_finished(Transfer& transfer) {
    const FinishResult& result = transfer.sink->result();
    const Verification verification = transfer.verification;
    Attempt& attempt = transfer.attempt;
    if (result.local_error) {
        if (verification != Verification::LeftoverPart) {
            record_attempt(transfer, result.local_error->to_string(), false);
        }
        finish_failed(transfer, *result.local_error);
        return;
    }
    if (result.published) {
        if (verification != Verification::LeftoverPart) {
            if (verification == Verification::FileCopy) {
                attempt.bytes = result.size;
            }
            record_attempt(transfer, "ok", false);
        }
        transfer.result.digest = result.digest;
        finish_done(transfer, verification == Verification::LeftoverPart
                                  ? FileStatus::AlreadyPresent
                                  : FileStatus::Downloaded);
        return;
    }
    if (verification == Verification::LeftoverPart) {
        // A leftover .part of the full size but the wrong content: download it anew.
        transfer.sink->restart();
        transfer.accepted = 0;
        if (stopping) {
            interrupt(transfer);
            return;
        }
        set_state(transfer, TransferState::Queued);
        queue.push_front(transfer.index);
        return;
    }
    const bool copied = verification == Verification::FileCopy;
    if (copied) {
        attempt.bytes = result.size;
    }
    std::string mismatch;
    if (result.source_error) {
        mismatch = *result.source_error;
    } else if (transfer.request->expected_size != kUnknownSize &&
               result.size != transfer.request->expected_size) {
        mismatch = "size mismatch: " + std::to_string(result.size) + " bytes, expected " +
                   std::to_string(transfer.request->expected_size);
    } else {
        mismatch = std::string(checksum_type_name(transfer.request->checksum_type)) +
                   " mismatch: expected " + transfer.expected_digest + ", got " + result.digest;
    }
    if (!result.source_error && !attempt.decoding &&
        is_encoded(attempt.response.content_encoding) && !copied) {
        mismatch += " (server sent Content-Encoding: " + attempt.response.content_encoding + ")";
    }
    if (attempt.range_start > 0 && !transfer.restarted_after_mismatch && !copied) {
        // The prefix came from an earlier attempt or run: it may be the culprit.
        transfer.restarted_after_mismatch = true;
        fail_attempt(transfer, mismatch + " after resuming; starting over",
                     FailureKind::RestartSame);
        return;
    }
    if (!result.source_error && !copied && retry_as_sent(transfer, mismatch)) {
        return;
    }
    fail_attempt(transfer, std::move(mismatch), FailureKind::Permanent);
}

}  // namespace rpmirror::download
