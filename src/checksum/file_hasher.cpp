// FileHasher: hashes whole files with mmap or pread, guarded against files that change underneath.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <memory>

#include "checksum/file_hasher_internal.hpp"
#include "checksum/hasher.hpp"
#include "checksum/read_chooser.hpp"
#include "checksum/sigbus_guard.hpp"
#include "fs/beneath.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "util/mapped_file.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror {

thread_local std::function<void(std::uint64_t)>* testing::after_chunk_hook = nullptr;

namespace {

// One EVP_DigestUpdate per chunk of a mapping: large enough that the call overhead vanishes,
// small enough that the test hook can act mid-file.
constexpr std::size_t kMappedChunkSize = 1024 * 1024;

// The largest piece of a file mapped at once (a multiple of every page size).
constexpr std::uint64_t kMapWindowSize = 16 * 1024 * 1024;

void notify_chunk_hashed(std::uint64_t bytes_hashed) {
    if (testing::after_chunk_hook != nullptr) {
        (*testing::after_chunk_hook)(bytes_hashed);
    }
}

// "is a directory", "is a FIFO, not a regular file", ... for a non-regular `mode`.
std::string file_kind(mode_t mode) {
    if (S_ISDIR(mode)) {
        return "is a directory";
    }
    const std::string_view name = fs::file_kind_name(mode);
    return name == "not a regular file" ? "is not a regular file"
                                        : "is a " + std::string(name) + ", not a regular file";
}

// The CPU time this thread has used, in nanoseconds (0 iff the clock is unavailable).
std::uint64_t thread_cpu_ns() {
    timespec now{};
    if (::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now) != 0) {
        return 0;
    }
    return static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000ULL +
           static_cast<std::uint64_t>(now.tv_nsec);
}

bool same_content_identity(const struct stat& before, const struct stat& after) {
    return before.st_size == after.st_size &&
           fs::timespec_ns(before.st_mtim) == fs::timespec_ns(after.st_mtim);
}

// An open regular file and its fstat, or the error that prevented it.
struct OpenedFile {
    UniqueFd fd;
    struct stat st {};
};

Result<OpenedFile> open_regular_file(const std::filesystem::path& path) {
    // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused after fstat.
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
    if (!fd) {
        return make_errno_error("cannot open", path.string(), errno);
    }
    OpenedFile opened{std::move(fd), {}};
    if (::fstat(opened.fd.get(), &opened.st) != 0) {
        return make_errno_error("cannot stat", path.string(), errno);
    }
    if (!S_ISREG(opened.st.st_mode)) {
        return make_error(ErrorCode::BadInput, std::string(file_kind(opened.st.st_mode)),
                          path.string());
    }
    return opened;
}

}  // namespace

struct FileHasher::State {
    explicit State(HashOptions hash_options)
        : options(hash_options),
          hasher(ChecksumType::Sha256),
          buffer(std::make_unique_for_overwrite<std::byte[]>(
              std::max<std::size_t>(hash_options.buffer_size, 4096))) {
        options.buffer_size = std::max<std::size_t>(options.buffer_size, 4096);
    }

    // Hashes exactly st.st_size bytes of `fd` into `hasher`, read the way options.method says
    // (ReadMethod::Auto: as the process's ReadChooser chooses, and timed for it).
    // Returns the byte count, or Corrupt iff the file was shorter or longer than st_size.
    Result<std::uint64_t> hash_contents(int fd, const struct stat& st, const std::string& subject) {
        const auto size = static_cast<std::uint64_t>(st.st_size);
        if (size == 0) {
            return hash_by_pread(fd, 0, size, subject);
        }
        switch (options.method) {
            case ReadMethod::Pread:
                return hash_by_pread(fd, 0, size, subject);
            case ReadMethod::Mmap:
                return hash_by_mapping(fd, size, false, subject);
            case ReadMethod::MmapPopulate:
                return hash_by_mapping(fd, size, true, subject);
            case ReadMethod::Auto:
                break;
        }
        checksum::ReadChooser& chooser = checksum::ReadChooser::process();
        const checksum::ReadWay way = chooser.choose(size);
        const std::uint64_t started = thread_cpu_ns();
        auto hashed =
            way == checksum::ReadWay::Pread
                ? hash_by_pread(fd, 0, size, subject)
                : hash_by_mapping(fd, size, way == checksum::ReadWay::MmapPopulate, subject);
        const std::uint64_t finished = thread_cpu_ns();
        if (hashed && started != 0 && finished >= started) {
            chooser.record(size, way, finished - started);
        }
        return hashed;
    }

