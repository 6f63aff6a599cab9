// Shared helpers of the download tests: deterministic file contents, requests for them, and a
// fixture with a served directory, a destination root and fast retry options.
#pragma once

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "checksum/hasher.hpp"
#include "download/download.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror::test {

// Returns `size` pseudo-random bytes, the same for the same `seed` on every run.
inline std::string content_bytes(std::size_t size, std::uint64_t seed) {
    std::mt19937_64 generator(seed);
    std::string bytes(size, '\0');
    for (std::size_t index = 0; index < size; index += 8) {
        const std::uint64_t word = generator();
        for (std::size_t byte = 0; byte < 8 && index + byte < size; ++byte) {
            bytes[index + byte] = static_cast<char>((word >> (8 * byte)) & 0xFF);
        }
    }
    return bytes;
}

inline std::string read_all(const std::filesystem::path& path) {
    std::ifstream stream(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(stream), std::istreambuf_iterator<char>()};
}

inline DownloadRequest make_request(std::shared_ptr<MirrorList> mirrors, const std::string& href,
                                    const std::string& content,
                                    std::filesystem::path destination = {}) {
    DownloadRequest request;
    request.mirrors = std::move(mirrors);
    request.href = href;
    request.destination = destination.empty() ? std::filesystem::path(href) : destination;
    request.checksum_type = ChecksumType::Sha256;
    request.expected_digest = hash_bytes(ChecksumType::Sha256, content);
    request.expected_size = content.size();
    return request;
}

// Options that keep failure tests fast: short backoffs, a capped Retry-After.
inline DownloadOptions fast_options(unsigned io_threads) {
    DownloadOptions options;
    options.retries = 4;
    options.retry_base_delay = std::chrono::milliseconds(5);
    options.max_retry_delay = std::chrono::milliseconds(20);
    options.max_retry_after = std::chrono::milliseconds(20);
    options.connect_timeout = std::chrono::seconds(5);
    options.io_threads = io_threads;
    return options;
}

}  // namespace rpmirror::test
