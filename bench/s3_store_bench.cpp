// The object store's own limits as rpmirror's S3 client sees them; run it through bench/s3-store.
//
//   s3_store_bench MODE BUCKET SIZE CLIENTS COUNT
//
// MODE put|get (SIZE-byte objects, COUNT per client), small-put|head (COUNT requests per client;
// small-put writes 1 KiB objects, head reads what small-put wrote), list (COUNT / 10 listings
// per client of the COUNT keys its small-put wrote, in pages of 1000 keys as rpmirror lists: one
// request each for COUNT <= 1000); clean deletes every object of BUCKET. CLIENTS threads, each
// with its own S3Client (from the environment, as rpmirror resolves it). Prints one JSON line:
// {"mode", "size", "clients", "requests", "keys", "bytes", "seconds"} (keys: listed, list mode
// only). Exit 1 on any failed request (named on stderr).
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <fmt/core.h>

#include "rpmirror/s3/s3.hpp"
#include "s3/client.hpp"
#include "s3/config.hpp"

namespace {

using rpmirror::s3::S3Client;

std::string body_of(std::size_t size, unsigned seed) {
    std::string body(size, '\0');
    std::uint64_t state = 0x9E3779B97F4A7C15ULL * (seed + 1);
    for (char& byte : body) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        byte = static_cast<char>(state >> 56);
    }
    return body;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 6) {
        std::fprintf(stderr,
                     "usage: s3_store_bench put|get|small-put|head|list BUCKET SIZE "
                     "CLIENTS COUNT\n");
        return 2;
    }
    const std::string mode = argv[1];
    const std::string bucket = argv[2];
    const std::size_t size = std::strtoull(argv[3], nullptr, 10);
    const unsigned clients = static_cast<unsigned>(std::strtoul(argv[4], nullptr, 10));
    const unsigned count = static_cast<unsigned>(std::strtoul(argv[5], nullptr, 10));
    auto config = rpmirror::s3::resolve_config({}, rpmirror::s3::process_environment());
    if (!config) {
        std::fprintf(stderr, "%s\n", config.error().to_string().c_str());
        return 1;
    }
    {
        S3Client setup(*config);
        if (auto created = setup.create_bucket(bucket); !created) {
            std::fprintf(stderr, "%s\n", created.error().to_string().c_str());
            return 1;
        }
    }
    if (mode == "clean") {  // delete every object of the bucket (the store may be in RAM)
        S3Client client(*config);
        auto listed = client.list_all_objects(bucket, "");
        std::vector<std::string> keys;
        for (const auto& object : listed ? *listed : std::vector<rpmirror::s3::ListedObject>{}) {
            keys.push_back(object.key);
        }
        auto removed = client.delete_objects(bucket, keys);
        if (!listed || !removed) {
            std::fprintf(stderr, "%s\n",
                         (!listed ? listed.error() : removed.error()).to_string().c_str());
            return 1;
        }
        return 0;
    }
    std::atomic<bool> failed{false};
    std::atomic<std::uint64_t> requests{0};
    std::atomic<std::uint64_t> bytes{0};
    std::atomic<std::uint64_t> keys{0};
    const std::string big = mode == "put" ? body_of(size, 1) : std::string();
    const std::string small = body_of(1024, 2);
    const auto started = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    for (unsigned client_index = 0; client_index < clients; ++client_index) {
        threads.emplace_back([&, client_index] {
            S3Client client(*config);
            for (unsigned index = 0; index < count && !failed; ++index) {
                const std::string object = fmt::format("o{}-{}", client_index, index);
                const std::string big_key = fmt::format("big/{}/{}", size, object);
                const std::string small_key = "small/" + object;
                bool ok = true;
                std::string error;
                if (mode == "put") {
                    rpmirror::s3::PutOptions options;
                    options.sha256 = "";  // computed, as for a package from a non-sha256 repo
                    auto put = client.put_object(bucket, big_key, big, options);
                    ok = put.has_value();
                    error = ok ? "" : put.error().to_string();
                    bytes += ok ? size : 0;
                } else if (mode == "get") {
                    std::uint64_t received = 0;
                    auto got = client.get_object(
                        bucket, big_key,
                        [&received](std::span<const char> chunk) -> rpmirror::Result<void> {
                            received += chunk.size();
                            return {};
                        });
                    ok = got.has_value();
                    error = ok ? "" : got.error().to_string();
                    bytes += received;
                } else if (mode == "small-put") {
                    auto put = client.put_object(bucket, small_key, small);
                    ok = put.has_value();
                    error = ok ? "" : put.error().to_string();
                } else if (mode == "head") {
                    auto head = client.head_object(bucket, small_key);
                    ok = head.has_value();
                    error = ok ? "" : head.error().to_string();
                } else if (mode == "list") {
                    if (index % 10 != 0) {
                        continue;  // COUNT / 10 listings, each of this client's COUNT keys
                    }
                    auto listed = client.list_objects(
                        bucket, fmt::format("small/o{}-", client_index),
                        [&keys](const rpmirror::s3::ListedObject&) -> rpmirror::Result<void> {
                            ++keys;
                            return {};
                        });
                    ok = listed.has_value();
                    error = ok ? "" : listed.error().to_string();
                } else {
                    ok = false;
                    error = "unknown mode " + mode;
                }
                if (!ok) {
                    std::fprintf(stderr, "%s\n", error.c_str());
                    failed = true;
                }
            }
            requests += client.request_count();
        });
    }
    for (std::thread& thread : threads) {
        thread.join();
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    fmt::print(
        "{{\"mode\": \"{}\", \"size\": {}, \"clients\": {}, \"requests\": {}, "
        "\"keys\": {}, \"bytes\": {}, \"seconds\": {:.4f}}}\n",
        mode, size, clients, requests.load(), keys.load(), bytes.load(), seconds);
    return failed ? 1 : 0;
}
