// The counters `rpmirror serve` exposes at /metrics, in the Prometheus text format.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace rpmirror::serve {

// One job's counters (job "" counts the requests that name no job).
struct JobCounters {
    std::atomic<std::uint64_t> requests{0};  // every request
    std::atomic<std::uint64_t> hits{0};      // answered from the store (200, 206, 304, 416)
    std::atomic<std::uint64_t> misses{0};    // 404: not listed, or listed and not held
    std::atomic<std::uint64_t> refused{0};   // 404: a hostile path (also a miss)
    std::atomic<std::uint64_t> errors{0};    // 5xx
    std::atomic<std::uint64_t> bytes{0};     // response body bytes queued
    // On-demand and streamed jobs (serve/on_demand.hpp): packages fetched from upstream, those
    // that failed (not fetched, or not matching the metadata), and the time the fetches took.
    std::atomic<std::uint64_t> upstream_fetches{0};
    std::atomic<std::uint64_t> upstream_failures{0};
    std::atomic<std::uint64_t> upstream_milliseconds{0};
    // On-demand jobs with cache-max-size (serve/eviction.hpp): packages removed to keep under the
    // bound, and the bytes of packages held now (a gauge).
    std::atomic<std::uint64_t> evictions{0};
    std::atomic<std::uint64_t> held_bytes{0};
};

// The counters of every job. Thread-safe: the set of jobs is fixed at construction, the counters
// are atomics.
class ServeCounters {
  public:
    explicit ServeCounters(const std::vector<std::string>& jobs);

    // The counters of `job`, or those of requests outside every job iff it is not one.
    JobCounters& job(std::string_view name);

    // Every counter as Prometheus text: # HELP and # TYPE (counter, or gauge for held bytes),
    // then one sample per job (label `job`, escaped), sorted by job name.
    std::string text() const;

  private:
    std::map<std::string, JobCounters, std::less<>> jobs_;
};

}  // namespace rpmirror::serve
