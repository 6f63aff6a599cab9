// Decompression by content: one streaming reader over zlib, liblzma, libzstd and libbz2.
//
// Each codec is wrapped in a small RAII class with one operation, step(): consume some input,
// produce some output, say whether a stream (gzip member, xz stream, zstd frame, bzip2 stream)
// ended. Decompressor::read() drives it, reads the file through a bounded buffer, concatenates
// streams, caps the output at the size limits before asking the codec for more (so a bomb is
// stopped after at most one buffer beyond the limit is requested, never decoded further), and
// turns "end of file before end of stream" into Error{Corrupt}.
// zchunk is read through libzck instead (zck_read decompresses and verifies one chunk at a time
// from the file descriptor), under the same limits.
#include <bzlib.h>
#include <fcntl.h>
#include <lzma.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "rpmirror/index.hpp"
#include "util/unique_fd.hpp"
#include "util/zck.hpp"

namespace rpmirror {
namespace {

// xz and zstd allocate their window from the stream header; refuse windows above this.
constexpr std::uint64_t kCodecMemoryLimit = 256 * 1024 * 1024;

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

}  // namespace

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

struct Decompressor::State {
    std::string subject;
    DecompressOptions options;
    UniqueFd fd;
    Compression compression = Compression::None;
    std::unique_ptr<Codec> codec;
    ZckCtx zck;  // zchunk only: libzck reads the file itself
    std::vector<char> input;
    std::size_t input_pos = 0;
    std::size_t input_len = 0;
    bool input_eof = false;
    std::vector<char> output;
    std::uint64_t bytes_in = 0;
    std::uint64_t bytes_out = 0;
    // True between the end of one stream and the first byte of the next: the only points at
    // which the end of the file is a clean end.
    bool at_stream_boundary = false;
    bool finished = false;
    std::optional<Error> error;

    Result<void> fill() {
        input_pos = 0;
        input_len = 0;
        while (true) {
            const ssize_t count = ::read(fd.get(), input.data(), input.size());
            if (count < 0) {
                if (errno == EINTR) {
                    continue;
                }
                return make_errno_error("cannot read", subject, errno);
            }
            input_len = static_cast<std::size_t>(count);
            bytes_in += input_len;
            input_eof = count == 0;
            return {};
        }
    }

    // The most output the limits still allow, plus one byte so an overrun is seen.
    std::size_t output_allowance() const {
        std::uint64_t limit = options.ceiling;
        if (options.expected_size && *options.expected_size < limit) {
            limit = *options.expected_size;
        }
        const std::uint64_t remaining = bytes_out > limit ? 0 : limit - bytes_out;
        return static_cast<std::size_t>(std::min<std::uint64_t>(output.size(), remaining + 1));
    }

    Result<void> account(std::size_t produced) {
        bytes_out += produced;
        if (options.expected_size && bytes_out > *options.expected_size) {
            return make_error(ErrorCode::Unsafe,
                              fmt::format("decompresses to more than its open-size of {} bytes "
                                          "(possible decompression bomb); stopped",
                                          *options.expected_size),
                              subject);
        }
        if (bytes_out > options.ceiling) {
            return make_error(ErrorCode::Unsafe,
                              fmt::format("decompresses to more than the {}-byte ceiling "
                                          "(possible decompression bomb); stopped",
                                          options.ceiling),
                              subject);
        }
        return {};
    }

    Result<void> check_end() const {
        if (options.expected_size && bytes_out != *options.expected_size) {
            return make_error(ErrorCode::Corrupt,
                              fmt::format("decompresses to {} bytes, but its open-size is {}",
                                          bytes_out, *options.expected_size),
                              subject);
        }
        return {};
    }

    // zchunk: the next chunk of output from libzck, which checks every chunk's digest and, at
    // the end, the data's.
    Result<std::span<const char>> next_zchunk() {
        const std::size_t allowance = output_allowance();
        const ssize_t produced = zck_read(zck.get(), output.data(), allowance);
        if (produced < 0) {
            return make_error(ErrorCode::Corrupt, zck_error_of(zck.get(), "invalid zchunk data"),
                              subject);
        }
        if (produced == 0) {
            if (auto ended = check_end(); !ended) {
                return tl::unexpected(ended.error());
            }
            finished = true;
            return std::span<const char>();
        }
        if (auto accounted = account(static_cast<std::size_t>(produced)); !accounted) {
            return tl::unexpected(accounted.error());
        }
        return std::span<const char>(output.data(), static_cast<std::size_t>(produced));
    }

