// The primary metadata of a repository fetched into a directory, decompressed for libsolv.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>

#include "metadata/metadata.hpp"
#include "rpmirror/util/error.hpp"

namespace rpmirror {

// Writes the content of the compressed (or plain) file `in` to `out`: `expected` bytes, when
// known. Returns the reader's error iff `in` cannot be read, Error{Io} iff `out` cannot be
// written. Thread-safe for distinct `out`.
Result<void> write_plain_file(const std::filesystem::path& in,
                              std::optional<std::uint64_t> expected,
                              const std::filesystem::path& out);

// The record `type` that `root`/repodata/repomd.xml lists (its location_href relative to `root`),
// or nullopt iff it lists none. Returns the reader's or parser's error naming the repomd.xml.
Result<std::optional<RepomdRecord>> fetched_record(const std::filesystem::path& root,
                                                   std::string_view type);

// Reads `root`/repodata/repomd.xml, and writes the primary record it lists (which must be in
// place beneath `root`, verified by whoever fetched it) decompressed to `out`, by rpmirror's own
// bounded readers. Returns Error{BadInput} naming the repomd.xml iff it lists no primary or
// cannot be parsed, the reader's error iff the record cannot be read, Error{Io} iff `out` cannot
// be written. Thread-safe for distinct `out`.
Result<void> write_plain_primary(const std::filesystem::path& root,
                                 const std::filesystem::path& out);

// The same for the record `type` ("filelists", ...): returns false (writing nothing) iff
// repomd.xml lists none, true once it is written.
Result<bool> write_plain_record(const std::filesystem::path& root, std::string_view type,
                                const std::filesystem::path& out);

}  // namespace rpmirror
