// Times reading and trimming updateinfo.xml, the work --advisories and a filtered mirror add to a
// sync. Run each mode in a fresh process (bench/advisories does, under /usr/bin/time -v) so the
// peak RSS is its own.
//
//   advisories_bench parse FILE    read every advisory (parse_updateinfo_file), then select the
//                                  security ones (advisory_selected), as --advisories does
//   advisories_bench trim FILE     trim the file (trim_updateinfo_xml) to the security advisories
//                                  and every other package they list, as a filtered mirror's
//                                  publish does
//
// Prints one tab-separated line: mode  advisories  selected_or_left_out  seconds
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "index/updateinfo.hpp"
#include "rpmirror/index/updateinfo.hpp"

namespace {

int fail(const rpmirror::Error& error) {
    std::fprintf(stderr, "advisories_bench: %s\n", error.to_string().c_str());
    return 1;
}

double since(std::chrono::steady_clock::time_point started) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

}  // namespace

int main(int argc, char** argv) {
    const std::vector<std::string_view> args(argv + 1, argv + argc);
    if (args.size() != 2 || (args[0] != "parse" && args[0] != "trim")) {
        std::fprintf(stderr, "usage: advisories_bench parse FILE | trim FILE\n");
        return 2;
    }
    const std::filesystem::path file(args[1]);
    rpmirror::AdvisoryFilter security;
    security.types = {"security"};
    // Both modes need the advisories; trim also needs the kept NEVRAs (every other one listed).
    auto started = std::chrono::steady_clock::now();
    auto advisories = rpmirror::parse_updateinfo_file(file, file.string());
    if (!advisories) {
        return fail(advisories.error());
    }
    std::size_t selected = 0;
    std::unordered_set<std::string> kept;
    bool every_other = false;
    for (const rpmirror::Advisory& advisory : *advisories) {
        if (rpmirror::advisory_selected(advisory, security, std::nullopt)) {
            ++selected;
        }
        for (const std::string& nevra : advisory.nevras) {
            if ((every_other = !every_other)) {
                kept.insert(nevra);
            }
        }
    }
    double seconds = since(started);
    std::size_t count = selected;
    if (args[0] == "trim") {
        std::ifstream stream(file, std::ios::binary);
        const std::string xml((std::istreambuf_iterator<char>(stream)),
                              std::istreambuf_iterator<char>());
        started = std::chrono::steady_clock::now();
        auto trimmed = rpmirror::trim_updateinfo_xml(xml, kept, security, std::nullopt, "bench");
        if (!trimmed) {
            return fail(trimmed.error());
        }
        seconds = since(started);
        count = *trimmed ? (*trimmed)->left_out.size() : 0;
    }
    std::printf("%s\t%zu\t%zu\t%.3f\n", std::string(args[0]).c_str(), advisories->size(), count,
                seconds);
    return 0;
}
