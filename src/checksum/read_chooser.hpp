// How ReadMethod::Auto reads a file to hash it, chosen by measurement on the machine it runs on.
//
// Whether mapping a file beats reading it into a buffer depends on the machine: on one, mmap wins
// above 1 MiB; on a small VM every newly mapped page costs a fault that a read() into a reused
// buffer does not, and pread wins at every size. So nothing is fixed in advance: for each class
// of file sizes, each candidate way (pread into the hasher's buffer, mmap windows, mmap windows
// populated with MADV_POPULATE_READ first) hashes the first files of that class, timed in thread
// CPU time per byte (what a page fault, a copy and the hash cost this process; not waiting for a
// disk, which is the same whichever way reads), then the cheapest is used. One file in
// kExploreEvery of a class still goes to another candidate, so a change during a run (the page
// cache emptied, another filesystem) is followed. A candidate's cost is a moving average over its
// recent files.
//
// Thread-safe. ReadChooser::process() is the one every FileHasher with ReadMethod::Auto shares.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string_view>
#include <vector>

namespace rpmirror::checksum {

enum class ReadWay : std::uint8_t { Pread, Mmap, MmapPopulate };
inline constexpr std::size_t kReadWays = 3;

std::string_view read_way_name(ReadWay way);

// One class of file sizes as the chooser stands on it.
struct ReadStanding {
    std::uint64_t low = 0;                           // sizes from `low` (inclusive) ...
    std::uint64_t high = 0;                          // ... to `high` (exclusive; 0 = no bound)
    std::array<std::uint64_t, kReadWays> files{};    // files each way hashed
    std::array<double, kReadWays> cpu_ns_per_mib{};  // its moving average cost (0 = none yet)
    bool warm = false;                               // every way measured enough
    ReadWay choice = ReadWay::Pread;                 // iff warm: the way this class gets now
};

class ReadChooser {
  public:
    // Each way hashes this many files of a class, or this many bytes, before the cheapest is
    // chosen (a few large files measure as well as many small ones).
    static constexpr std::uint64_t kWarmup = 6;
    static constexpr std::uint64_t kWarmupBytes = 32ULL << 20;
    // After the warm-up, one choice in this many goes to another way (the one measured least).
    static constexpr std::uint64_t kExploreEvery = 32;

    ReadChooser();

    // The chooser every FileHasher with ReadMethod::Auto shares.
    static ReadChooser& process();

    // The way to hash a file of `size` bytes (> 0).
    ReadWay choose(std::uint64_t size);

    // A file of `size` bytes was hashed `way` in `cpu_ns` nanoseconds of thread CPU time.
    void record(std::uint64_t size, ReadWay way, std::uint64_t cpu_ns);

    // Every class, smallest first.
    std::vector<ReadStanding> standings() const;

  private:
    struct Class {
        std::array<std::uint64_t, kReadWays> chosen{};  // files given to each way
        std::array<std::uint64_t, kReadWays> chosen_bytes{};
        std::array<std::uint64_t, kReadWays> measured{};  // files each way recorded
        std::array<std::uint64_t, kReadWays> measured_bytes{};
        std::array<double, kReadWays> cost{};  // ns per byte, moving average
        std::uint64_t choices = 0;
    };
    static std::size_t class_of(std::uint64_t size);
    static bool given_enough(const Class& of, std::size_t way);
    static ReadWay cheapest(const Class& of);

    mutable std::mutex mutex_;
    std::vector<Class> classes_;
};

}  // namespace rpmirror::checksum
