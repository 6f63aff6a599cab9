// Parallel hashing and verification: each worker owns one FileHasher (one digest context, one
// read buffer), and pulls files from a shared cursor, largest first.
#include <algorithm>
#include <numeric>
#include <system_error>

#include "rpmirror/checksum.hpp"
#include "util/parallel.hpp"

namespace rpmirror {
namespace {

// The order in which to hand out `count` files whose sizes `size_of(index)` gives: largest
// first (stable among equal sizes), so the last file a worker picks up is a small one and no
// worker is left alone hashing a big file at the end while the others idle.
template <typename SizeOf>
std::vector<std::size_t> largest_first(std::size_t count, const SizeOf& size_of) {
    std::vector<std::uint64_t> sizes(count);
    for (std::size_t index = 0; index < count; ++index) {
        sizes[index] = size_of(index);
    }
    std::vector<std::size_t> order(count);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&sizes](std::size_t a, std::size_t b) { return sizes[a] > sizes[b]; });
    return order;
}

// The size of the file at `path` as a stat sees it now, 0 iff it cannot be stat'ed (the
// hasher reports why when it gets there).
std::uint64_t current_size(const std::filesystem::path& path) {
    std::error_code error;
    const std::uintmax_t size = std::filesystem::file_size(path, error);
    return error ? 0 : static_cast<std::uint64_t>(size);
}

}  // namespace

std::vector<VerifyResult> verify_files(std::span<const VerifyRequest> requests,
                                       const VerifyOptions& options) {
    // The expected size orders the files; without one, the file's current size.
    const std::vector<std::size_t> order =
        largest_first(requests.size(), [&requests](std::size_t index) {
            const VerifyRequest& request = requests[index];
            return request.expected_size ? *request.expected_size : current_size(request.path);
        });
    std::vector<VerifyResult> results(requests.size());
    for_each_index_in_parallel(requests.size(), options.threads, [&] {
        return [&results, &requests, &order,
                hasher = FileHasher(options.hash)](std::size_t position) mutable {
            const std::size_t index = order[position];
            results[index] = hasher.verify(requests[index]);
        };
    });
    return results;
}

std::vector<Result<FileDigest>> hash_files(std::span<const std::filesystem::path> paths,
                                           ChecksumType type, const VerifyOptions& options) {
    const std::vector<std::size_t> order = largest_first(
        paths.size(), [&paths](std::size_t index) { return current_size(paths[index]); });
    std::vector<Result<FileDigest>> results(paths.size());
    for_each_index_in_parallel(paths.size(), options.threads, [&] {
        return [&results, &paths, &order, type,
                hasher = FileHasher(options.hash)](std::size_t position) mutable {
            const std::size_t index = order[position];
            results[index] = hasher.hash(paths[index], type);
        };
    });
    return results;
}

}  // namespace rpmirror
