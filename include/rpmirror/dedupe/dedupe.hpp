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

// Parses "off", "hardlink" or "reflink". Returns Error{BadInput} naming `text` and the accepted
// values iff it is none of them.
Result<DedupeMode> parse_dedupe_mode(std::string_view text);

}  // namespace rpmirror
