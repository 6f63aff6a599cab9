// zchunk deltas over libcurl with libzck's download API (zckDL and its callbacks parse the
// multipart/byteranges answers and put each chunk in its place).
#include "download/zck.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <memory>
#include <optional>

#include "checksum/hasher.hpp"
#include "download/curl_handles.hpp"
#include "download/curl_options.hpp"
#include "fs/durable.hpp"
#include "rpmirror/checksum/checksum.hpp"  // checksum_type_name
#include "util/unique_fd.hpp"
#include "util/zck.hpp"

namespace rpmirror::download {

namespace {

std::optional<zck_hash> zck_hash_of(ChecksumType type) {
    switch (type) {
        case ChecksumType::Sha1:
            return ZCK_HASH_SHA1;
        case ChecksumType::Sha256:
            return ZCK_HASH_SHA256;
        case ChecksumType::Sha512:
            return ZCK_HASH_SHA512;
        default:
            return std::nullopt;
    }
}

// The body of one ranged GET: passed on to `sink` only while the answer is 206.
struct RangedBody {
    CURL* easy = nullptr;
    curl_write_callback sink = nullptr;
    void* sink_data = nullptr;
    long refused_status = 0;  // the status of an answer that was not 206; 0 = none
    std::uint64_t received = 0;
};

std::size_t write_ranged(char* data, std::size_t size, std::size_t count, void* user) {
    auto* body = static_cast<RangedBody*>(user);
    long status = 0;
    curl_easy_getinfo(body->easy, CURLINFO_RESPONSE_CODE, &status);
    if (status != 206) {
        body->refused_status = status;
        return 0;  // aborts the transfer
    }
    body->received += size * count;
    return body->sink(data, size, count, body->sink_data);
}

// GETs `ranges` ("a-b,c-d") of `url`, the body to `sink`, the response headers to `header`
// (if set). Returns the body bytes received.
Result<std::uint64_t> ranged_get(const std::string& url, const std::string& ranges,
                                 const DownloadOptions& options, const std::stop_token& stop,
                                 curl_write_callback sink, void* sink_data,
                                 curl_write_callback header, void* header_data) {
    CurlEasy easy(curl_easy_init());
    if (!easy) {
        return make_error(ErrorCode::Network, "cannot create a libcurl handle", url);
    }
    CurlSlist headers;
    if (!append_request_headers(headers, options)) {
        return make_error(ErrorCode::Network, "cannot allocate the request headers", url);
    }
    const std::string user_agent = user_agent_for(options);
    RedirectGuard redirects;
    apply_connection_options(easy.get(), options, url, user_agent, headers.get(), redirects);
    std::array<char, CURL_ERROR_SIZE> error_buffer{};
    RangedBody body{easy.get(), sink, sink_data, 0, 0};
    curl_easy_setopt(easy.get(), CURLOPT_URL, url.c_str());
    curl_easy_setopt(easy.get(), CURLOPT_RANGE, ranges.c_str());
    curl_easy_setopt(easy.get(), CURLOPT_WRITEFUNCTION, &write_ranged);
    curl_easy_setopt(easy.get(), CURLOPT_WRITEDATA, &body);
    if (header != nullptr) {
        curl_easy_setopt(easy.get(), CURLOPT_HEADERFUNCTION, header);
        curl_easy_setopt(easy.get(), CURLOPT_HEADERDATA, header_data);
    }
    curl_easy_setopt(easy.get(), CURLOPT_ERRORBUFFER, error_buffer.data());
    const std::optional<CURLcode> performed = perform_alone(easy.get(), stop);
    if (!performed) {
        return make_error(ErrorCode::Interrupted, "interrupted", url);
    }
    if (body.refused_status != 0) {
        return make_error(ErrorCode::Unsupported,
                          "the server answered a Range request with HTTP " +
                              std::to_string(body.refused_status) + ", not 206",
                          url);
    }
    if (*performed != CURLE_OK) {
        return make_error(
            ErrorCode::Network,
            describe_curl_failure(easy.get(), *performed, url, error_buffer.data(), redirects),
            url);
    }
    long status = 0;
    curl_easy_getinfo(easy.get(), CURLINFO_RESPONSE_CODE, &status);
    if (status != 206) {
        return make_error(
            ErrorCode::Unsupported,
            "the server answered a Range request with HTTP " + std::to_string(status) + ", not 206",
            url);
    }
    return body.received;
}

struct HeaderBytes {
    std::string bytes;
    std::uint64_t limit = 0;
};

std::size_t append_header_bytes(char* data, std::size_t size, std::size_t count, void* user) {
    auto* header = static_cast<HeaderBytes*>(user);
    const std::size_t length = size * count;
    if (header->bytes.size() + length > header->limit) {
        return 0;
    }
    header->bytes.append(data, length);
    return length;
}

std::size_t write_chunks(char* data, std::size_t size, std::size_t count, void* dl) {
    return zck_write_chunk_cb(data, size, count, dl);
}

std::size_t multipart_headers(char* data, std::size_t size, std::size_t count, void* dl) {
    return zck_header_cb(data, size, count, dl);
}

}  // namespace

Result<ZckDeltaResult> fetch_zck_delta(const ZckDeltaRequest& request,
                                       const DownloadOptions& options,
                                       const std::stop_token& stop) {
    silence_zck_log();
    ensure_curl_initialized();
    const std::string& url = request.url;
    const std::optional<zck_hash> header_hash = zck_hash_of(request.header_checksum.type);
    if (!header_hash) {
        return make_error(ErrorCode::Unsupported,
                          "zchunk header checksum type " +
                              std::string(checksum_type_name(request.header_checksum.type)) +
                              " is not one libzck checks",
                          url);
    }
    if (request.header_size == 0 || request.max_ranges == 0) {
        return make_error(ErrorCode::BadInput, "zchunk header size of 0", url);
    }
    ZckDeltaResult result;

    UniqueFd previous_fd(::open(request.previous.c_str(), O_RDONLY | O_CLOEXEC));
    if (!previous_fd) {
        return make_errno_error("cannot open the previous copy", request.previous.string(), errno);
    }
    ZckCtx previous(zck_create());
    if (!previous || !zck_init_read(previous.get(), previous_fd.get())) {
        return make_error(ErrorCode::Corrupt,
                          zck_error_of(previous.get(), "the previous copy is not a zchunk file"),
                          request.previous.string());
    }

    // The header: one range. libzck checks it against repomd.xml's header-checksum (a digest of
    // the header with its own digest field left out, not of its bytes) before using it.
    HeaderBytes header{{}, request.header_size};
    auto fetched = ranged_get(url, "0-" + std::to_string(request.header_size - 1), options, stop,
                              &append_header_bytes, &header, nullptr, nullptr);
    ++result.requests;
    if (!fetched) {
        return tl::unexpected(std::move(fetched.error()));
    }
    result.bytes_fetched += *fetched;
    if (header.bytes.size() != request.header_size) {
        return make_error(ErrorCode::Corrupt,
                          "zchunk header: received " + std::to_string(header.bytes.size()) +
                              " bytes of " + std::to_string(request.header_size),
                          url);
    }
    UniqueFd target_fd(
        ::open(request.target.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!target_fd) {
        return make_errno_error("cannot create", request.target.string(), errno);
    }
    if (auto written = fs::write_all(target_fd.get(), header.bytes, request.target.string());
        !written) {
        return tl::unexpected(std::move(written.error()));
    }
    if (::lseek(target_fd.get(), 0, SEEK_SET) != 0) {
        return make_errno_error("cannot seek", request.target.string(), errno);
    }
    ZckCtx target(zck_create());
    if (!target || !zck_init_adv_read(target.get(), target_fd.get()) ||
        !zck_set_ioption(target.get(), ZCK_VAL_HEADER_HASH_TYPE, *header_hash) ||
        !zck_set_ioption(target.get(), ZCK_VAL_HEADER_LENGTH,
                         static_cast<ssize_t>(request.header_size)) ||
        !zck_set_soption(target.get(), ZCK_VAL_HEADER_DIGEST, request.header_checksum.hex.data(),
                         request.header_checksum.hex.size()) ||
        !zck_read_lead(target.get()) || !zck_read_header(target.get())) {
        return make_error(ErrorCode::Corrupt,
                          zck_error_of(target.get(), "cannot read the zchunk header"), url);
    }

    // The chunks the previous copy has (each verified by libzck), then the others.
    if (!zck_copy_chunks(previous.get(), target.get())) {
        return make_error(ErrorCode::Corrupt,
                          zck_error_of(target.get(), "cannot copy chunks from the previous copy"),
                          request.previous.string());
    }
    // Chunks that need no bytes (the empty dictionary chunk) are valid as they are: checking
    // what the file holds marks them so (libzck would otherwise ask for an empty range). The
    // file has its full length first, so that the chunks not written yet read as zeros.
    if (::ftruncate(target_fd.get(), static_cast<off_t>(zck_get_length(target.get()))) != 0) {
        return make_errno_error("cannot extend", request.target.string(), errno);
    }
    if (zck_find_valid_chunks(target.get()) == 0) {  // -1: some are not (yet) valid
        return make_error(ErrorCode::Corrupt,
                          zck_error_of(target.get(), "cannot check the copied chunks"),
                          request.target.string());
    }
    zck_reset_failed_chunks(target.get());
    for (zckChunk* chunk = zck_get_first_chunk(target.get()); chunk != nullptr;
         chunk = zck_get_next_chunk(chunk)) {
        if (zck_get_chunk_valid(chunk) == 1) {
            result.bytes_copied += static_cast<std::uint64_t>(zck_get_chunk_comp_size(chunk));
        }
    }
    ZckDl dl(zck_dl_init(target.get()));
    if (!dl) {
        return make_error(ErrorCode::Io, "cannot create a zchunk download context", url);
    }
    int missing = zck_missing_chunks(target.get());
    while (missing > 0) {
        zck_dl_reset(dl.get());
        ZckRange range(zck_get_missing_range(target.get(), static_cast<int>(request.max_ranges)));
        ZckText ranges(range ? zck_get_range_char(target.get(), range.get()) : nullptr);
        if (!range || !ranges || !zck_dl_set_range(dl.get(), range.get())) {
            return make_error(ErrorCode::Corrupt,
                              zck_error_of(target.get(), "cannot compute the missing ranges"), url);
        }
        auto received = ranged_get(url, ranges.get(), options, stop, &write_chunks, dl.get(),
                                   &multipart_headers, dl.get());
        // The range dies with this iteration: libzck must not keep it.
        const bool detached = zck_dl_set_range(dl.get(), nullptr);
        (void)detached;
        ++result.requests;
        if (!received) {
            return tl::unexpected(std::move(received.error()));
        }
        result.bytes_fetched += *received;
        if (const int failed = zck_failed_chunks(target.get()); failed > 0) {
            return make_error(ErrorCode::Corrupt,
                              std::to_string(failed) +
                                  " zchunk chunk(s) from the server do not match their digest",
                              url);
        }
        const int left = zck_missing_chunks(target.get());
        if (left >= missing) {
            return make_error(ErrorCode::Corrupt,
                              "the server's answer to a Range request filled no zchunk chunk", url);
        }
        missing = left;
    }
    if (zck_validate_checksums(target.get()) < 1) {
        return make_error(ErrorCode::Corrupt,
                          zck_error_of(target.get(), "the assembled zchunk file does not verify"),
                          url);
    }
    return result;
}

}  // namespace rpmirror::download
