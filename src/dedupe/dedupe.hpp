// The dedupe stage behind rpmirror/dedupe/dedupe.hpp's DedupeMode.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/dedupe/dedupe.hpp"

namespace rpmirror {

// Returns "off", "hardlink" or "reflink".
std::string_view dedupe_mode_name(DedupeMode mode);

struct DedupeOutcome {
    std::vector<bool> linked;        // per package: true iff its final name now holds the file
    std::size_t linked_count = 0;    // packages linked (or copied inside the store)
    std::uint64_t linked_bytes = 0;  // their sizes: bytes not downloaded
    // Verified candidates that could not be copied (the medium refused: EXDEV, EPERM, EMLINK,
    // FICLONE unsupported; or the candidate changed meanwhile): left to the download.
    std::size_t fallbacks = 0;
    std::size_t hashed = 0;  // candidates hashed because the cache had no valid entry
    // One line per fallback, failed copy or unreadable tree, naming the file or directory and why
    // (for verbose output); never an error of the sync.
    std::vector<std::string> notes;
};

}  // namespace rpmirror
