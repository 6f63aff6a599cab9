// Parallel hashing and verification: each worker owns one FileHasher (one digest context, one
// read buffer), and pulls files from a shared cursor, largest first.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <limits>
#include <numeric>
#include <system_error>
#include <thread>

#include "checksum/hasher.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "util/parallel.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror {
namespace {

// The order in which the workers claim the files (`order`: request indexes), and each file's
// size in request order (`sizes`).
struct HashOrder {
    std::vector<std::size_t> order;
    std::vector<std::uint64_t> sizes;
};

// The order in which to hand out `count` files whose sizes `size_of(index)` gives: largest
// first (stable among equal sizes), so the last file a worker picks up is a small one and no
// worker is left alone hashing a big file at the end while the others idle.
template <typename SizeOf>
HashOrder largest_first(std::size_t count, const SizeOf& size_of) {
    HashOrder made;
    made.sizes.resize(count);
    for (std::size_t index = 0; index < count; ++index) {
        made.sizes[index] = size_of(index);
    }
    made.order.resize(count);
    std::iota(made.order.begin(), made.order.end(), std::size_t{0});
    std::stable_sort(made.order.begin(), made.order.end(), [&made](std::size_t a, std::size_t b) {
        return made.sizes[a] > made.sizes[b];
    });
    return made;
}

// True iff the first and the last byte of the open file `fd` (`size` bytes) are in the page
// cache: preadv2(RWF_NOWAIT) reads them only from there. A filesystem without RWF_NOWAIT
// counts as not cached (reading ahead there costs one fadvise).
bool probably_cached(int fd, std::uint64_t size) {
    char byte = 0;
    for (const std::uint64_t offset : {std::uint64_t{0}, size - 1}) {
        iovec vector{&byte, 1};
        if (::preadv2(fd, &vector, 1, static_cast<off_t>(offset), RWF_NOWAIT) != 1) {
            return false;
        }
    }
    return true;
}

// Asks the kernel to read `path` into the page cache now (posix_fadvise WILLNEED), unless it
// will not be read (missing, not regular, empty, of another size than `expected_size`, or with
// a cached digest of `type` the hasher will believe: HashOptions' rule) or is cached already.
// Advice only.
void read_ahead(const std::filesystem::path& path, std::optional<std::uint64_t> expected_size,
                std::optional<ChecksumType> type, const HashOptions& hash) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
    struct stat st {};
    if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
        return;
    }
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if ((expected_size && *expected_size != size) ||
        (hash.use_cache && hash.trust && type && hash.trust->vouches_for(st) &&
         read_own_cached_digest(fd.get(), st, *type)) ||
        probably_cached(fd.get(), size)) {
        return;
    }
    ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_WILLNEED);
}

// Reads ahead of the workers, on a thread of its own, the files they will claim next, at most
// kReadAheadBytes beyond the last one claimed. With the page cache cold, a worker otherwise
// waits for its own file's reads, between files too, and the disk sees only as many streams as
// there are workers: `bench/sync --profile full --scenarios rehash-cold` (3.2 GB, 2 workers)
// took 3.19 s without it against `cat`'s 2.95 s, and 2.33 s with it against 3.21 s (medians
// of 3). With the cache warm it costs one open, one getxattr and two 1-byte reads per file.
class ReadAhead {
  public:
    static constexpr std::uint64_t kReadAheadBytes = 64ULL << 20;

    // `read_ahead_one(index)` reads ahead the file of request `index`; `made` is the order the
    // workers claim them in.
    ReadAhead(const HashOrder& made, std::function<void(std::size_t)> read_ahead_one,
              std::stop_token stop)
        : made_(made), read_ahead_one_(std::move(read_ahead_one)), stop_(std::move(stop)) {
        before_.resize(made_.order.size() + 1, 0);
        for (std::size_t position = 0; position < made_.order.size(); ++position) {
            // Capped: a size from metadata may be absurd, and the sum must not wrap.
            before_[position + 1] =
                before_[position] + std::min(made_.sizes[made_.order[position]], kReadAheadBytes);
        }
        if (made_.order.size() > 1) {
            thread_ = std::jthread([this] { run(); });
        }
    }
    ReadAhead(const ReadAhead&) = delete;
    ReadAhead& operator=(const ReadAhead&) = delete;
    ~ReadAhead() {
        claimed_.store(kDone);
        claimed_.notify_all();
    }  // thread_ joins here

