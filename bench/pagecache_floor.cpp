// pagecache_floor -- what it costs to bring files that are in the page cache into a process,
// without hashing them: the part of a warm re-verification that no SHA-256 implementation can
// remove. bench/sync runs it beside `rpmirror verify`'s scenario ("rehash") and adds its CPU time
// to openssl's hashing time to state a second, reachable floor.
//
//   pagecache_floor DIR FILE...
//
// Reads every FILE (relative to DIR) the way rpmirror's checksum engine does: mapped 16 MiB at a
// time with MADV_SEQUENTIAL, then one load per 4 KiB page (plain page faults, 64 KiB of
// fault-around each); files largest first, on as many threads as the machine has cores. Prints
// the byte count.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

constexpr std::size_t kWindow = 16 * 1024 * 1024;
constexpr std::size_t kPage = 4096;

// Returns the sum of one byte per page of `path` (so the loads cannot be optimised away), or -1.
long long touch_file(const std::string& path, std::uint64_t size) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        std::perror(path.c_str());
        return -1;
    }
    long long sum = 0;
    for (std::uint64_t offset = 0; offset < size; offset += kWindow) {
        const std::size_t length =
            static_cast<std::size_t>(std::min<std::uint64_t>(kWindow, size - offset));
        void* address =
            ::mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(offset));
        if (address == MAP_FAILED) {
            std::perror(path.c_str());
            ::close(fd);
            return -1;
        }
        auto* bytes = static_cast<volatile unsigned char*>(address);
        ::madvise(address, length, MADV_SEQUENTIAL);
        for (std::size_t page = 0; page < length; page += kPage) {
            sum += bytes[page];
        }
        ::munmap(address, length);
    }
    ::close(fd);
    return sum;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: pagecache_floor DIR FILE...\n");
        return 2;
    }
    const std::string dir = argv[1];
    std::vector<std::pair<std::uint64_t, std::string>> files;
    for (int i = 2; i < argc; ++i) {
        std::string path = dir + "/" + argv[i];
        struct stat st {};
        if (::stat(path.c_str(), &st) != 0) {
            std::perror(path.c_str());
            return 1;
        }
        files.emplace_back(static_cast<std::uint64_t>(st.st_size), std::move(path));
    }
    std::sort(files.begin(), files.end(),
              [](const auto& a, const auto& b) { return a.first > b.first; });
    std::atomic<std::size_t> next{0};
    std::atomic<bool> failed{false};
    std::atomic<std::uint64_t> bytes{0};
    std::vector<std::thread> threads;
    const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
    for (unsigned t = 0; t < cores; ++t) {
        threads.emplace_back([&] {
            for (std::size_t i = next++; i < files.size(); i = next++) {
                if (touch_file(files[i].second, files[i].first) < 0) {
                    failed = true;
                }
                bytes += files[i].first;
            }
        });
    }
    for (auto& thread : threads) {
        thread.join();
    }
    std::printf("%llu\n", static_cast<unsigned long long>(bytes.load()));
    return failed ? 1 : 0;
}
