// --dedupe's modes and what it reports: a package a sync is about to download that a repository
// beside it already holds (the same checksum type, digest and size) is copied inside the store
// instead (a hard link or a reflink on disk, a server-side copy in a bucket). doc/dedupe.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/util/error.hpp"

namespace rpmirror {

enum class DedupeMode {
    Off,       // download everything (--dedupe=off)
    Hardlink,  // link(2) the verified file: one inode shared by the repositories (the default)
    Reflink,   // FICLONE it into a new inode sharing the extents (btrfs, XFS with reflink=1)
};

// Returns "off", "hardlink" or "reflink".
std::string_view dedupe_mode_name(DedupeMode mode);

// Parses "off", "hardlink" or "reflink". Returns Error{BadInput} naming `text` and the accepted
// values iff it is none of them.
Result<DedupeMode> parse_dedupe_mode(std::string_view text);

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
