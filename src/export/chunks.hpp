// A bundle's chunk files: the carried files' bytes laid end to end and cut at the chunk size
// (ChunkWriter), read back by range (extract_file) and checked whole (check_chunk).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "checksum/hasher.hpp"
#include "export/manifest.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "rpmirror/util/error.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror::bundle {

// Writes chunk-000000, chunk-000001, ... into a directory, each at most `chunk_size` bytes.
// Not thread-safe.
class ChunkWriter {
  public:
    ChunkWriter(std::filesystem::path dir, std::uint64_t chunk_size);

    // Appends the content of the local file `path` (`shown` in errors), which must be `size`
    // bytes, and with SHA-256 `sha256` when given (Error{Corrupt} naming it otherwise: it changed
    // since it was listed or hashed). Returns where it starts and its SHA-256.
    Result<std::pair<Placement, std::string>> append(const std::filesystem::path& path,
                                                     std::uint64_t size,
                                                     const std::optional<std::string>& sha256,
                                                     const std::string& shown);

    // As append, the file as the whole of a chunk of its own, `name` (a relative path beneath the
    // directory; its parent directories are made): the chunk before it is closed, and no size
    // limit applies. For syncable bundles (Layout::Trees).
    Result<std::pair<Placement, std::string>> append_whole(const std::string& name,
                                                           const std::filesystem::path& path,
                                                           std::uint64_t size,
                                                           const std::optional<std::string>& sha256,
                                                           const std::string& shown);

    // Closes the last chunk (flushed) and returns every chunk written.
    Result<std::vector<Chunk>> finish();

  private:
    Result<void> open_next();
    Result<void> open_named(std::string name);
    Result<void> close_current();
    Result<std::string> copy_in(const std::filesystem::path& path, std::uint64_t size,
                                const std::optional<std::string>& sha256, const std::string& shown,
                                bool cut);

    std::filesystem::path dir_;
    std::uint64_t chunk_size_;
    std::vector<Chunk> chunks_;
    UniqueFd current_;
    std::uint64_t written_ = 0;  // into the current chunk
    Hasher chunk_hash_{ChecksumType::Sha256};
};

// Writes the carried file `file` of a bundle in `bundle_dir` (chunks `chunks`) to the local file
// `out` (created or truncated), checking its size and SHA-256 as it is written. Error{Corrupt}
// naming the chunk iff it is short or the content is not the manifest's; Error{Io} naming the
// file that could not be read or written.
Result<void> extract_file(const std::filesystem::path& bundle_dir, const std::vector<Chunk>& chunks,
                          const BundleFile& file, const std::filesystem::path& out);

// Checks that the chunk `chunk` of the bundle in `bundle_dir` is there with its size and SHA-256.
// Error{NotFound} naming it iff missing; Error{Corrupt} naming it, with both sizes or digests,
// iff it is not the manifest's.
Result<void> check_chunk(const std::filesystem::path& bundle_dir, const Chunk& chunk);

}  // namespace rpmirror::bundle
