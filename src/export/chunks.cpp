// A bundle's chunk files (chunks.hpp).
#include "export/chunks.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include <fmt/core.h>

#include "checksum/hasher.hpp"
#include "export/repository_files.hpp"
#include "fs/durable.hpp"
#include "fs/tree.hpp"

namespace rpmirror::bundle {

namespace {

constexpr std::size_t kBuffer = 1U << 20;

Result<UniqueFd> open_read(const std::filesystem::path& path) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (!fd) {
        return make_errno_error("cannot open", path.string(), errno);
    }
    return fd;
}

// Reads up to `size` bytes at `offset` of `fd`; fewer only at the end of the file.
Result<std::size_t> read_at(int fd, char* data, std::size_t size, std::uint64_t offset,
                            const std::string& shown) {
    std::size_t total = 0;
    while (total < size) {
        const ssize_t done =
            ::pread(fd, data + total, size - total, static_cast<off_t>(offset + total));
        if (done < 0) {
            if (errno == EINTR) {
                continue;
            }
            return make_errno_error("cannot read", shown, errno);
        }
        if (done == 0) {
            break;
        }
        total += static_cast<std::size_t>(done);
    }
    return total;
}

}  // namespace

ChunkWriter::ChunkWriter(std::filesystem::path dir, std::uint64_t chunk_size)
    : dir_(std::move(dir)), chunk_size_(std::max<std::uint64_t>(chunk_size, 1)) {}

Result<void> ChunkWriter::open_next() {
    return open_named(fmt::format("chunk-{:06}", chunks_.size()));
}

