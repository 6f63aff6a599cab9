// The progress sinks a sync's package downloads report to (see sync/events.hpp).
#include "sync/events.hpp"

#include <utility>

namespace rpmirror {

void ForwardingSink::run_started(std::size_t files, std::uint64_t bytes) {
    if (inner_ != nullptr) {
        inner_->run_started(files, bytes);
    }
}

void ForwardingSink::file_started(std::size_t request_index, std::string_view url) {
    if (inner_ != nullptr) {
        inner_->file_started(request_index, url);
    }
}

void ForwardingSink::progress(std::uint64_t bytes_done, std::uint64_t bytes_total) {
    if (inner_ != nullptr) {
        inner_->progress(bytes_done, bytes_total);
    }
}

void ForwardingSink::file_finished(std::size_t request_index, const FileResult& result) {
    if (inner_ != nullptr) {
        inner_->file_finished(request_index, result);
    }
}

PackageEventRelay::PackageEventRelay(ProgressSink* inner, SyncEvents& events,
                                     std::vector<std::string> file_names, std::size_t total,
                                     std::size_t& done)
    : ForwardingSink(inner),
      events_(events),
      file_names_(std::move(file_names)),
      started_(file_names_.size()),
      total_(total),
      done_(done) {}

void PackageEventRelay::file_started(std::size_t request_index, std::string_view url) {
    ForwardingSink::file_started(request_index, url);
    if (!started_[request_index]) {
        started_[request_index] = std::chrono::steady_clock::now();
    }
}

void PackageEventRelay::file_finished(std::size_t request_index, const FileResult& result) {
    ForwardingSink::file_finished(request_index, result);
    PackageEvent event;
    event.file_name = file_names_[request_index];
    event.total = total_;
    for (const DownloadAttempt& attempt : result.attempts) {
        if (attempt.outcome == "ok") {
            continue;
        }
        PackageEvent failed = event;
        failed.kind = PackageEvent::Kind::MirrorFailed;
        failed.url = attempt.url;
        failed.http_status = attempt.http_status;
        failed.reason = attempt.outcome;
        events_.package(failed);
    }
    if (result.status == FileStatus::Failed) {
        event.kind = PackageEvent::Kind::Failed;
        event.reason = result.error ? result.error->to_string() : "failed";
        event.mirrors_exhausted =
            !result.attempts.empty() && (!result.error || result.error->code != ErrorCode::Io);
    } else if (result.status == FileStatus::Downloaded ||
               result.status == FileStatus::AlreadyPresent) {
        event.kind = PackageEvent::Kind::Downloaded;
        event.bytes = result.bytes_received;
        if (started_[request_index]) {
            event.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                                          *started_[request_index])
                                .count();
        }
        event.done = ++done_;
    } else {
        return;  // interrupted: nothing to tell
    }
    events_.package(event);
}

CommitOnFinish::CommitOnFinish(ProgressSink* inner, std::function<void(std::size_t)> commit)
    : ForwardingSink(inner), commit_(std::move(commit)) {}

void CommitOnFinish::file_finished(std::size_t request_index, const FileResult& result) {
    if (result.status == FileStatus::Downloaded || result.status == FileStatus::AlreadyPresent) {
        commit_(request_index);
    }
    ForwardingSink::file_finished(request_index, result);
}

}  // namespace rpmirror