    // A worker took the file at `position` of the order.
    void claimed(std::size_t position) {
        std::size_t seen = claimed_.load();
        while (seen != kDone && position > seen &&
               !claimed_.compare_exchange_weak(seen, position)) {
        }
        claimed_.notify_all();
    }

  private:
    static constexpr std::size_t kDone = std::numeric_limits<std::size_t>::max();

    void run() {
        for (std::size_t next = 1; next < made_.order.size(); ++next) {
            std::size_t claimed = claimed_.load();
            // Wait while the files between the last claimed one and `next` make the budget.
            while (claimed != kDone && claimed < next &&
                   before_[next] - before_[claimed + 1] >= kReadAheadBytes &&
                   !stop_.stop_requested()) {
                claimed_.wait(claimed);
                claimed = claimed_.load();
            }
            if (claimed == kDone || stop_.stop_requested()) {
                return;
            }
            if (claimed < next) {  // else a worker has it already
                read_ahead_one_(made_.order[next]);
            }
        }
    }

    const HashOrder& made_;
    std::function<void(std::size_t)> read_ahead_one_;
    std::stop_token stop_;
    std::vector<std::uint64_t> before_;  // before_[p]: bytes of the files at positions < p
    std::atomic<std::size_t> claimed_{0};
    std::jthread thread_;
};

// The size of the file at `path` as a stat sees it now, 0 iff it cannot be stat'ed (the
// hasher reports why when it gets there).
std::uint64_t current_size(const std::filesystem::path& path) {
    std::error_code error;
    const std::uintmax_t size = std::filesystem::file_size(path, error);
    return error ? 0 : static_cast<std::uint64_t>(size);
}

// Runs, on options.threads workers, each with its own processor from `make_process()`, the
// processor for every request index, in `made`'s order; `read_ahead_one(index)` reads the
// request's file ahead of them (ReadAhead).
template <typename MakeProcess>
void for_each_in_hash_order(const HashOrder& made, const VerifyOptions& options,
                            std::function<void(std::size_t)> read_ahead_one,
                            const MakeProcess& make_process) {
    ReadAhead read_ahead_of_workers(made, std::move(read_ahead_one), options.hash.stop);
    for_each_index_in_parallel(made.order.size(), options.threads, [&] {
        return [&made, &read_ahead_of_workers,
                process = make_process()](std::size_t position) mutable {
            read_ahead_of_workers.claimed(position);
            process(made.order[position]);
        };
    });
}

}  // namespace

std::vector<VerifyResult> verify_files(std::span<const VerifyRequest> requests,
                                       const VerifyOptions& options) {
    // The expected size orders the files; without one, the file's current size.
    const HashOrder made = largest_first(requests.size(), [&requests](std::size_t index) {
        const VerifyRequest& request = requests[index];
        return request.expected_size ? *request.expected_size : current_size(request.path);
    });
    std::vector<VerifyResult> results(requests.size());
    for_each_in_hash_order(
        made, options,
        [&requests, &options](std::size_t index) {
            const VerifyRequest& request = requests[index];
            read_ahead(request.path, request.expected_size, request.type, options.hash);
        },
        [&] {
            return [&results, &requests,
                    hasher = FileHasher(options.hash)](std::size_t index) mutable {
                results[index] = hasher.verify(requests[index]);
            };
        });
    return results;
}

std::vector<Result<FileDigest>> hash_files(std::span<const std::filesystem::path> paths,
                                           ChecksumType type, const VerifyOptions& options) {
    const HashOrder made = largest_first(
        paths.size(), [&paths](std::size_t index) { return current_size(paths[index]); });
    std::vector<Result<FileDigest>> results(paths.size());
    for_each_in_hash_order(
        made, options,
        [&paths, type, &options](std::size_t index) {
            read_ahead(paths[index], std::nullopt, type, options.hash);
        },
        [&] {
            return [&results, &paths, type,
                    hasher = FileHasher(options.hash)](std::size_t index) mutable {
                results[index] = hasher.hash(paths[index], type);
            };
        });
    return results;
}

}  // namespace rpmirror
