// Move-only owner of a read-only memory mapping; unmaps it in the destructor.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>

namespace rpmirror {

class MappedFile {
  public:
    MappedFile() = default;
    MappedFile(MappedFile&& other) noexcept
        : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
    MappedFile& operator=(MappedFile&& other) noexcept {
        if (this != &other) {
            unmap();
            data_ = std::exchange(other.data_, nullptr);
            size_ = std::exchange(other.size_, 0);
        }
        return *this;
    }
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;
    ~MappedFile() { unmap(); }

    // Maps `size` bytes of `fd` from `offset` (a multiple of the page size) read-only and
    // announces a sequential read of all of them; with `populate`, also maps every page of them
    // at once (MADV_POPULATE_READ: one call instead of a fault per page; ignored by a kernel
    // without it, and by a file shorter than the mapping, whose reader's guard then finds it).
    // Returns nullopt (errno set) iff mmap fails; `size` must be > 0.
    static std::optional<MappedFile> map_for_sequential_read(int fd, std::size_t size,
                                                             std::uint64_t offset = 0,
                                                             bool populate = false) {
        void* address =
            ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(offset));
        if (address == MAP_FAILED) {
            return std::nullopt;
        }
        // Advice only: failure changes speed, never results.
        ::madvise(address, size, MADV_SEQUENTIAL);
        ::madvise(address, size, MADV_WILLNEED);
        if (populate) {
            ::madvise(address, size, MADV_POPULATE_READ);
        }
        MappedFile mapped;
        mapped.data_ = static_cast<const std::byte*>(address);
        mapped.size_ = size;
        return mapped;
    }

    const std::byte* data() const { return data_; }
    std::size_t size() const { return size_; }

  private:
    void unmap() {
        if (data_ != nullptr) {
            ::munmap(const_cast<std::byte*>(data_), size_);
            data_ = nullptr;
            size_ = 0;
        }
    }
    const std::byte* data_ = nullptr;
    std::size_t size_ = 0;
};

}  // namespace rpmirror