    // Hashes `size` (> 0) bytes of `fd` a map window at a time (pread where mmap is impossible).
    Result<std::uint64_t> hash_by_mapping(int fd, std::uint64_t size, bool populate,
                                          const std::string& subject) {
        std::uint64_t offset = 0;
        // Mapped a window at a time: the pages of a mapping count in the process's RSS, so a
        // whole multi-GB file mapped at once would look like (and be reported as) that much
        // memory. A window costs one mmap/munmap per kMapWindowSize, nothing measurable.
        while (offset < size) {
            if (options.stop.stop_requested()) {
                return make_error(ErrorCode::Interrupted, "interrupted", subject);
            }
            const auto length =
                static_cast<std::size_t>(std::min<std::uint64_t>(kMapWindowSize, size - offset));
            auto mapped = MappedFile::map_for_sequential_read(fd, length, offset, populate);
            if (!mapped) {
                break;  // mmap is impossible here (e.g. a filesystem without it): read instead
            }
            if (auto hashed = hash_mapping(*mapped, offset, subject); !hashed) {
                return hashed;
            }
            offset += length;
        }
        if (offset == size) {
            return size;
        }
        return hash_by_pread(fd, offset, size, subject);
    }

    Result<std::uint64_t> hash_mapping(const MappedFile& mapped, std::uint64_t window_offset,
                                       const std::string& subject) {
        const bool completed = consume_mapping_guarded(
            mapped.data(), mapped.size(), kMappedChunkSize,
            [this, &mapped, window_offset](std::size_t offset, std::size_t length) {
                hasher.update(mapped.data() + offset, length);
                notify_chunk_hashed(window_offset + offset + length);
            });
        if (!completed) {
            return make_error(ErrorCode::Corrupt, "file shrank while being read", subject);
        }
        return mapped.size();
    }

    // Hashes `fd` from `offset` to its end, which must be at `expected_size`.
    Result<std::uint64_t> hash_by_pread(int fd, std::uint64_t offset, std::uint64_t expected_size,
                                        const std::string& subject) {
        for (;;) {
            if (options.stop.stop_requested()) {
                return make_error(ErrorCode::Interrupted, "interrupted", subject);
            }
            const ssize_t bytes_read =
                ::pread(fd, buffer.get(), options.buffer_size, static_cast<off_t>(offset));
            if (bytes_read < 0) {
                if (errno == EINTR) {
                    continue;
                }
                return make_errno_error("read failed", subject, errno);
            }
            if (bytes_read == 0) {
                break;
            }
            hasher.update(buffer.get(), static_cast<std::size_t>(bytes_read));
            offset += static_cast<std::uint64_t>(bytes_read);
            if (offset > expected_size) {
                return make_error(ErrorCode::Corrupt, "file grew while being read", subject);
            }
            notify_chunk_hashed(offset);
        }
        if (offset != expected_size) {
            return make_error(ErrorCode::Corrupt, "file shrank while being read", subject);
        }
        return offset;
    }

    // Hashes the open regular file `fd` whose fstat is `st`, then confirms it did not change
    // while it was read.
    Result<FileDigest> hash_opened(int fd, const struct stat& st, ChecksumType type,
                                   const std::string& subject) {
        // The one rule (CacheTrust): an entry only for a file rpmirror's record vouches for.
        if (options.use_cache && options.trust && options.trust->vouches_for(st)) {
            if (auto cached = read_own_cached_digest(fd, st, type)) {
                return FileDigest{std::move(*cached), static_cast<std::uint64_t>(st.st_size), true};
            }
        }
        hasher.reset(type);
        auto hashed_size = hash_contents(fd, st, subject);
        if (!hashed_size) {
            hasher.reset();
            return tl::unexpected(std::move(hashed_size.error()));
        }
        std::string hex = hasher.finish();
        struct stat after {};
        if (::fstat(fd, &after) != 0) {
            return make_errno_error("cannot stat", subject, errno);
        }
        if (!same_content_identity(st, after)) {
            return make_error(ErrorCode::Corrupt, "file changed while being read", subject);
        }
        if (options.use_cache) {
            write_cached_digest(fd, after, type, hex);
        }
        return FileDigest{std::move(hex), *hashed_size, false};
    }

