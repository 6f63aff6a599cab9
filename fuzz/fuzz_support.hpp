// Helpers shared by the fuzz targets.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

namespace rpmirror::fuzz {

// Returns the fuzzer's input as text (any bytes, NUL included).
inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

// An in-memory file (memfd) for the APIs that take a path: each input replaces its content, and
// path() names it through /proc/self/fd, so no file is written to disk and nothing is left
// behind. One per process, reused across inputs.
class MemoryFile {
  public:
    MemoryFile() : fd_(memfd_create("rpmirror-fuzz", MFD_CLOEXEC)) {
        if (fd_ < 0)
            std::abort();
        path_ = "/proc/self/fd/" + std::to_string(fd_);
    }
    MemoryFile(const MemoryFile&) = delete;
    MemoryFile& operator=(const MemoryFile&) = delete;
    ~MemoryFile() { ::close(fd_); }

    // Replaces the file's content with `bytes`. Aborts on failure (not a finding).
    void assign(const std::uint8_t* bytes, std::size_t size) {
        if (::ftruncate(fd_, 0) != 0)
            std::abort();
        std::size_t written = 0;
        while (written < size) {
            const ssize_t count =
                ::pwrite(fd_, bytes + written, size - written, static_cast<off_t>(written));
            if (count <= 0)
                std::abort();
            written += static_cast<std::size_t>(count);
        }
    }

    const std::filesystem::path& path() const { return path_; }

  private:
    int fd_;
    std::filesystem::path path_;
};

}  // namespace rpmirror::fuzz
