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
// The codecs and the detection of the format are in codecs.cpp.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "index/codecs.hpp"
#include "index/index.hpp"
#include "util/unique_fd.hpp"
#include "util/zck.hpp"

namespace rpmirror {

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

Result<std::string> decompress_file_to_string(const std::filesystem::path& path,
                                              const DecompressOptions& options) {
    std::string content;
    auto read = decompress_file(path, options, [&content](std::span<const char> chunk) {
        content.append(chunk.data(), chunk.size());
        return Result<void>{};
    });
    if (!read) {
        return tl::unexpected(std::move(read.error()));
    }
    return content;
}

}  // namespace rpmirror