    HashOptions options;
    Hasher hasher;
    std::unique_ptr<std::byte[]> buffer;
};

FileHasher::FileHasher(HashOptions options) : state_(std::make_unique<State>(options)) {}
FileHasher::FileHasher(FileHasher&&) noexcept = default;
FileHasher& FileHasher::operator=(FileHasher&&) noexcept = default;
FileHasher::~FileHasher() = default;

Result<FileDigest> FileHasher::hash(const std::filesystem::path& path, ChecksumType type) {
    auto opened = open_regular_file(path);
    if (!opened) {
        return tl::unexpected(std::move(opened.error()));
    }
    return state_->hash_opened(opened->fd.get(), opened->st, type, path.string());
}

Result<FileDigest> FileHasher::hash_fd(int fd, ChecksumType type, std::string_view subject) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        return make_errno_error("cannot stat", std::string(subject), errno);
    }
    if (!S_ISREG(st.st_mode)) {
        return make_error(ErrorCode::BadInput, file_kind(st.st_mode), std::string(subject));
    }
    return state_->hash_opened(fd, st, type, std::string(subject));
}

Result<FileDigest> FileHasher::hash_stream(int fd, ChecksumType type, std::string_view subject) {
    Hasher& hasher = state_->hasher;
    hasher.reset(type);
    std::uint64_t total = 0;
    for (;;) {
        const ssize_t bytes_read = ::read(fd, state_->buffer.get(), state_->options.buffer_size);
        if (bytes_read < 0) {
            if (errno == EINTR) {
                continue;
            }
            const int read_errno = errno;
            hasher.reset();
            return make_errno_error("read failed", std::string(subject), read_errno);
        }
        if (bytes_read == 0) {
            break;
        }
        hasher.update(state_->buffer.get(), static_cast<std::size_t>(bytes_read));
        total += static_cast<std::uint64_t>(bytes_read);
    }
    return FileDigest{hasher.finish(), total, false};
}

VerifyResult FileHasher::verify(const VerifyRequest& request) {
    VerifyResult result;
    const std::string subject = request.path.string();
    auto opened = open_regular_file(request.path);
    if (!opened) {
        result.status = opened.error().code == ErrorCode::NotFound ? VerifyStatus::Missing
                                                                   : VerifyStatus::IoError;
        result.error = std::move(opened.error());
        return result;
    }
    result.actual_size = static_cast<std::uint64_t>(opened->st.st_size);
    if (request.expected_size && *request.expected_size != result.actual_size) {
        result.status = VerifyStatus::SizeMismatch;
        return result;
    }
    auto digest = state_->hash_opened(opened->fd.get(), opened->st, request.type, subject);
    if (!digest) {
        result.status = VerifyStatus::IoError;
        result.error = std::move(digest.error());
        return result;
    }
    result.from_cache = digest->from_cache;
    result.actual_digest = std::move(digest->hex);
    const bool matches = std::equal(result.actual_digest.begin(), result.actual_digest.end(),
                                    request.expected_digest.begin(), request.expected_digest.end(),
                                    [](char a, char b) {
                                        return std::tolower(static_cast<unsigned char>(a)) ==
                                               std::tolower(static_cast<unsigned char>(b));
                                    });
    result.status = matches ? VerifyStatus::Ok : VerifyStatus::DigestMismatch;
    return result;
}

Result<FileDigest> hash_file(const std::filesystem::path& path, ChecksumType type,
                             const HashOptions& options) {
    FileHasher hasher(options);
    return hasher.hash(path, type);
}

Result<FileDigest> hash_stream(int fd, ChecksumType type, std::string_view subject,
                               const HashOptions& options) {
    FileHasher hasher(options);
    return hasher.hash_stream(fd, type, subject);
}

std::string_view verify_status_name(VerifyStatus status) {
    switch (status) {
        case VerifyStatus::Ok:
            return "ok";
        case VerifyStatus::DigestMismatch:
            return "digest-mismatch";
        case VerifyStatus::SizeMismatch:
            return "size-mismatch";
        case VerifyStatus::Missing:
            return "missing";
        case VerifyStatus::IoError:
            return "io-error";
    }
    return "unknown";
}

}  // namespace rpmirror
