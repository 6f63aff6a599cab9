// The bound on what an on-demand job's mirror holds (job key cache-max-size): when a package
// fetched on demand is kept and the packages held exceed the bound, the least recently served are
// removed through the job's store (JobCatalogue::remove) until they fit again. Never removed:
// metadata (only the packages the published revision lists are counted), the package just kept,
// and a package a kept snapshot holds (asked anew at each pass: snapshots come and go while the
// server runs). A removed package is "listed, not held" again: its next request fetches it on
// demand.
//
// What counts: every listed package the store holds, whoever fetched it (on demand, or the
// sync's prefetch). The held set is read from the store (a stat of each listed package) when
// the server starts and whenever the published revision changed since the last read, so what a
// sync prefetched meanwhile counts from the next keep on. Last-served times are kept in memory;
// a package not served since the start is as recent as its file's modification time where the
// store tells one (a disk's; atime is left alone: often not kept), else as old as can be.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "rpmirror/util/error.hpp"
#include "serve/counters.hpp"

namespace rpmirror::serve {

class JobCatalogue;

// Thread-safe.
class HeldPackages {
  public:
    // The keys of the live mirror that the job's kept snapshots hold (injected by the caller:
    // serve does not know snapshots). An error: nothing is removed in that pass.
    using SnapshotKeys = std::function<Result<std::unordered_set<std::string>>()>;

    // `catalogue` (which must outlive this) bounded to `bound` bytes (> 0); `snapshot_keys`
    // null: no snapshot protects anything; `counters` (evictions, held_bytes) null: nowhere.
    HeldPackages(JobCatalogue& catalogue, std::uint64_t bound, SnapshotKeys snapshot_keys,
                 JobCounters* counters);

    // Called with a complete message when a pass cannot do its work. Set before first use.
    void set_warn(std::function<void(const std::string&)> warn) { warn_ = std::move(warn); }

    // `key` was served (a hit): the most recently served from now on.
    void served(const std::string& key);

    // `key` (`size` bytes) was just kept: counted as held and most recently served, then the
    // least recently served others removed until the held bytes fit the bound (or nothing
    // removable is left).
    void kept(const std::string& key, std::uint64_t size);

    // The bytes of the packages held, as last counted.
    std::uint64_t held_bytes() const;

  private:
    struct Entry {
        std::uint64_t size = 0;
        std::uint64_t last_served = 0;  // ns since the epoch (or a seed), increasing
    };
    void reread_locked();
    void evict_locked(const std::string& kept);
    std::uint64_t now_locked();
    void publish_locked();

    JobCatalogue& catalogue_;
    const std::uint64_t bound_;
    SnapshotKeys snapshot_keys_;
    JobCounters* counters_;
    std::function<void(const std::string&)> warn_;
    mutable std::mutex mutex_;
    std::unordered_map<std::string, Entry> held_;
    std::uint64_t bytes_ = 0;
    std::uint64_t last_tick_ = 0;
    std::string revision_;  // Revision::version of the revision the held set was read from
    bool read_ = false;
};

}  // namespace rpmirror::serve
