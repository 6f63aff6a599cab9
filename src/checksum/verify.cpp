// Parallel hashing and verification: each worker owns one FileHasher (one digest context, one
// read buffer), and pulls files from a shared cursor.
#include "rpmirror/checksum.hpp"
#include "util/parallel.hpp"

namespace rpmirror {

std::vector<VerifyResult> verify_files(std::span<const VerifyRequest> requests,
                                       const VerifyOptions& options) {
    std::vector<VerifyResult> results(requests.size());
    for_each_index_in_parallel(requests.size(), options.threads, [&] {
        return [&results, &requests, hasher = FileHasher(options.hash)](std::size_t index) mutable {
            results[index] = hasher.verify(requests[index]);
        };
    });
    return results;
}

std::vector<Result<FileDigest>> hash_files(std::span<const std::filesystem::path> paths,
                                           ChecksumType type, const VerifyOptions& options) {
    std::vector<Result<FileDigest>> results(paths.size());
    for_each_index_in_parallel(paths.size(), options.threads, [&] {
        return [&results, &paths, type, hasher = FileHasher(options.hash)](
                   std::size_t index) mutable { results[index] = hasher.hash(paths[index], type); };
    });
    return results;
}

}  // namespace rpmirror
