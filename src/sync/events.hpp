// The progress sinks a sync's package downloads report to: PackageEventRelay (SyncEvents, for
// every destination) and S3UploadOnFinish (an s3:// destination's uploads), both forwarding to
// the caller's sink (ForwardingSink).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/download/download.hpp"
#include "rpmirror/sync/sync.hpp"
#include "sync/s3_sync.hpp"

namespace rpmirror {

// Forwards download progress to `inner` (none: nothing); the sinks below add to it.
class ForwardingSink : public ProgressSink {
  public:
    explicit ForwardingSink(ProgressSink* inner) : inner_(inner) {}

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

// An s3:// destination: hands each package of a batch to the upload pool as soon as the
// downloader finished it, and tells `inner` everything.
class S3UploadOnFinish final : public ForwardingSink {
  public:
    S3UploadOnFinish(ProgressSink* inner, S3Destination& destination,
                     const std::vector<std::size_t>& items);

    void file_finished(std::size_t request_index, const FileResult& result) override;

  private:
    S3Destination& destination_;
    const std::vector<std::size_t>& items_;
};

}  // namespace rpmirror
