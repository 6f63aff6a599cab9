// The codecs behind Decompressor (private): one per format (gzip, xz, zstd, bzip2), each driven
// through step() and restart(). In codecs.cpp, with the detection of the format.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "index/index.hpp"
#include "rpmirror/util/error.hpp"

namespace rpmirror {

struct StepResult {
    std::size_t consumed = 0;
    std::size_t produced = 0;
    bool stream_end = false;
};

// What a codec reports; Decompressor adds the file name.
struct CodecError {
    ErrorCode code;
    std::string message;
};

class Codec {
  public:
    virtual ~Codec() = default;
    // Decodes from `input` into `output`. Returns the progress made or the decoder's error.
    virtual tl::expected<StepResult, CodecError> step(std::span<const char> input,
                                                      std::span<char> output) = 0;
    // Prepares for the next concatenated stream after step() reported stream_end.
    virtual tl::expected<void, CodecError> restart() = 0;
};

// The codec of `compression`; nullptr for None and Zchunk (read through libzck).
std::unique_ptr<Codec> make_codec(Compression compression);

}  // namespace rpmirror
