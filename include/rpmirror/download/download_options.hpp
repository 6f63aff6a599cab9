// How far a download has come (TransferProgress), as a library user sees it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace rpmirror {

// What a sync (or a job) has downloaded so far, of what its downloader runs announced
// (ProgressSink::run_started): what a progress bar shows.
struct TransferProgress {
    std::uint64_t bytes_done = 0;   // bytes of finished files plus those received by running ones
    std::uint64_t bytes_total = 0;  // expected sizes of every file announced so far
    std::size_t files_done = 0;     // files that reached their final status
    std::size_t files_total = 0;    // files announced so far
};

}  // namespace rpmirror
