// Decompression formats: detection by magic bytes, and the codecs over zlib, liblzma, libzstd and
// libbz2 that Decompressor (decompress.cpp) drives.
#include <bzlib.h>
#include <lzma.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "index/codecs.hpp"
#include "index/index.hpp"

namespace rpmirror {
namespace {

// xz and zstd allocate their window from the stream header; refuse windows above this.
constexpr std::uint64_t kCodecMemoryLimit = 256 * 1024 * 1024;

tl::unexpected<CodecError> codec_error(ErrorCode code, std::string message) {
    return tl::unexpected(CodecError{code, std::move(message)});
}

// --- gzip (zlib) -----------------------------------------------------------------------------

class GzipCodec final : public Codec {
  public:
    GzipCodec() {
        stream_ = {};
        // 16 + MAX_WBITS: gzip wrapper only (the magic already said gzip).
        if (inflateInit2(&stream_, 16 + MAX_WBITS) != Z_OK) {
            throw std::bad_alloc();
        }
    }
    GzipCodec(const GzipCodec&) = delete;
    GzipCodec& operator=(const GzipCodec&) = delete;
    ~GzipCodec() override { inflateEnd(&stream_); }

    tl::expected<StepResult, CodecError> step(std::span<const char> input,
                                              std::span<char> output) override {
        stream_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data()));
        stream_.avail_in = static_cast<uInt>(std::min<std::size_t>(input.size(), UINT_MAX));
        stream_.next_out = reinterpret_cast<Bytef*>(output.data());
        stream_.avail_out = static_cast<uInt>(std::min<std::size_t>(output.size(), UINT_MAX));
        const uInt avail_in_before = stream_.avail_in;
        const uInt avail_out_before = stream_.avail_out;
        const int status = inflate(&stream_, Z_NO_FLUSH);
        StepResult result{avail_in_before - stream_.avail_in, avail_out_before - stream_.avail_out,
                          status == Z_STREAM_END};
        if (status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR) {
            return result;
        }
        if (status == Z_MEM_ERROR) {
            return codec_error(ErrorCode::Io, "gzip: out of memory");
        }
        return codec_error(ErrorCode::Corrupt,
                           fmt::format("invalid gzip data: {}",
                                       stream_.msg != nullptr ? stream_.msg : "inflate failed"));
    }

    tl::expected<void, CodecError> restart() override {
        if (inflateReset(&stream_) != Z_OK) {
            return codec_error(ErrorCode::Corrupt, "gzip: cannot reset the inflater");
        }
        return {};
    }

  private:
    z_stream stream_;
};

// --- xz (liblzma) ----------------------------------------------------------------------------

class XzCodec final : public Codec {
  public:
    XzCodec() { init(); }
    XzCodec(const XzCodec&) = delete;
    XzCodec& operator=(const XzCodec&) = delete;
    ~XzCodec() override { lzma_end(&stream_); }

    tl::expected<StepResult, CodecError> step(std::span<const char> input,
                                              std::span<char> output) override {
        stream_.next_in = reinterpret_cast<const std::uint8_t*>(input.data());
        stream_.avail_in = input.size();
        stream_.next_out = reinterpret_cast<std::uint8_t*>(output.data());
        stream_.avail_out = output.size();
        const lzma_ret status = lzma_code(&stream_, LZMA_RUN);
        StepResult result{input.size() - stream_.avail_in, output.size() - stream_.avail_out,
                          status == LZMA_STREAM_END};
        switch (status) {
            case LZMA_OK:
            case LZMA_STREAM_END:
            case LZMA_BUF_ERROR:
                return result;
            case LZMA_MEM_ERROR:
                return codec_error(ErrorCode::Io, "xz: out of memory");
            case LZMA_MEMLIMIT_ERROR:
                return codec_error(ErrorCode::Unsafe,
                                   fmt::format("xz stream needs more than {} MiB of memory",
                                               kCodecMemoryLimit >> 20));
            case LZMA_FORMAT_ERROR:
                return codec_error(ErrorCode::Corrupt, "invalid xz data: not an xz stream");
            case LZMA_OPTIONS_ERROR:
                return codec_error(ErrorCode::Corrupt, "invalid xz data: unsupported options");
            default:
                return codec_error(
                    ErrorCode::Corrupt,
                    fmt::format("invalid xz data (liblzma error {})", static_cast<int>(status)));
        }
    }

    tl::expected<void, CodecError> restart() override {
        lzma_end(&stream_);
        init();
        return {};
    }

  private:
    void init() {
        stream_ = LZMA_STREAM_INIT;
        if (lzma_stream_decoder(&stream_, kCodecMemoryLimit, 0) != LZMA_OK) {
            throw std::bad_alloc();
        }
    }
    lzma_stream stream_;
};

// --- zstd --------------------------------------------------------------------------------------