    Result<std::span<const char>> next() {
        if (compression == Compression::Zchunk) {
            return next_zchunk();
        }
        while (true) {
            if (input_pos == input_len && !input_eof) {
                if (auto filled = fill(); !filled) {
                    return tl::unexpected(filled.error());
                }
            }
            const std::span<const char> pending(input.data() + input_pos, input_len - input_pos);

            if (compression == Compression::None) {
                if (pending.empty()) {
                    if (auto ended = check_end(); !ended) {
                        return tl::unexpected(ended.error());
                    }
                    finished = true;
                    return std::span<const char>();
                }
                input_pos = input_len;
                if (auto accounted = account(pending.size()); !accounted) {
                    return tl::unexpected(accounted.error());
                }
                return pending;
            }

            if (pending.empty() && at_stream_boundary) {
                if (auto ended = check_end(); !ended) {
                    return tl::unexpected(ended.error());
                }
                finished = true;
                return std::span<const char>();
            }

            const std::span<char> out(output.data(), output_allowance());
            auto stepped = codec->step(pending, out);
            if (!stepped) {
                return make_error(stepped.error().code, std::move(stepped.error().message),
                                  subject);
            }
            input_pos += stepped->consumed;
            if (stepped->consumed > 0) {
                at_stream_boundary = false;
            }
            if (stepped->stream_end) {
                at_stream_boundary = true;
                if (auto restarted = codec->restart(); !restarted) {
                    return make_error(restarted.error().code, std::move(restarted.error().message),
                                      subject);
                }
            }
            if (stepped->produced > 0) {
                if (auto accounted = account(stepped->produced); !accounted) {
                    return tl::unexpected(accounted.error());
                }
                return std::span<const char>(output.data(), stepped->produced);
            }
            if (stepped->stream_end) {
                continue;
            }
            if (pending.empty()) {
                // End of file, no more output, and the codec never saw its end-of-stream marker.
                return make_error(ErrorCode::Corrupt,
                                  fmt::format("truncated {} stream: the file ends after {} "
                                              "compressed bytes, before the end of the stream",
                                              compression_name(compression), bytes_in),
                                  subject);
            }
            if (stepped->consumed == 0) {
                return make_error(
                    ErrorCode::Corrupt,
                    fmt::format("the {} decoder made no progress", compression_name(compression)),
                    subject);
            }
        }
    }
};

Decompressor::Decompressor(std::unique_ptr<State> state) : state_(std::move(state)) {}
Decompressor::Decompressor(Decompressor&&) noexcept = default;
Decompressor& Decompressor::operator=(Decompressor&&) noexcept = default;
Decompressor::~Decompressor() = default;

Result<Decompressor> Decompressor::open(const std::filesystem::path& path,
                                        const DecompressOptions& options) {
    auto state = std::make_unique<State>();
    state->subject = path.string();
    state->options = options;
    state->options.buffer_size = std::max<std::size_t>(options.buffer_size, 64);
    state->fd.reset(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!state->fd) {
        return make_errno_error("cannot open", state->subject, errno);
    }
    state->input.resize(state->options.buffer_size);
    // Read the first block to see the magic bytes; it stays in the buffer for the codec.
    if (auto filled = state->fill(); !filled) {
        return tl::unexpected(filled.error());
    }
    state->compression =
        detect_compression(std::span<const char>(state->input.data(), state->input_len));
    if (state->compression == Compression::Zchunk) {
        // libzck reads the file from its start (the header first).
        silence_zck_log();
        if (::lseek(state->fd.get(), 0, SEEK_SET) != 0) {
            return make_errno_error("cannot seek", state->subject, errno);
        }
        state->input_pos = state->input_len = 0;
        state->zck.reset(zck_create());
        if (!state->zck || !zck_init_read(state->zck.get(), state->fd.get())) {
            return make_error(ErrorCode::Corrupt,
                              zck_error_of(state->zck.get(), "invalid zchunk header"),
                              state->subject);
        }
        state->bytes_in = static_cast<std::uint64_t>(zck_get_length(state->zck.get()));
        state->output.resize(state->options.buffer_size);
    } else if (state->compression != Compression::None) {
        state->codec = make_codec(state->compression);
        state->output.resize(state->options.buffer_size);
    }
    return Decompressor(std::move(state));
}

Result<std::span<const char>> Decompressor::read() {
    State& state = *state_;
    if (state.error) {
        return tl::unexpected(*state.error);
    }
    if (state.finished) {
        return std::span<const char>();
    }
    auto chunk = state.next();
    if (!chunk) {
        state.error = chunk.error();
    }
    return chunk;
}

Compression Decompressor::compression() const {
    return state_->compression;
}
std::uint64_t Decompressor::bytes_out() const {
    return state_->bytes_out;
}
std::uint64_t Decompressor::bytes_in() const {
    return state_->bytes_in;
}

namespace {

// Chunks decompressed ahead of the sink: enough to absorb the codec's bursts (one input buffer
// can expand to many output buffers), small enough to stay in the cache.
constexpr std::size_t kPipelineDepth = 4;

// A bounded single-producer/single-consumer ring of chunk buffers between the decompressing
// thread and the sink (a copy of 256 KiB costs a few microseconds; decoding it, far more).
class ChunkRing {
  public:
    explicit ChunkRing(std::size_t buffer_size) {
        for (Slot& slot : slots_) {
            slot.buffer.resize(buffer_size);
        }
    }

