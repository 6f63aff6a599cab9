// ReadChooser: each way warmed up per size class, then the cheapest, with exploration.
#include <gtest/gtest.h>

#include <array>
#include <map>

#include "checksum/read_chooser.hpp"

namespace rpmirror::checksum {
namespace {

constexpr std::uint64_t kSmall = 100 << 10;  // a file of the 64-256 KiB class
constexpr std::uint64_t kLarge = 8 << 20;    // a file of the 4-16 MiB class

// Chooses and records `files` files of `size`, each way costing `cost[way]` ns per byte.
std::map<ReadWay, int> run(ReadChooser& chooser, std::uint64_t size, int files,
                           const std::array<double, kReadWays>& cost) {
    std::map<ReadWay, int> given;
    for (int file = 0; file < files; ++file) {
        const ReadWay way = chooser.choose(size);
        ++given[way];
        chooser.record(size, way,
                       static_cast<std::uint64_t>(cost[static_cast<std::size_t>(way)] *
                                                  static_cast<double>(size)));
    }
    return given;
}

TEST(ReadChooser, EachWayIsMeasuredBeforeTheCheapestReadsTheRest) {
    ReadChooser chooser;
    const auto warmup =
        run(chooser, kSmall, 3 * static_cast<int>(ReadChooser::kWarmup), {2.0, 1.0, 3.0});
    for (const ReadWay way : {ReadWay::Pread, ReadWay::Mmap, ReadWay::MmapPopulate}) {
        EXPECT_EQ(warmup.at(way), static_cast<int>(ReadChooser::kWarmup)) << read_way_name(way);
    }
    const auto after = run(chooser, kSmall, 320, {2.0, 1.0, 3.0});
    // The cheapest (mmap) reads all but one file in kExploreEvery; the others still get those.
    EXPECT_EQ(after.at(ReadWay::Mmap), 320 - 320 / static_cast<int>(ReadChooser::kExploreEvery));
    EXPECT_EQ(after.at(ReadWay::Pread) + after.at(ReadWay::MmapPopulate),
              320 / static_cast<int>(ReadChooser::kExploreEvery));
    EXPECT_GT(after.at(ReadWay::Pread), 0);
    EXPECT_GT(after.at(ReadWay::MmapPopulate), 0);
}

TEST(ReadChooser, SizeClassesChooseApartAndTheStandingsSayWhat) {
    ReadChooser chooser;
    run(chooser, kSmall, 200, {1.0, 2.0, 3.0});
    run(chooser, kLarge, 200, {3.0, 2.0, 1.0});
    EXPECT_EQ(chooser.choose(kSmall + 1), ReadWay::Pread);
    EXPECT_EQ(chooser.choose(kLarge - 1), ReadWay::MmapPopulate);
    std::map<std::uint64_t, ReadStanding> by_low;
    for (const ReadStanding& standing : chooser.standings()) {
        by_low[standing.low] = standing;
    }
    const ReadStanding& small = by_low.at(64 << 10);
    EXPECT_EQ(small.high, 256U << 10);
    EXPECT_EQ(small.choice, ReadWay::Pread);
    EXPECT_NEAR(small.cpu_ns_per_mib[0], 1.0 * (1 << 20), 1.0);
    EXPECT_EQ(by_low.at(4 << 20).choice, ReadWay::MmapPopulate);
    // A class no file fell in has measured nothing, and stays with pread.
    EXPECT_EQ(by_low.at(0).files, (std::array<std::uint64_t, kReadWays>{}));
    EXPECT_FALSE(by_low.at(0).warm);
    EXPECT_TRUE(small.warm);
}

TEST(ReadChooser, AFewLargeFilesWarmAWayUpAsManySmallOnesDo) {
    ReadChooser chooser;
    constexpr std::uint64_t kHuge = 40ULL << 20;  // above kWarmupBytes: one file each suffices
    const auto given = run(chooser, kHuge, 3, {3.0, 1.0, 2.0});
    EXPECT_EQ(given.size(), kReadWays);
    EXPECT_EQ(chooser.choose(kHuge), ReadWay::Mmap);
}

TEST(ReadChooser, AChangeOfCostsDuringARunIsFollowed) {
    ReadChooser chooser;
    run(chooser, kLarge, 100, {1.0, 2.0, 3.0});
    EXPECT_EQ(chooser.choose(kLarge), ReadWay::Pread);
    // Pread becomes the dearest (say, the page cache emptied): exploration finds it out.
    run(chooser, kLarge, 2000, {5.0, 2.0, 3.0});
    EXPECT_EQ(chooser.choose(kLarge), ReadWay::Mmap);
}

}  // namespace
}  // namespace rpmirror::checksum
