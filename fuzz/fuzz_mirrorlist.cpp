// Fuzzes the mirrorlist parser.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.hpp"
#include "metadata/metadata.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto mirrors = rpmirror::parse_mirrorlist(rpmirror::fuzz::as_text(data, size), "fuzz");
    if (!mirrors) {
        (void)mirrors.error().to_string();
        return 0;
    }
    // Its contract: at least one mirror on success, each a URL or an absolute path.
    if (mirrors->empty())
        __builtin_trap();
    for (const auto& url : *mirrors) {
        if (url.find("://") == std::string::npos && !url.starts_with('/'))
            __builtin_trap();
        (void)rpmirror::join_url(url, "repodata/repomd.xml");
    }
    return 0;
}
