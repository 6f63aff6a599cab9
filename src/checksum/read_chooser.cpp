// ReadChooser (checksum/read_chooser.hpp): per size class, each way warmed up, then the cheapest.
#include "checksum/read_chooser.hpp"

#include <algorithm>

namespace rpmirror::checksum {

namespace {

// Upper bounds of the size classes (the last class has none): below 64 KiB a file is a few
// hash calls and the open/stat dominate; a map window is 16 MiB.
constexpr std::array<std::uint64_t, 5> kClassBounds = {64ULL << 10, 256ULL << 10, 1ULL << 20,
                                                       4ULL << 20, 16ULL << 20};

// Weight of the newest file in a way's moving average once it is warmed up.
constexpr double kNewest = 0.125;

}  // namespace

std::string_view read_way_name(ReadWay way) {
    switch (way) {
        case ReadWay::Pread:
            return "pread";
        case ReadWay::Mmap:
            return "mmap";
        case ReadWay::MmapPopulate:
            return "mmap-populate";
    }
    return "unknown";
}

ReadChooser::ReadChooser() : classes_(kClassBounds.size() + 1) {}

ReadChooser& ReadChooser::process() {
    static ReadChooser chooser;
    return chooser;
}

std::size_t ReadChooser::class_of(std::uint64_t size) {
    return static_cast<std::size_t>(
        std::upper_bound(kClassBounds.begin(), kClassBounds.end(), size) - kClassBounds.begin());
}

ReadWay ReadChooser::cheapest(const Class& of) {
    std::size_t best = kReadWays;
    for (std::size_t way = 0; way < kReadWays; ++way) {
        if (of.measured[way] > 0 && (best == kReadWays || of.cost[way] < of.cost[best])) {
            best = way;
        }
    }
    return best == kReadWays ? ReadWay::Pread : static_cast<ReadWay>(best);
}

bool ReadChooser::given_enough(const Class& of, std::size_t way) {
    return of.chosen[way] >= kWarmup || of.chosen_bytes[way] >= kWarmupBytes;
}

ReadWay ReadChooser::choose(std::uint64_t size) {
    const std::lock_guard lock(mutex_);
    Class& of = classes_[class_of(size)];
    // Warm-up: of the ways not yet given enough, the one given the fewest bytes (ties: in order).
    std::size_t least = kReadWays;
    for (std::size_t way = 0; way < kReadWays; ++way) {
        if (!given_enough(of, way) &&
            (least == kReadWays || of.chosen_bytes[way] < of.chosen_bytes[least])) {
            least = way;
        }
    }
    if (least != kReadWays) {
        ++of.chosen[least];
        of.chosen_bytes[least] += size;
        return static_cast<ReadWay>(least);
    }
    const ReadWay best = cheapest(of);
    ReadWay way = best;
    if (++of.choices % kExploreEvery == 0) {
        // Exploration: of the other ways, the one measured least.
        std::size_t other = kReadWays;
        for (std::size_t candidate = 0; candidate < kReadWays; ++candidate) {
            if (candidate != static_cast<std::size_t>(best) &&
                (other == kReadWays || of.measured[candidate] < of.measured[other])) {
                other = candidate;
            }
        }
        way = static_cast<ReadWay>(other);
    }
    ++of.chosen[static_cast<std::size_t>(way)];
    of.chosen_bytes[static_cast<std::size_t>(way)] += size;
    return way;
}

void ReadChooser::record(std::uint64_t size, ReadWay way, std::uint64_t cpu_ns) {
    if (size == 0) {
        return;
    }
    const double cost = static_cast<double>(cpu_ns) / static_cast<double>(size);
    const std::lock_guard lock(mutex_);
    Class& of = classes_[class_of(size)];
    const auto index = static_cast<std::size_t>(way);
    const std::uint64_t measured = ++of.measured[index];
    const bool warm = measured > kWarmup || of.measured_bytes[index] >= kWarmupBytes;
    of.measured_bytes[index] += size;
    double& average = of.cost[index];
    // A plain mean over the warm-up, then a moving average that follows changes.
    const double weight = warm ? kNewest : 1.0 / static_cast<double>(measured);
    average += weight * (cost - average);
}

std::vector<ReadStanding> ReadChooser::standings() const {
    const std::lock_guard lock(mutex_);
    std::vector<ReadStanding> out;
    for (std::size_t index = 0; index < classes_.size(); ++index) {
        const Class& of = classes_[index];
        ReadStanding standing;
        standing.low = index == 0 ? 0 : kClassBounds[index - 1];
        standing.high = index < kClassBounds.size() ? kClassBounds[index] : 0;
        standing.files = of.measured;
        for (std::size_t way = 0; way < kReadWays; ++way) {
            standing.cpu_ns_per_mib[way] = of.cost[way] * static_cast<double>(1 << 20);
        }
        standing.warm = true;
        for (std::size_t way = 0; way < kReadWays; ++way) {
            standing.warm = standing.warm &&
                            (of.measured[way] >= kWarmup || of.measured_bytes[way] >= kWarmupBytes);
        }
        standing.choice = standing.warm ? cheapest(of) : ReadWay::Pread;
        out.push_back(standing);
    }
    return out;
}

}  // namespace rpmirror::checksum
