// The Engine's segmented downloads (DownloadOptions::connections_per_file): a file split into
// ranges fetched as transfers of their own, cancelled, or given up for one connection.
#include "download/engine.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "checksum/hasher.hpp"
#include "metadata/metadata.hpp"

namespace rpmirror::download {

std::vector<std::string> Engine::segment_mirrors(const Transfer& file) const {
    const DownloadRequest& request = *file.request;
    if (options.connections_per_file < 2 || file.one_connection || file.attempts > 0 ||
        file.owner != nullptr || file.store_as_sent || file.accepted != 0 ||
        request.expected_size == kUnknownSize || request.expected_size < options.segment_min_size ||
        request.expected_size < 2 * kMinRangeBytes) {
        return {};
    }
    std::vector<std::string> bases =
        is_absolute_url(request.href) ? std::vector<std::string>{""} : request.mirrors->order();
    for (const std::string& base : bases) {
        if (!is_http_url(attempt_url(file, base))) {
            return {};  // a file:// mirror is copied, an ftp:// one fetched whole
        }
    }
    return bases;
}

void Engine::begin_segments(Transfer& file, const std::vector<std::string>& bases) {
    const std::uint64_t size = file.request->expected_size;
    const std::uint64_t count =
        std::min<std::uint64_t>(options.connections_per_file, size / kMinRangeBytes);
    file.one_connection = true;  // whatever happens to this try, the next one is whole
    file.attempt = Attempt{};
    file.attempt.base = bases.front();
    file.attempt.url = attempt_url(file, file.attempt.base);
    file.attempt.note = std::to_string(count) + " ranges over " +
                        std::to_string(std::min<std::uint64_t>(count, bases.size())) +
                        " mirror(s), verified as one file";
    ++file.attempts;
    file.result.segments = static_cast<unsigned>(count);
    file.ranges.clear();
    for (std::uint64_t part = 0; part < count; ++part) {
        auto range = std::make_unique<Transfer>();
        range->index = transfers.size();
        range->request = file.request;
        range->expected_digest = file.expected_digest;
        range->shown_path = file.shown_path;
        range->engine = this;
        range->owner = &file;
        range->range_begin = size * part / count;
        range->range_end = size * (part + 1) / count;
        range->next_base = bases[part % bases.size()];
        file.ranges.push_back(range->index);
        transfers.push_back(std::move(range));
    }
    file.ranges_left = file.ranges.size();
    set_state(file, TransferState::Segmented);
    for (auto index = file.ranges.rbegin(); index != file.ranges.rend(); ++index) {
        queue.push_front(*index);
    }
}

void Engine::cancel_ranges(Transfer& file, bool record) {
    for (std::size_t index : file.ranges) {
        Transfer& range = *transfers[index];
        if (range.state == TransferState::Running) {
            if (range.attempt.easy) {
                detach(range);
                if (record) {
                    record_attempt(range, "interrupted", false);
                }
            }
            set_state(range, TransferState::Interrupted);
        } else if (range.state == TransferState::RetryWait) {
            std::erase(retry_wait, index);
            set_state(range, TransferState::Interrupted);
        } else if (range.state == TransferState::Queued) {
            std::erase(queue, index);
            set_state(range, TransferState::NotStarted);
        }
    }
    file.ranges_left = 0;
}

void Engine::fall_back_to_one_connection(Transfer& range, const std::string& why) {
    Transfer& file = *range.owner;
    record_attempt(range, why + "; falling back to one connection", false);
    cancel_ranges(file, false);
    file.ranges.clear();
    file.sink->restart();
    file.accepted = 0;
    if (stopping) {
        interrupt(file);
        return;
    }
    set_state(file, TransferState::Queued);
    queue.push_front(file.index);
}

void Engine::range_done(Transfer& range, std::optional<std::int64_t> remote_time) {
    Transfer& file = *range.owner;
    record_attempt(range, "ok", false);
    if (!range.attempt.base.empty()) {
        range.request->mirrors->record_success(range.attempt.base);
    }
    if (remote_time) {
        file.remote_time = remote_time;
    }
    set_state(range, TransferState::Done);
    if (--file.ranges_left > 0) {
        return;
    }
    file.accepted = file.request->expected_size;
    begin_verification(file, Verification::Download);
    file.sink->hash_file();
    file.sink->finish(file.remote_time);
}

}  // namespace rpmirror::download
