// Compression into a file (CompressedWriter, index/compress.hpp): one small RAII encoder per
// format over zlib, liblzma, libzstd and libbz2, the twins of decompress.cpp's decoders. Each
// takes its input, then step() compresses some of it into an output buffer; CompressedWriter
// drives the steps, writes the output and hashes it.
#include "index/compress.hpp"

#include <bzlib.h>
#include <lzma.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <span>
#include <thread>
#include <utility>

#include <fmt/format.h>

namespace rpmirror {

class CompressedWriter::Encoder {
  public:
    // What one step did: the bytes it wrote into its output buffer, and whether the write or
    // finish is done (all the input taken with room to spare in the buffer, or, when ending,
    // the stream ended).
    struct Step {
        std::size_t produced = 0;
        bool done = false;
    };

    Encoder() = default;
    Encoder(const Encoder&) = delete;  // each owns a codec's state
    Encoder& operator=(const Encoder&) = delete;
    virtual ~Encoder() = default;
    // Takes the input the next steps compress.
    virtual void input(std::string_view data) = 0;
    // Compresses some input into `out`, ending the stream iff `end`. Returns the progress made
    // or the message of the encoder's error.
    virtual tl::expected<Step, std::string> step(std::span<char> out, bool end) = 0;
};

namespace {

using Step = CompressedWriter::Encoder::Step;

// Compression levels: fast ones, so that rewriting stays within twice the time of reading
// (gzip -6 runs at ~35 MB/s, -1 at ~60 MB/s and 25 % larger; xz -6 at ~1 MB/s, -1 at ~12 MB/s
// per thread). zstd's default is fast already; bzip2 (rare in repositories) keeps its default.
constexpr int kGzipLevel = 1;
constexpr std::uint32_t kXzPreset = 1;
constexpr std::uint32_t kXzMaxThreads = 4;  // each holds a 3 MiB block and its encoder

const lzma_mt& xz_options() {
    static const lzma_mt options = [] {
        lzma_mt mt{};
        mt.threads = std::clamp(std::thread::hardware_concurrency(), 1U, kXzMaxThreads);
        mt.preset = kXzPreset;
        mt.check = LZMA_CHECK_CRC64;
        return mt;
    }();
    return options;
}

// --- gzip (zlib) -----------------------------------------------------------------------------

class GzipEncoder final : public CompressedWriter::Encoder {
  public:
    ~GzipEncoder() override {
        if (ready_) {
            deflateEnd(&stream_);
        }
    }

    bool start() {
        ready_ = deflateInit2(&stream_, kGzipLevel, Z_DEFLATED, 16 + MAX_WBITS, 8,
                              Z_DEFAULT_STRATEGY) == Z_OK;
        return ready_;
    }

    void input(std::string_view data) override {
        stream_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
        stream_.avail_in = static_cast<uInt>(data.size());
    }

    tl::expected<Step, std::string> step(std::span<char> out, bool end) override {
        stream_.next_out = reinterpret_cast<Bytef*>(out.data());
        stream_.avail_out = static_cast<uInt>(out.size());
        const int status = deflate(&stream_, end ? Z_FINISH : Z_NO_FLUSH);
        if (status == Z_STREAM_ERROR) {
            return tl::unexpected(std::string("gzip compression failed"));
        }
        return Step{out.size() - stream_.avail_out,
                    end ? status == Z_STREAM_END : stream_.avail_in == 0 && stream_.avail_out != 0};
    }

  private:
    z_stream stream_{};
    bool ready_ = false;
};

// --- xz (liblzma) ----------------------------------------------------------------------------

class XzEncoder final : public CompressedWriter::Encoder {
  public:
    ~XzEncoder() override {
        if (ready_) {
            lzma_end(&stream_);
        }
    }

    bool start() {
        ready_ = lzma_stream_encoder_mt(&stream_, &xz_options()) == LZMA_OK;
        return ready_;
    }

    void input(std::string_view data) override {
        stream_.next_in = reinterpret_cast<const std::uint8_t*>(data.data());
        stream_.avail_in = data.size();
    }

    tl::expected<Step, std::string> step(std::span<char> out, bool end) override {
        stream_.next_out = reinterpret_cast<std::uint8_t*>(out.data());
        stream_.avail_out = out.size();
        const lzma_ret status = lzma_code(&stream_, end ? LZMA_FINISH : LZMA_RUN);
        if (status != LZMA_OK && status != LZMA_STREAM_END) {
            return tl::unexpected(
                fmt::format("xz compression failed (liblzma error {})", int(status)));
        }
        return Step{
            out.size() - stream_.avail_out,
            end ? status == LZMA_STREAM_END : stream_.avail_in == 0 && stream_.avail_out != 0};
    }

