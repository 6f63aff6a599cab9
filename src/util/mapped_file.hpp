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
    // announces a sequential read of all of them.
    // Returns nullopt (errno set) iff mmap fails; `size` must be > 0.
    static std::optional<MappedFile> map_for_sequential_read(int fd, std::size_t size,
                                                             std::uint64_t offset = 0) {
        void* address =
            ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(offset));
        if (address == MAP_FAILED) {
            return std::nullopt;
        }
        // Advice only: failure changes speed, never results.
        ::madvise(address, size, MADV_SEQUENTIAL);
        ::madvise(address, size, MADV_WILLNEED);
        MappedFile mapped;
        mapped.data_ = static_cast<const std::byte*>(address);
        mapped.size_ = size;
        return mapped;
    }

    // Maps the pages of [offset, offset + length) into the page table now, with one system call
    // instead of a page fault every few pages (MADV_POPULATE_READ, Linux 5.14); pages not yet
    // in the page cache are read first. Advice only: failure (an older kernel, a file that
    // shrank) changes speed, never results: reading the bytes then faults as usual.
    void prefault(std::size_t offset, std::size_t length) const {
#ifndef MADV_POPULATE_READ
        constexpr int MADV_POPULATE_READ = 22;  // uapi value; older libc headers lack the name
#endif
        ::madvise(const_cast<std::byte*>(data_) + offset, length, MADV_POPULATE_READ);
    }

    const std::byte* data() const {
        return data_;
    }
    std::size_t size() const {
        return size_;
    }

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