class ZstdCodec final : public Codec {
  public:
    ZstdCodec() : context_(ZSTD_createDCtx()) {
        if (context_ == nullptr) {
            throw std::bad_alloc();
        }
        // 2^27 = 128 MiB, zstd's default maximum window; stated for clarity.
        ZSTD_DCtx_setParameter(context_.get(), ZSTD_d_windowLogMax, 27);
    }

    tl::expected<StepResult, CodecError> step(std::span<const char> input,
                                              std::span<char> output) override {
        ZSTD_inBuffer in{input.data(), input.size(), 0};
        ZSTD_outBuffer out{output.data(), output.size(), 0};
        const std::size_t status = ZSTD_decompressStream(context_.get(), &out, &in);
        if (ZSTD_isError(status) != 0U) {
            const ZSTD_ErrorCode code = ZSTD_getErrorCode(status);
            return codec_error(code == ZSTD_error_frameParameter_windowTooLarge
                                   ? ErrorCode::Unsafe
                                   : ErrorCode::Corrupt,
                               fmt::format("invalid zstd data: {}", ZSTD_getErrorName(status)));
        }
        // 0 means a frame was completely decoded and flushed.
        return StepResult{in.pos, out.pos, status == 0};
    }

    // The context starts the next frame by itself.
    tl::expected<void, CodecError> restart() override { return {}; }

  private:
    struct Deleter {
        void operator()(ZSTD_DCtx* context) const { ZSTD_freeDCtx(context); }
    };
    std::unique_ptr<ZSTD_DCtx, Deleter> context_;
};

// --- bzip2 ---------------------------------------------------------------------------------------

class Bzip2Codec final : public Codec {
  public:
    Bzip2Codec() { init(); }
    Bzip2Codec(const Bzip2Codec&) = delete;
    Bzip2Codec& operator=(const Bzip2Codec&) = delete;
    ~Bzip2Codec() override { BZ2_bzDecompressEnd(&stream_); }

    tl::expected<StepResult, CodecError> step(std::span<const char> input,
                                              std::span<char> output) override {
        const unsigned in_size =
            static_cast<unsigned>(std::min<std::size_t>(input.size(), UINT_MAX));
        const unsigned out_size =
            static_cast<unsigned>(std::min<std::size_t>(output.size(), UINT_MAX));
        stream_.next_in = const_cast<char*>(input.data());
        stream_.avail_in = in_size;
        stream_.next_out = output.data();
        stream_.avail_out = out_size;
        const int status = BZ2_bzDecompress(&stream_);
        StepResult result{in_size - stream_.avail_in, out_size - stream_.avail_out,
                          status == BZ_STREAM_END};
        if (status == BZ_OK || status == BZ_STREAM_END) {
            return result;
        }
        if (status == BZ_MEM_ERROR) {
            return codec_error(ErrorCode::Io, "bzip2: out of memory");
        }
        return codec_error(ErrorCode::Corrupt,
                           fmt::format("invalid bzip2 data (libbz2 error {})", status));
    }

    tl::expected<void, CodecError> restart() override {
        BZ2_bzDecompressEnd(&stream_);
        init();
        return {};
    }

  private:
    void init() {
        stream_ = {};
        if (BZ2_bzDecompressInit(&stream_, 0, 0) != BZ_OK) {
            throw std::bad_alloc();
        }
    }
    bz_stream stream_;
};

}  // namespace

std::unique_ptr<Codec> make_codec(Compression compression) {
    switch (compression) {
        case Compression::Gzip:
            return std::make_unique<GzipCodec>();
        case Compression::Xz:
            return std::make_unique<XzCodec>();
        case Compression::Zstd:
            return std::make_unique<ZstdCodec>();
        case Compression::Bzip2:
            return std::make_unique<Bzip2Codec>();
        case Compression::None:
        case Compression::Zchunk:
            break;
    }
    return nullptr;
}

std::string_view compression_name(Compression compression) {
    switch (compression) {
        case Compression::None:
            return "none";
        case Compression::Gzip:
            return "gzip";
        case Compression::Xz:
            return "xz";
        case Compression::Zstd:
            return "zstd";
        case Compression::Bzip2:
            return "bzip2";
        case Compression::Zchunk:
            return "zchunk";
    }
    return "unknown";
}

Compression detect_compression(std::span<const char> head) {
    const auto starts_with = [&](std::string_view magic) {
        return head.size() >= magic.size() &&
               std::memcmp(head.data(), magic.data(), magic.size()) == 0;
    };
    using namespace std::string_view_literals;
    if (starts_with("\x1f\x8b"sv)) {
        return Compression::Gzip;
    }
    if (starts_with("\xfd"
                    "7zXZ\0"sv)) {
        return Compression::Xz;
    }
    if (starts_with("\x28\xb5\x2f\xfd"sv)) {
        return Compression::Zstd;
    }
    if (starts_with("BZh"sv)) {
        return Compression::Bzip2;
    }
    if (starts_with("\0ZCK1"sv)) {
        return Compression::Zchunk;
    }
    return Compression::None;
}

}  // namespace rpmirror