  private:
    lzma_stream stream_ = LZMA_STREAM_INIT;
    bool ready_ = false;
};

// --- zstd --------------------------------------------------------------------------------------

class ZstdEncoder final : public CompressedWriter::Encoder {
  public:
    bool start() {
        context_.reset(ZSTD_createCCtx());
        return context_ != nullptr;
    }

    void input(std::string_view data) override { input_ = {data.data(), data.size(), 0}; }

    tl::expected<Step, std::string> step(std::span<char> out, bool end) override {
        ZSTD_outBuffer output{out.data(), out.size(), 0};
        const std::size_t remaining = ZSTD_compressStream2(context_.get(), &output, &input_,
                                                           end ? ZSTD_e_end : ZSTD_e_continue);
        if (ZSTD_isError(remaining) != 0) {
            return tl::unexpected(std::string("zstd compression failed: ") +
                                  ZSTD_getErrorName(remaining));
        }
        return Step{output.pos,
                    end ? remaining == 0 : input_.pos == input_.size && output.pos < output.size};
    }

  private:
    struct Deleter {
        void operator()(ZSTD_CCtx* context) const { ZSTD_freeCCtx(context); }
    };
    std::unique_ptr<ZSTD_CCtx, Deleter> context_;
    ZSTD_inBuffer input_{};
};

// --- bzip2 ---------------------------------------------------------------------------------------

class Bzip2Encoder final : public CompressedWriter::Encoder {
  public:
    ~Bzip2Encoder() override {
        if (ready_) {
            BZ2_bzCompressEnd(&stream_);
        }
    }

    bool start() {
        ready_ = BZ2_bzCompressInit(&stream_, 9, 0, 0) == BZ_OK;
        return ready_;
    }

    void input(std::string_view data) override {
        stream_.next_in = const_cast<char*>(data.data());
        stream_.avail_in = static_cast<unsigned>(data.size());
    }

    tl::expected<Step, std::string> step(std::span<char> out, bool end) override {
        stream_.next_out = out.data();
        stream_.avail_out = static_cast<unsigned>(out.size());
        const int status = BZ2_bzCompress(&stream_, end ? BZ_FINISH : BZ_RUN);
        if (status < 0) {
            return tl::unexpected(fmt::format("bzip2 compression failed (error {})", status));
        }
        return Step{
            out.size() - stream_.avail_out,
            end ? status == BZ_STREAM_END : stream_.avail_in == 0 && stream_.avail_out != 0};
    }

  private:
    bz_stream stream_{};
    bool ready_ = false;
};

// Returns a started encoder of type E, or nullptr iff it cannot start.
template <typename E>
std::unique_ptr<CompressedWriter::Encoder> started() {
    auto encoder = std::make_unique<E>();
    if (!encoder->start()) {
        return nullptr;
    }
    return encoder;
}

}  // namespace

CompressedWriter::CompressedWriter(Compression compression, UniqueFd fd, std::string shown,
                                   ChecksumType type)
    : compression_(compression), fd_(std::move(fd)), shown_(std::move(shown)), hasher_(type) {}

CompressedWriter::~CompressedWriter() = default;

Result<void> CompressedWriter::start() {
    switch (compression_) {
        case Compression::Gzip:
            encoder_ = started<GzipEncoder>();
            break;
        case Compression::Xz:
            encoder_ = started<XzEncoder>();
            break;
        case Compression::Bzip2:
            encoder_ = started<Bzip2Encoder>();
            break;
        case Compression::Zstd:
            encoder_ = started<ZstdEncoder>();
            break;
        case Compression::None:
            return {};
        case Compression::Zchunk:
            return codec_error("zchunk cannot be written");
    }
    if (!encoder_) {
        return codec_error(fmt::format("cannot start {}", compression_name(compression_)));
    }
    return {};
}

tl::unexpected<Error> CompressedWriter::codec_error(std::string what) const {
    return make_error(ErrorCode::Io, std::move(what), shown_);
}

Result<void> CompressedWriter::emit(const char* data, std::size_t size) {
    hasher_.update(data, size);
    written_ += size;
    while (size > 0) {
        const ssize_t n = ::write(fd_.get(), data, size);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return make_errno_error("cannot write", shown_, errno);
        }
        data += n;
        size -= static_cast<std::size_t>(n);
    }
    return {};
}

Result<void> CompressedWriter::code(std::string_view data, bool end) {
    if (compression_ == Compression::None) {
        return emit(data.data(), data.size());
    }
    if (!encoder_) {  // zchunk: start() refused it
        return codec_error("zchunk cannot be written");
    }
    encoder_->input(data);
    std::array<char, 1 << 16> out{};
    while (true) {
        auto stepped = encoder_->step(out, end);
        if (!stepped) {
            return codec_error(std::move(stepped.error()));
        }
        if (auto emitted = emit(out.data(), stepped->produced); !emitted) {
            return emitted;
        }
        if (stepped->done) {
            return {};
        }
    }
}

}  // namespace rpmirror
