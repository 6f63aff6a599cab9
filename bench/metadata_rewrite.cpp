// Times the metadata rewrite of a filtered mirror against reading the same primary.xml.
// Run each mode in a fresh process (bench/metadata_rewrite does, under /usr/bin/time -v) so the
// peak RSS is its own.
//
//   metadata_rewrite read REPO             parse REPO's primary into a PackageIndex
//   metadata_rewrite rewrite REPO STAGE    parse it, keep every other package, and write the
//                                          filtered metadata into STAGE (a copy of REPO/repodata)
//
// Prints one tab-separated line: mode  packages  kept  parse_seconds  rewrite_seconds
// (rewrite_seconds is write_filtered_metadata alone: what a filtered sync adds to reading).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "index/index.hpp"
#include "metadata/metadata.hpp"
#include "publish/filtered_metadata.hpp"

namespace {

int fail(const rpmirror::Error& error) {
    std::fprintf(stderr, "metadata_rewrite: %s\n", error.to_string().c_str());
    return 1;
}

double since(std::chrono::steady_clock::time_point started) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

}  // namespace

int main(int argc, char** argv) {
    const std::vector<std::string_view> args(argv + 1, argv + argc);
    if (args.size() < 2 || (args[0] != "read" && args[0] != "rewrite") ||
        (args[0] == "rewrite" && args.size() != 3)) {
        std::fprintf(stderr, "usage: metadata_rewrite read REPO | rewrite REPO STAGE\n");
        return 2;
    }
    const std::filesystem::path repo(args[1]);
    std::ifstream stream(repo / "repodata" / "repomd.xml", std::ios::binary);
    const std::string repomd_bytes((std::istreambuf_iterator<char>(stream)),
                                   std::istreambuf_iterator<char>());
    auto repomd = rpmirror::parse_repomd(repomd_bytes, "repomd.xml");
    if (!repomd) {
        return fail(repomd.error());
    }
    const rpmirror::RepomdRecord* primary = repomd->find("primary");
    if (primary == nullptr) {
        std::fprintf(stderr, "metadata_rewrite: no primary record\n");
        return 1;
    }
    auto started = std::chrono::steady_clock::now();
    rpmirror::PrimaryParseOptions options;
    options.decompress.expected_size = primary->open_size;
    auto index = rpmirror::parse_primary_file(repo / primary->location_href, options);
    if (!index) {
        return fail(index.error());
    }
    const double parse_seconds = since(started);
    std::vector<rpmirror::KeptPackage> kept;
    double rewrite_seconds = 0;
    if (args[0] == "rewrite") {
        for (std::size_t position = 0; position < index->size(); position += 2) {
            const rpmirror::PackageView package = (*index)[position];
            kept.push_back({package.checksum_hex(), std::string(package.location_href),
                            package.strict_nevra()});
        }
        started = std::chrono::steady_clock::now();
        auto written = rpmirror::write_filtered_metadata(args[2], *repomd, kept);
        if (!written) {
            return fail(written.error());
        }
        rewrite_seconds = since(started);
    }
    std::printf("%s\t%zu\t%zu\t%.3f\t%.3f\n", std::string(args[0]).c_str(), index->size(),
                kept.size(), parse_seconds, rewrite_seconds);
    return 0;
}
