// Compression into a file, the writing side of index/decompress.cpp: CompressedWriter
// compresses what it is given as gzip, xz, zstd or bzip2 (or copies it), writes it to a file
// descriptor and hashes the compressed bytes as they are written (private).
//
// This header does not include the codecs' headers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "checksum/hasher.hpp"
#include "index/index.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "rpmirror/util/error.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror {

// Writes to `fd` (shown as `shown` in errors) the bytes given to write(), compressed with
// `compression` at a fast level, and hashes what it writes with `type`. Not thread-safe.
class CompressedWriter {
  public:
    CompressedWriter(Compression compression, UniqueFd fd, std::string shown, ChecksumType type);
    CompressedWriter(const CompressedWriter&) = delete;
    CompressedWriter& operator=(const CompressedWriter&) = delete;
    ~CompressedWriter();

    // Starts the encoder. Returns Error{Io} iff it cannot start, or for zchunk (which cannot be
    // written).
    Result<void> start();

    // Compresses and writes `data`; finish() ends the stream. Return Error{Io} iff compressing or
    // writing fails.
    Result<void> write(std::string_view data) { return code(data, false); }
    Result<void> finish() { return code({}, true); }

    // The checksum of the compressed bytes and their count (after finish()).
    std::string checksum() { return hasher_.finish(); }
    std::uint64_t size() const { return written_; }

    // One format's codec state (compress.cpp).
    class Encoder;

  private:
    tl::unexpected<Error> codec_error(std::string what) const;
    Result<void> emit(const char* data, std::size_t size);
    Result<void> code(std::string_view data, bool end);

    Compression compression_;
    UniqueFd fd_;
    std::string shown_;
    Hasher hasher_;
    std::uint64_t written_ = 0;
    std::unique_ptr<Encoder> encoder_;  // null for Compression::None (and before start())
};

}  // namespace rpmirror