Result<void> ChunkWriter::open_named(std::string name) {
    if (auto closed = close_current(); !closed) {
        return closed;
    }
    Chunk chunk;
    chunk.name = std::move(name);
    const std::filesystem::path path = dir_ / chunk.name;
    if (auto made = fs::make_directories(path.parent_path()); !made) {
        return made;
    }
    current_.reset(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    if (!current_) {
        return make_errno_error("cannot create", path.string(), errno);
    }
    chunks_.push_back(std::move(chunk));
    written_ = 0;
    return {};
}

Result<void> ChunkWriter::close_current() {
    if (!current_) {
        return {};
    }
    Chunk& chunk = chunks_.back();
    if (::fsync(current_.get()) != 0) {
        return make_errno_error("cannot flush", (dir_ / chunk.name).string(), errno);
    }
    current_.reset();
    chunk.size = written_;
    chunk.sha256 = chunk_hash_.finish();
    return {};
}

Result<std::pair<Placement, std::string>> ChunkWriter::append(
    const std::filesystem::path& path, std::uint64_t size, const std::optional<std::string>& sha256,
    const std::string& shown) {
    if (!current_ || written_ >= chunk_size_) {
        if (auto opened = open_next(); !opened) {
            return tl::unexpected(std::move(opened.error()));
        }
    }
    const Placement placement{chunks_.size() - 1, written_};
    auto digest = copy_in(path, size, sha256, shown, true);
    if (!digest) {
        return tl::unexpected(std::move(digest.error()));
    }
    return std::pair{placement, std::move(*digest)};
}

Result<std::pair<Placement, std::string>> ChunkWriter::append_whole(
    const std::string& name, const std::filesystem::path& path, std::uint64_t size,
    const std::optional<std::string>& sha256, const std::string& shown) {
    if (auto opened = open_named(name); !opened) {
        return tl::unexpected(std::move(opened.error()));
    }
    const Placement placement{chunks_.size() - 1, 0};
    auto digest = copy_in(path, size, sha256, shown, false);
    if (!digest) {
        return tl::unexpected(std::move(digest.error()));
    }
    if (auto closed = close_current(); !closed) {
        return tl::unexpected(std::move(closed.error()));
    }
    return std::pair{placement, std::move(*digest)};
}

// Copies the local file `path` into the current chunk (cut at the chunk size iff `cut`).
Result<std::string> ChunkWriter::copy_in(const std::filesystem::path& path, std::uint64_t size,
                                         const std::optional<std::string>& sha256,
                                         const std::string& shown, bool cut) {
    auto in = open_read(path);
    if (!in) {
        return tl::unexpected(std::move(in.error()));
    }
    std::string buffer(kBuffer, '\0');
    Hasher file_hash(ChecksumType::Sha256);
    std::uint64_t done = 0;
    while (true) {
        auto got = read_at(in->get(), buffer.data(), buffer.size(), done, shown);
        if (!got) {
            return tl::unexpected(std::move(got.error()));
        }
        if (*got == 0) {
            break;
        }
        file_hash.update(buffer.data(), *got);
        std::size_t used = 0;
        while (used < *got) {
            if (cut && written_ >= chunk_size_) {
                if (auto opened = open_next(); !opened) {
                    return tl::unexpected(std::move(opened.error()));
                }
            }
            const auto part = cut ? static_cast<std::size_t>(std::min<std::uint64_t>(
                                        *got - used, chunk_size_ - written_))
                                  : *got - used;
            const std::string chunk_path = (dir_ / chunks_.back().name).string();
            if (auto wrote = fs::write_all(
                    current_.get(), std::string_view(buffer.data() + used, part), chunk_path);
                !wrote) {
                return tl::unexpected(std::move(wrote.error()));
            }
            chunk_hash_.update(buffer.data() + used, part);
            written_ += part;
            used += part;
        }
        done += *got;
    }
    std::string digest = file_hash.finish();
    if (done != size || (sha256 && digest != *sha256)) {
        return make_error(ErrorCode::Corrupt,
                          fmt::format("changed while it was exported ({} bytes, SHA-256 {}; it had "
                                      "{} bytes{})",
                                      done, digest, size, sha256 ? ", SHA-256 " + *sha256 : ""),
                          shown);
    }
    return digest;
}

Result<std::vector<Chunk>> ChunkWriter::finish() {
    if (auto closed = close_current(); !closed) {
        return tl::unexpected(std::move(closed.error()));
    }
    return std::move(chunks_);
}

Result<void> extract_file(const std::filesystem::path& bundle_dir, const std::vector<Chunk>& chunks,
                          const BundleFile& file, const std::filesystem::path& out) {
    UniqueFd target(
        ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644));
    if (!target) {
        return make_errno_error("cannot create", out.string(), errno);
    }
    std::string buffer(kBuffer, '\0');
    Hasher hash(ChecksumType::Sha256);
    std::size_t chunk = file.carried->chunk;
    std::uint64_t offset = file.carried->offset;
    std::uint64_t left = file.size;
    while (left > 0) {
        if (chunk >= chunks.size()) {
            return make_error(
                ErrorCode::Corrupt,
                fmt::format("{}: the chunks end before its last {} bytes", file.key, left),
                bundle_dir.string());
        }
        const std::filesystem::path path = bundle_dir / chunks[chunk].name;
        auto in = open_read(path);
        if (!in) {
            return tl::unexpected(std::move(in.error()));
        }
        while (left > 0 && offset < chunks[chunk].size) {
            const auto want = static_cast<std::size_t>(
                std::min<std::uint64_t>({left, buffer.size(), chunks[chunk].size - offset}));
            auto got = read_at(in->get(), buffer.data(), want, offset, path.string());
            if (!got) {
                return tl::unexpected(std::move(got.error()));
            }
            if (*got < want) {
                return make_error(
                    ErrorCode::Corrupt,
                    fmt::format("shorter than the manifest's {} bytes", chunks[chunk].size),
                    path.string());
            }
            hash.update(buffer.data(), *got);
            if (auto wrote = fs::write_all(target.get(), std::string_view(buffer.data(), *got),
                                           out.string());
                !wrote) {
                return wrote;
            }
            offset += *got;
            left -= *got;
        }
        ++chunk;
        offset = 0;
    }
    if (const std::string digest = hash.finish(); digest != file.sha256) {
        return make_error(ErrorCode::Corrupt,
                          fmt::format("{} has SHA-256 {} in the chunks, the manifest says {}",
                                      file.key, digest, file.sha256),
                          bundle_dir.string());
    }
    return {};
}

Result<void> check_chunk(const std::filesystem::path& bundle_dir, const Chunk& chunk) {
    const std::filesystem::path path = bundle_dir / chunk.name;
    std::error_code error;
    const auto size = std::filesystem::file_size(path, error);
    if (error) {
        if (error == std::errc::no_such_file_or_directory) {
            return make_error(ErrorCode::NotFound, "missing: the bundle is incomplete",
                              path.string());
        }
        return make_errno_error("cannot read", path.string(), error.value());
    }
    if (size != chunk.size) {
        return make_error(ErrorCode::Corrupt,
                          fmt::format("{} bytes, the manifest says {}", size, chunk.size),
                          path.string());
    }
    auto digest = sha256_of(path);
    if (!digest) {
        return tl::unexpected(std::move(digest.error()));
    }
    if (*digest != chunk.sha256) {
        return make_error(ErrorCode::Corrupt,
                          fmt::format("SHA-256 {}, the manifest says {}: the chunk is damaged",
                                      *digest, chunk.sha256),
                          path.string());
    }
    return {};
}

}  // namespace rpmirror::bundle
