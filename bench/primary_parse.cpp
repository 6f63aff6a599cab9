// Parses one primary.xml (any compression) into a PackageIndex and reports throughput and
// peak memory. Run each input in a fresh process (bench/primary does) so ru_maxrss is its own.
//
//   primary_parse [--decompress-only] [--runs N] [--buffer-kib K] FILE
//
// Prints one tab-separated line:
//   compression  compressed_MB  xml_MB  packages  seconds  xml_MB/s  packages/s  peak_rss_MB
//   index_MB
// `seconds` is the best of N runs (wall clock; the codec runs on a thread of its own, ahead of
// the parser, as in rpmirror). With --decompress-only the XML is
// decompressed and discarded (packages = 0), which separates codec time from parse time.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "index/index.hpp"

namespace {

struct RunResult {
    double seconds = 0;
    std::uint64_t xml_bytes = 0;
    std::size_t packages = 0;
    std::size_t index_bytes = 0;
    rpmirror::Compression compression = rpmirror::Compression::None;
};

int fail(const rpmirror::Error& error) {
    std::fprintf(stderr, "primary_parse: %s\n", error.to_string().c_str());
    return 1;
}

}  // namespace

int main(int argc, char** argv) {
    bool decompress_only = false;
    int runs = 1;
    std::filesystem::path input;
    rpmirror::DecompressOptions options;
    for (int position = 1; position < argc; ++position) {
        const std::string_view argument = argv[position];
        if (argument == "--decompress-only") {
            decompress_only = true;
        } else if (argument == "--runs" && position + 1 < argc) {
            runs = std::max(1, std::atoi(argv[++position]));
        } else if (argument == "--buffer-kib" && position + 1 < argc) {
            options.buffer_size =
                static_cast<std::size_t>(std::max(1, std::atoi(argv[++position]))) * 1024;
        } else if (!argument.empty() && argument.front() != '-' && input.empty()) {
            input = argument;
        } else {
            std::fprintf(
                stderr,
                "usage: primary_parse [--decompress-only] [--runs N] [--buffer-kib K] FILE\n");
            return 2;
        }
    }
    if (input.empty()) {
        std::fprintf(stderr,
                     "usage: primary_parse [--decompress-only] [--runs N] [--buffer-kib K] FILE\n");
        return 2;
    }

    RunResult best;
    for (int run = 0; run < runs; ++run) {
        RunResult result;
        const auto started = std::chrono::steady_clock::now();
        if (decompress_only) {
            auto reader = rpmirror::Decompressor::open(input, options);
            if (!reader) {
                return fail(reader.error());
            }
            while (true) {
                auto chunk = reader->read();
                if (!chunk) {
                    return fail(chunk.error());
                }
                if (chunk->empty()) {
                    break;
                }
            }
            result.xml_bytes = reader->bytes_out();
            result.compression = reader->compression();
        } else {
            auto reader = rpmirror::Decompressor::open(input, options);
            if (!reader) {
                return fail(reader.error());
            }
            result.compression = reader->compression();
            rpmirror::PrimaryParser parser(input.string());
            while (true) {
                auto chunk = reader->read();
                if (!chunk) {
                    return fail(chunk.error());
                }
                if (chunk->empty()) {
                    break;
                }
                if (auto fed = parser.feed(*chunk); !fed) {
                    return fail(fed.error());
                }
            }
            auto index = parser.finish();
            if (!index) {
                return fail(index.error());
            }
            result.xml_bytes = reader->bytes_out();
            result.packages = index->size();
            result.index_bytes = index->memory_bytes();
            for (const auto& issue : index->issues()) {
                std::fprintf(stderr, "primary_parse: %s\n", issue.message.c_str());
            }
        }
        result.seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        if (run == 0 || result.seconds < best.seconds) {
            best = result;
        }
    }

    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    const double megabyte = 1e6;
    const double xml_mb = static_cast<double>(best.xml_bytes) / megabyte;
    std::printf("%s\t%.1f\t%.1f\t%zu\t%.3f\t%.0f\t%.0f\t%.1f\t%.1f\n",
                std::string(rpmirror::compression_name(best.compression)).c_str(),
                static_cast<double>(std::filesystem::file_size(input)) / megabyte, xml_mb,
                best.packages, best.seconds, xml_mb / best.seconds,
                static_cast<double>(best.packages) / best.seconds,
                static_cast<double>(usage.ru_maxrss) * 1024 / megabyte,
                static_cast<double>(best.index_bytes) / megabyte);
    return 0;
}
