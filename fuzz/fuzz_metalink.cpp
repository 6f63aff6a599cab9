// Fuzzes the metalink parser (libxml2 SAX2) and the check of repomd.xml bytes against it.
#include <cstddef>
#include <cstdint>
#include <span>

#include "fuzz_support.hpp"
#include "metadata/metadata.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto metalink = rpmirror::parse_metalink(rpmirror::fuzz::as_text(data, size), "fuzz");
    if (!metalink) {
        (void)metalink.error().to_string();
        return 0;
    }
    // Its contract: a repomd.xml entry with at least one known hash, at least one URL.
    if (metalink->repomd.hashes.empty() || metalink->urls.empty())
        __builtin_trap();
    for (const auto& url : metalink->urls) {
        // As librepo: the URL minus a trailing "repodata/repomd.xml", else the URL itself.
        const bool suffixed = url.url.ends_with("repodata/repomd.xml");
        if (url.url.empty() ||
            (suffixed ? url.base_url + "repodata/repomd.xml" != url.url : url.base_url != url.url))
            __builtin_trap();
    }
    (void)metalink->base_urls();
    const auto bytes = std::as_bytes(std::span(data, size));
    auto verified = rpmirror::verify_repomd_against_metalink(bytes, *metalink);
    if (!verified)
        (void)verified.error().to_string();
    return 0;
}
