// read_methods: hashes the files a list names on every core, one way of reading them, and prints
// the wall time; run through bench/read_engine, which compares each way, the engine's own
// measured choice (auto), openssl, sha256sum and cat on the same files in one run.
//
//   read_methods auto|pread|mmap|mmap-populate LIST
//
// LIST holds one path per line. Prints "seconds=S bytes=B files=N" on stdout and, for auto, the
// chooser's standing per size class ("class LOW HIGH CHOICE|warming-up way:files:cpu_ns_per_mib
// ...").
// Exits 1 if a file cannot be hashed.
#include <chrono>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "checksum/read_chooser.hpp"
#include "rpmirror/checksum/checksum.hpp"

namespace {

int usage() {
    std::cerr << "usage: read_methods auto|pread|mmap|mmap-populate LIST\n";
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        return usage();
    }
    const std::string way = argv[1];
    rpmirror::HashOptions hash{.use_cache = false};
    if (way == "auto") {
        hash.method = rpmirror::ReadMethod::Auto;
    } else if (way == "pread") {
        hash.method = rpmirror::ReadMethod::Pread;
    } else if (way == "mmap") {
        hash.method = rpmirror::ReadMethod::Mmap;
    } else if (way == "mmap-populate") {
        hash.method = rpmirror::ReadMethod::MmapPopulate;
    } else {
        return usage();
    }
    std::ifstream list(argv[2]);
    if (!list) {
        std::cerr << "read_methods: cannot read " << argv[2] << "\n";
        return 2;
    }
    std::vector<std::filesystem::path> paths;
    for (std::string line; std::getline(list, line);) {
        if (!line.empty()) {
            paths.emplace_back(line);
        }
    }
    const auto started = std::chrono::steady_clock::now();
    const auto results = rpmirror::hash_files(paths, rpmirror::ChecksumType::Sha256,
                                              rpmirror::VerifyOptions{.hash = hash});
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
    std::uint64_t bytes = 0;
    for (std::size_t index = 0; index < results.size(); ++index) {
        if (!results[index]) {
            std::cerr << "read_methods: " << results[index].error().to_string() << "\n";
            return 1;
        }
        bytes += results[index]->size;
    }
    std::cout << "seconds=" << took.count() << " bytes=" << bytes << " files=" << paths.size()
              << "\n";
    if (hash.method == rpmirror::ReadMethod::Auto) {
        using rpmirror::checksum::ReadWay;
        for (const auto& standing : rpmirror::checksum::ReadChooser::process().standings()) {
            std::cout << "class " << standing.low << " " << standing.high << " "
                      << (standing.warm ? rpmirror::checksum::read_way_name(standing.choice)
                                        : "warming-up");
            for (const ReadWay candidate : {ReadWay::Pread, ReadWay::Mmap, ReadWay::MmapPopulate}) {
                const auto index = static_cast<std::size_t>(candidate);
                std::cout << " " << rpmirror::checksum::read_way_name(candidate) << ":"
                          << standing.files[index] << ":"
                          << static_cast<std::uint64_t>(standing.cpu_ns_per_mib[index]);
            }
            std::cout << "\n";
        }
    }
    return 0;
}
