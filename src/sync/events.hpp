// The progress sinks a sync's package downloads report to: PackageEventRelay (SyncEvents, for
// every destination) and CommitOnFinish (a staging area's commits: a bucket's uploads), both
// forwarding to the caller's sink (ForwardingSink).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "download/download.hpp"
#include "sync/sync.hpp"

namespace rpmirror {

// Forwards download progress to `inner` (none: nothing); the sinks below add to it.
class ForwardingSink : public ProgressSink {
  public:
    explicit ForwardingSink(ProgressSink* inner) : inner_(inner) {}

    void run_started(std::size_t files, std::uint64_t bytes) override;
    void file_started(std::size_t request_index, std::string_view url) override;
    void progress(std::uint64_t bytes_done, std::uint64_t bytes_total) override;
    void file_finished(std::size_t request_index, const FileResult& result) override;

  private:
    ProgressSink* inner_;
};

// Forwards download progress to `inner` and tells `events` how each package ended.
class PackageEventRelay final : public ForwardingSink {
  public:
    PackageEventRelay(ProgressSink* inner, SyncEvents& events, std::vector<std::string> file_names,
                      std::size_t total, std::size_t& done);

    void file_started(std::size_t request_index, std::string_view url) override;
    void file_finished(std::size_t request_index, const FileResult& result) override;

  private:
    SyncEvents& events_;
    std::vector<std::string> file_names_;
    std::vector<std::optional<std::chrono::steady_clock::time_point>> started_;
    std::size_t total_;
    std::size_t& done_;
};

// Hands each file the downloader finished (downloaded, or found complete) to `commit` (its
// request index: a store::Staging's commit), and tells `inner` everything.
class CommitOnFinish final : public ForwardingSink {
  public:
    CommitOnFinish(ProgressSink* inner, std::function<void(std::size_t request_index)> commit);

    void file_finished(std::size_t request_index, const FileResult& result) override;

  private:
    std::function<void(std::size_t)> commit_;
};

}  // namespace rpmirror
