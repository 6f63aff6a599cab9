// Fuzzes primary.xml reading end to end: decompression detected by content (gzip, xz, zstd,
// bzip2, or plain), the streaming SAX parser into the package index, then what sync does with
// the index: selection (newest-only, arches, globs) and the href safety check.
#include <cstddef>
#include <cstdint>
#include <string>

#include "checksum/hasher.hpp"
#include "fuzz_support.hpp"
#include "index/index.hpp"
#include "metadata/metadata.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static rpmirror::fuzz::MemoryFile file;
    file.assign(data, size);

    rpmirror::PrimaryParseOptions options;
    // Bounds the work per input: a small ceiling stops decompression bombs early (the library's
    // bomb check itself is what is exercised), small buffers exercise chunk boundaries.
    options.decompress.ceiling = 4u << 20;
    options.decompress.buffer_size = 4096;
    options.strict = size % 2 == 1;
    auto index = rpmirror::parse_primary_file(file.path(), options);
    if (!index) {
        (void)index.error().to_string();
        return 0;
    }
    for (const auto& issue : index->issues())
        (void)issue.message;
    for (std::size_t position = 0; position < index->size(); ++position) {
        const auto package = (*index)[position];
        (void)package.nevra();
        // A package without <size> (old createrepo) carries kUnknownSize: checked by checksum.
        if (package.package_size > rpmirror::kMaxPackageSize &&
            package.package_size != rpmirror::kUnknownSize)
            __builtin_trap();
        if (package.checksum_hex().size() != rpmirror::digest_hex_length(package.checksum_type)) {
            __builtin_trap();
        }
        auto relative = rpmirror::safe_relative_path(package.location_href, package.name);
        if (relative && (relative->is_absolute() || *relative->begin() == ".."))
            __builtin_trap();
    }
    rpmirror::SelectionOptions selection_options;
    selection_options.newest_only = true;
    selection_options.arches = {"x86_64", "noarch", "src"};
    selection_options.exclude_globs = {"*-debuginfo*"};
    const auto selection = rpmirror::select_packages(*index, selection_options);
    for (const auto position : selection.positions) {
        if (position >= index->size())
            __builtin_trap();
    }
    (void)rpmirror::select_packages(*index, {});
    return 0;
}
