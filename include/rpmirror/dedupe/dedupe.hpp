// The link stage, between plan and download: packages a sync is about to download that another
// repository on the same filesystem already holds (same checksum type, digest and size) are
// hard-linked (or reflinked) from there instead of fetched.
//
// Candidates are regular `*.rpm` files of the trees searched (no symlink followed; never the
// repository's own directory, never repodata/ or a staging directory, never another
// filesystem) whose size equals a wanted package's. Their digest comes from the checksum cache
// (rpmirror/checksum/checksum.hpp) when it holds a valid entry, else from hashing them: only a file
// that verifies is linked. Memory is bounded by the wanted set (and the inodes of size-matching
// files), not by the size of the trees searched.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/checksum/checksum.hpp"
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

// One package the sync is about to download.
struct DedupeTarget {
    ChecksumType type = ChecksumType::Sha256;
    std::string digest;                 // hex, any case
    std::uint64_t size = 0;             // kUnknownSize: never linked (nothing to match on)
    std::filesystem::path root;         // the destination root (the repository directory)
    std::filesystem::path destination;  // relative to `root`, as the downloader takes it
};

struct DedupeOptions {
    DedupeMode mode = DedupeMode::Hardlink;
    // Trees searched for candidates, in order; a tree that does not exist is skipped, a directory
    // reached twice (overlapping trees) is walked once.
    std::vector<std::filesystem::path> trees;
    // Directories whose immediate subdirectories that are mirrors are searched, in name order,
    // before `trees`: the repositories beside the one synced. A subdirectory (not a symlink) is
    // a mirror iff it holds `repodata/repomd.xml` (a regular file) or `state_dir` holds a sync
    // state for it (sync_state_path in rpmirror/plan/plan.hpp: synced without --download-metadata).
    // Nothing else under them is searched (no snapshots/, no unrelated directories), so a sync
    // into the current directory never walks a home directory.
    std::vector<std::filesystem::path> sibling_parents;
    std::filesystem::path state_dir;  // empty: only repodata/repomd.xml marks a mirror
    // Directories never searched (the repository's own directory and metadata directory), even
    // when inside a tree.
    std::vector<std::filesystem::path> excluded;
    bool use_cache = true;  // trust valid checksum-cache entries of candidates (else hash them)
    std::stop_token stop;   // once requested, nothing more is searched or linked
};

struct DedupeOutcome {
    std::vector<bool> linked;        // per target: true iff its final name now holds the file
    std::size_t linked_count = 0;    // targets linked
    std::uint64_t linked_bytes = 0;  // their sizes: bytes not downloaded
    // Verified candidates that could not be linked (EXDEV, EPERM, EMLINK, FICLONE unsupported,
    // the candidate changed meanwhile): those targets are left to the download.
    std::size_t fallbacks = 0;
    std::size_t hashed = 0;  // candidates hashed because the cache had no valid entry
    // One line per fallback or unreadable tree, naming the file or directory and why (for
    // verbose output); never an error of the sync.
    std::vector<std::string> notes;
};

// Links every target that a verified candidate of `options.trees` matches to
// `<root>/<destination>`: hard link (or FICLONE into the .part name) under a temporary name in
// the destination directory, then rename to the final name, so the final name never holds a
// partial file. Targets without a candidate, and every target when `options.mode` is Off, are
// left alone (linked[i] false). Never fails: what cannot be searched or linked is in `notes`.
// Not thread-safe with a download of the same targets; thread-safe otherwise.
DedupeOutcome dedupe_targets(std::span<const DedupeTarget> targets, const DedupeOptions& options);

}  // namespace rpmirror