    // Producer: waits for a free slot. Returns nullptr iff the consumer cancelled.
    std::vector<char>* acquire() {
        std::unique_lock lock(mutex_);
        space_.wait(lock, [this] { return cancelled_ || count_ < kPipelineDepth; });
        return cancelled_ ? nullptr : &slots_[(head_ + count_) % kPipelineDepth].buffer;
    }

    // Producer: publishes the slot acquire() returned, holding `length` bytes.
    void publish(std::size_t length) {
        {
            std::lock_guard lock(mutex_);
            slots_[(head_ + count_) % kPipelineDepth].length = length;
            ++count_;
        }
        ready_.notify_one();
    }

    // Producer: no more chunks; `outcome` is the total or the decompressor's error.
    void close(Result<std::uint64_t> outcome) {
        {
            std::lock_guard lock(mutex_);
            outcome_ = std::move(outcome);
        }
        ready_.notify_one();
    }

    // Consumer: the next chunk, or an empty span once the producer closed and every chunk was
    // taken. The chunk stays valid until release().
    std::span<const char> take() {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [this] { return count_ > 0 || outcome_.has_value(); });
        if (count_ == 0) {
            return {};
        }
        const Slot& slot = slots_[head_];
        return {slot.buffer.data(), slot.length};
    }

    // Consumer: gives the chunk take() returned back to the producer.
    void release() {
        {
            std::lock_guard lock(mutex_);
            head_ = (head_ + 1) % kPipelineDepth;
            --count_;
        }
        space_.notify_one();
    }

    // Consumer: makes the producer stop at its next acquire().
    void cancel() {
        {
            std::lock_guard lock(mutex_);
            cancelled_ = true;
        }
        space_.notify_one();
    }

    // Consumer, after take() returned an empty span.
    Result<std::uint64_t> outcome() {
        std::lock_guard lock(mutex_);
        return *outcome_;
    }

  private:
    struct Slot {
        std::vector<char> buffer;
        std::size_t length = 0;
    };
    std::mutex mutex_;
    std::condition_variable space_;
    std::condition_variable ready_;
    std::array<Slot, kPipelineDepth> slots_;
    std::size_t head_ = 0;
    std::size_t count_ = 0;
    bool cancelled_ = false;
    std::optional<Result<std::uint64_t>> outcome_;
};

}  // namespace

Result<std::uint64_t> decompress_file(
    const std::filesystem::path& path, const DecompressOptions& options,
    const std::function<Result<void>(std::span<const char>)>& sink) {
    auto opened = Decompressor::open(path, options);
    if (!opened) {
        return tl::unexpected(opened.error());
    }
    Decompressor& reader = *opened;
    if (reader.compression() == Compression::None) {
        // Reading is all there is to do: no thread.
        while (true) {
            auto chunk = reader.read();
            if (!chunk) {
                return tl::unexpected(chunk.error());
            }
            if (chunk->empty()) {
                return reader.bytes_out();
            }
            if (auto sunk = sink(*chunk); !sunk) {
                return tl::unexpected(sunk.error());
            }
        }
    }
    // The codec runs on a thread of its own, up to kPipelineDepth chunks ahead of `sink`, so
    // decoding and consuming overlap instead of adding up.
    ChunkRing ring(std::max<std::size_t>(options.buffer_size, 64));
    std::jthread producer([&reader, &ring, &path] {
        try {
            while (std::vector<char>* slot = ring.acquire()) {
                auto chunk = reader.read();
                if (!chunk) {
                    return ring.close(tl::unexpected(chunk.error()));
                }
                if (chunk->empty()) {
                    return ring.close(reader.bytes_out());
                }
                // At most buffer_size bytes, the size of every slot.
                std::memcpy(slot->data(), chunk->data(), chunk->size());
                ring.publish(chunk->size());
            }
        } catch (const std::exception& failure) {  // std::bad_alloc: must not end the process
            ring.close(make_error(ErrorCode::Io, fmt::format("decompressing: {}", failure.what()),
                                  path.string()));
        }
    });
    // Declared after `producer`, so destroyed first: however this function is left (an error of
    // the sink, an exception), the producer is released from acquire() before it is joined.
    struct CancelOnExit {
        ChunkRing& ring;
        ~CancelOnExit() { ring.cancel(); }
    } cancel_on_exit{ring};
    while (true) {
        const std::span<const char> chunk = ring.take();
        if (chunk.empty()) {
            return ring.outcome();
        }
        auto sunk = sink(chunk);
        ring.release();
        if (!sunk) {
            return tl::unexpected(std::move(sunk.error()));
        }
    }
}

}  // namespace rpmirror
