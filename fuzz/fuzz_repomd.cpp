// Fuzzes the repomd.xml parser (libxml2 SAX2), then what sync does with each record's href:
// the lexical safety check and the URL join.
#include <cstddef>
#include <cstdint>
#include <string>

#include "checksum/hasher.hpp"
#include "fuzz_support.hpp"
#include "metadata/metadata.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto repomd = rpmirror::parse_repomd(rpmirror::fuzz::as_text(data, size), "fuzz");
    if (!repomd) {
        (void)repomd.error().to_string();
        return 0;
    }
    for (const auto& record : repomd->records) {
        if (record.type.empty() || record.location_href.empty())
            __builtin_trap();
        if (!rpmirror::is_valid_hex_digest(record.checksum.type, record.checksum.hex)) {
            __builtin_trap();
        }
        auto relative = rpmirror::safe_relative_path(record.location_href, record.type);
        if (relative) {
            // A safe path without a safe_write_path is relative and never climbs out.
            if (relative->is_absolute() || relative->empty())
                __builtin_trap();
            if (*relative->begin() == "..")
                __builtin_trap();
        } else {
            (void)relative.error().to_string();
        }
        const auto base =
            rpmirror::pick_base_url("http://mirror.example/repo/", record.location_base);
        (void)rpmirror::join_url(base, record.location_href);
    }
    (void)repomd->find("primary");
    return 0;
}
