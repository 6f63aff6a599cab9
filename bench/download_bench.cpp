// download_bench: runs rpmirror's download engine once over a manifest (href, size, sha256 per
// line, as bench/gen_repo.py writes it) from one base URL into an empty directory, and prints one
// JSON object: wall seconds, CPU seconds of the loop thread and of the io threads, bytes, files.
// Driven by bench/download, which times it (wall/user/sys) next to curl and dnf reposync.
//
//   download_bench --url http://127.0.0.1:PORT/repo/ --manifest manifest.tsv --dest DIR
//                  [--parallel 16] [--io-threads 1] [--http2-prior-knowledge]
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "download/download.hpp"

namespace {

int usage() {
    std::cerr << "usage: download_bench --url URL --manifest FILE --dest DIR [--parallel N] "
                 "[--io-threads N] [--http2-prior-knowledge]\n";
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    std::string url;
    std::string manifest;
    std::string dest;
    rpmirror::DownloadOptions options;
    for (int index = 1; index < argc; ++index) {
        const std::string arg = argv[index];
        const auto value = [&]() -> std::string {
            if (index + 1 >= argc) {
                std::exit(usage());
            }
            return argv[++index];
        };
        if (arg == "--url") {
            url = value();
        } else if (arg == "--manifest") {
            manifest = value();
        } else if (arg == "--dest") {
            dest = value();
        } else if (arg == "--parallel") {
            options.max_parallel = static_cast<unsigned>(std::stoul(value()));
        } else if (arg == "--io-threads") {
            options.io_threads = static_cast<unsigned>(std::stoul(value()));
        } else if (arg == "--http2-prior-knowledge") {
            options.http2_prior_knowledge = true;
        } else {
            return usage();
        }
    }
    if (url.empty() || manifest.empty() || dest.empty()) {
        return usage();
    }
    auto mirrors = std::make_shared<rpmirror::MirrorList>(std::vector<std::string>{url});
    std::vector<rpmirror::DownloadRequest> requests;
    std::ifstream input(manifest);
    std::string line;
    while (std::getline(input, line)) {
        std::istringstream fields(line);
        rpmirror::DownloadRequest request;
        if (!(fields >> request.href >> request.expected_size >> request.expected_digest)) {
            continue;
        }
        request.mirrors = mirrors;
        request.destination = request.href;
        request.checksum_type = rpmirror::ChecksumType::Sha256;
        requests.push_back(std::move(request));
    }
    rpmirror::Downloader downloader(options);
    auto report = downloader.run(dest, requests);
    if (!report) {
        std::cerr << "download_bench: " << report.error().to_string() << "\n";
        return 1;
    }
    for (const auto& file : report->files) {
        if (file.error) {
            std::cerr << "download_bench: " << file.error->to_string() << "\n";
        }
    }
    std::printf(
        "{\"files\": %zu, \"downloaded\": %zu, \"failed\": %zu, \"bytes\": %llu, "
        "\"wall\": %.3f, \"loop_cpu\": %.3f, \"io_cpu\": %.3f, \"pauses\": %zu}\n",
        requests.size(), report->downloaded, report->failed,
        static_cast<unsigned long long>(report->bytes_received), report->wall_seconds,
        report->loop_thread_cpu_seconds, report->io_thread_cpu_seconds, report->throttle_pauses);
    return report->ok() ? 0 : 1;
}
