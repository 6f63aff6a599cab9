// A minimal work-sharing pool for "do this for every item" jobs.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace rpmirror {

// Returns the number of workers to use: `requested`, or all cores iff it is 0, never more than
// there are items and never fewer than one.
inline unsigned effective_worker_count(unsigned requested, std::size_t item_count) {
    unsigned threads = requested != 0 ? requested : std::thread::hardware_concurrency();
    threads = std::max(threads, 1U);
    return static_cast<unsigned>(
        std::min<std::size_t>(threads, std::max<std::size_t>(item_count, 1)));
}

// Runs `process(index)` for every index in [0, item_count) on `threads` workers (the calling
// thread is one of them). Each worker first calls `make_process()` to build its own processor,
// so per-worker state (a hasher, a buffer) is allocated once. Items are handed out one at a time
// from an atomic cursor, so one slow item cannot leave the other workers idle at the end.
// Returns after every item has been processed.
template <typename MakeProcess>
void for_each_index_in_parallel(std::size_t item_count, unsigned threads,
                                const MakeProcess& make_process) {
    std::atomic<std::size_t> next_index{0};
    auto work = [&] {
        auto process = make_process();
        for (std::size_t index = next_index.fetch_add(1); index < item_count;
             index = next_index.fetch_add(1)) {
            process(index);
        }
    };
    const unsigned worker_count = effective_worker_count(threads, item_count);
    std::vector<std::jthread> workers;
    workers.reserve(worker_count - 1);
    for (unsigned worker = 1; worker < worker_count; ++worker) {
        workers.emplace_back(work);
    }
    work();
}  // jthreads join here

}  // namespace rpmirror
