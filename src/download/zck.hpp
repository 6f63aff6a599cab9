// zchunk deltas: a zchunk file (a repomd record of type "*_zck") assembled from a previous copy
// of it (any revision) and the chunks that changed, fetched from the server in ranged requests,
// with libzck.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stop_token>
#include <string>

#include "download/download.hpp"
#include "metadata/metadata.hpp"
#include "rpmirror/util/error.hpp"

namespace rpmirror::download {

struct ZckDeltaRequest {
    std::string url;                 // the new file
    std::filesystem::path previous;  // a previous copy (a zchunk file of any revision)
    std::filesystem::path target;    // created or truncated, then written
    std::uint64_t header_size = 0;   // repomd's <header-size>
    RecordChecksum header_checksum;  // repomd's <header-checksum>
    unsigned max_ranges = 64;        // byte ranges per request (the Range header's length)
};

struct ZckDeltaResult {
    std::uint64_t bytes_fetched = 0;  // received from the server: the header and the chunks
    std::uint64_t bytes_copied = 0;   // compressed chunk bytes copied from the previous copy
    std::size_t requests = 0;         // HTTP requests made (the header's included)
};

// Writes to `request.target` the file at `request.url`: fetches its header (one ranged GET of
// header_size bytes, which libzck checks against header_checksum), copies from `request.previous`
// every chunk it has (each verified by its digest), fetches the others in ranged GETs of up to
// max_ranges ranges each (multipart/byteranges, parsed by libzck), and checks every chunk and
// the data digest the header lists. Uses `options`' connection settings.
// Returns what it fetched and copied, or an error saying what failed (a server that answers
// a Range request with anything but 206, a previous copy that is no zchunk file, a chunk that
// does not verify...): `request.target` is then incomplete and the caller downloads the file
// in full. The whole file's checksum (repomd's <checksum>) is the caller's to check.
Result<ZckDeltaResult> fetch_zck_delta(const ZckDeltaRequest& request,
                                       const DownloadOptions& options, const std::stop_token& stop);

}  // namespace rpmirror::download
