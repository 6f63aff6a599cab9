// The Engine's HTTP response handling: the header callback, what a response's status and
// Content-Length / Content-Range allow before its body (of a file, or of one range of a segmented
// file), and what a finished transfer's status and curl result make of the attempt.
#include "download/engine.hpp"

#include <curl/curl.h>

#include <charconv>
#include <optional>
#include <string>
#include <string_view>

#include "checksum/hasher.hpp"
#include "util/text.hpp"

namespace rpmirror::download {

namespace {

using text::trim;

std::optional<std::uint64_t> parse_u64(std::string_view text) {
    std::uint64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || text.empty()) {
        return std::nullopt;
    }
    return value;
}

// A Content-Range header's "bytes FIRST-LAST/TOTAL"; a field that is absent or "*" is empty.
struct ContentRange {
    std::optional<std::uint64_t> first;
    std::optional<std::uint64_t> last;
    std::optional<std::uint64_t> total;
};

ContentRange parse_content_range(std::string_view range) {
    ContentRange parsed;
    if (!iequals_prefix(range, "bytes ")) {
        return parsed;
    }
    const std::string_view spec = trim(range.substr(6));
    const auto dash = spec.find('-');
    const auto slash = spec.find('/');
    if (dash != std::string_view::npos) {
        parsed.first = parse_u64(spec.substr(0, dash));
        if (slash != std::string_view::npos && slash > dash) {
            parsed.last = parse_u64(spec.substr(dash + 1, slash - dash - 1));
        }
    }
    if (slash != std::string_view::npos && spec.substr(slash + 1) != "*") {
        parsed.total = parse_u64(spec.substr(slash + 1));
    }
    return parsed;
}

bool is_transient_curl_code(CURLcode code) {
    switch (code) {
        case CURLE_COULDNT_RESOLVE_PROXY:
        case CURLE_COULDNT_RESOLVE_HOST:
        case CURLE_COULDNT_CONNECT:
        case CURLE_PARTIAL_FILE:
        case CURLE_OPERATION_TIMEDOUT:
        case CURLE_SEND_ERROR:
        case CURLE_RECV_ERROR:
        case CURLE_GOT_NOTHING:
        case CURLE_HTTP2:
        case CURLE_HTTP2_STREAM:
        case CURLE_SSL_CONNECT_ERROR:
        case CURLE_PROXY:
        case CURLE_AGAIN:
            return true;
        default:
            return false;
    }
}

bool is_transient_status(long status) {
    return status == 408 || status == 429 || (status >= 500 && status <= 599);
}

}  // namespace

std::size_t Engine::on_header(char* data, std::size_t size, std::size_t count, void* user) {
    auto& transfer = *static_cast<Transfer*>(user);
    Response& response = transfer.attempt.response;
    const std::size_t length = size * count;
    const std::string_view line(data, length);
    if (iequals_prefix(line, "HTTP/")) {
        // A new response (after a redirect or a 100 Continue): forget the previous one.
        response = Response{};
        response.framed = !iequals_prefix(line, "HTTP/1.") && !iequals_prefix(line, "HTTP/0.");
        const auto space = line.find(' ');
        if (space != std::string_view::npos) {
            const auto code = parse_u64(trim(line.substr(space + 1, 3)));
            response.status = code ? static_cast<long>(*code) : 0;
        }
        return length;
    }
    const std::string_view content = trim(line);
    if (content.empty()) {
        return transfer.engine->on_headers_complete(transfer) ? length : 0;
    }
    const auto colon = content.find(':');
    if (colon == std::string_view::npos) {
        return length;
    }
    const std::string_view name = content.substr(0, colon);
    const std::string_view value = trim(content.substr(colon + 1));
    if (name.size() == 14 && iequals_prefix(name, "content-length")) {
        response.content_length = parse_u64(value);
    } else if (name.size() == 13 && iequals_prefix(name, "content-range")) {
        response.content_range = std::string(value);
    } else if (name.size() == 16 && iequals_prefix(name, "content-encoding")) {
        response.content_encoding = std::string(value);
    } else if (name.size() == 17 && iequals_prefix(name, "transfer-encoding")) {
        response.chunked = value.find("chunked") != std::string_view::npos;
    } else if (name.size() == 8 && iequals_prefix(name, "location")) {
        response.has_location = true;
    }
    return length;
}

bool Engine::on_headers_complete(Transfer& transfer) {
    Attempt& attempt = transfer.attempt;
    Response& response = attempt.response;
    const long status = response.status;
    if (status < 200 || (status >= 300 && status < 400 && response.has_location)) {
        response.discard_body = true;  // informational, or a redirect curl will follow
        return true;
    }
    if (transfer.owner != nullptr) {
        return on_range_headers(transfer);
    }
    const std::uint64_t expected = transfer.request->expected_size;
    const bool size_known = expected != kUnknownSize;
    // Content-Length and Content-Range count the encoded bytes, not the decoded ones.
    const bool decoded = attempt.decoding && is_encoded(response.content_encoding);
    if ((status == 200 || status == 206) && transfer.expected_digest.empty() &&
        !response.content_length && !response.chunked && !response.framed) {
        // A file without a checksum is accepted only when the protocol says it is whole: a body
        // that ends when the server closes the connection cannot tell a cut from the end.
        attempt.abort = AbortReason::Unframed;
        attempt.abort_message =
            "the server sent no Content-Length and no chunked encoding (the body ends when the "
            "connection closes): without a checksum nothing could tell a cut body from a whole one";
        return false;
    }
    if (status == 200) {
        if (attempt.range_start > 0) {
            // The server ignored Range: the body is the whole file. Start over.
            transfer.sink->restart();
            transfer.accepted = 0;
            attempt.range_start = 0;
            attempt.note = "server ignored Range (200 instead of 206); started over";
        }
        if (size_known && !decoded && response.content_length &&
            *response.content_length != expected) {
            attempt.abort = AbortReason::SizeMismatch;
            attempt.abort_message = "size mismatch: Content-Length " +
                                    std::to_string(*response.content_length) + ", expected " +
                                    std::to_string(expected) + " bytes (aborted before the body)";
            return false;
        }
        return true;
    }
    if (status == 206 && decoded) {
        // A range of encoded bytes: it cannot be decoded on its own, nor appended to bytes
        // already decoded.
        attempt.abort = AbortReason::RangeMismatch;
        attempt.abort_message = "206 with Content-Encoding: " + response.content_encoding +
                                " for Range from " + std::to_string(attempt.range_start) +
                                ": encoded bytes cannot be resumed";
        return false;
    }
    if (status == 206) {
        const std::string& range = response.content_range;
        const ContentRange parsed = parse_content_range(range);
        const std::optional<std::uint64_t>& start = parsed.first;
        const std::optional<std::uint64_t>& total = parsed.total;
        if (!start || *start != attempt.range_start) {
            attempt.abort = AbortReason::RangeMismatch;
            attempt.abort_message = "206 with Content-Range '" + range + "' for Range from " +
                                    std::to_string(attempt.range_start);
            return false;
        }
        if (size_known && ((total && *total != expected) ||
                           (response.content_length &&
                            *response.content_length != expected - attempt.range_start))) {
            attempt.abort = AbortReason::SizeMismatch;
            attempt.abort_message = "size mismatch: Content-Range '" + range + "', expected " +
                                    std::to_string(expected) + " bytes";
            return false;
        }
        transfer.result.resumed = transfer.result.resumed || attempt.range_start > 0;
        return true;
    }
    response.discard_body = true;  // an error page: classified when the transfer ends
    return true;
}

bool Engine::on_range_headers(Transfer& range) {
    Attempt& attempt = range.attempt;
    Response& response = attempt.response;
    const std::uint64_t last = range.range_end - 1;
    const std::string asked =
        "Range bytes=" + std::to_string(attempt.range_start) + "-" + std::to_string(last);
    if (response.status == 200) {
        attempt.abort = AbortReason::RangeUnusable;
        attempt.abort_message = "server ignored " + asked + " (200 instead of 206)";
        return false;
    }
    if (response.status != 206) {
        response.discard_body = true;  // an error page: classified when the transfer ends
        return true;
    }
    const ContentRange got = parse_content_range(response.content_range);
    if (got.first != attempt.range_start || got.last != last ||
        (got.total && *got.total != range.request->expected_size) ||
        (response.content_length && *response.content_length != last + 1 - *got.first)) {
        attempt.abort = AbortReason::RangeUnusable;
        attempt.abort_message =
            "206 with Content-Range '" + response.content_range + "' for " + asked;
        return false;
    }
    return true;
}

void Engine::on_curl_done(Transfer& transfer, CURLcode code) {
    Attempt& attempt = transfer.attempt;
    curl_off_t retry_after_seconds = 0;
    std::optional<std::chrono::seconds> retry_after;
    if (curl_easy_getinfo(attempt.easy.get(), CURLINFO_RETRY_AFTER, &retry_after_seconds) ==
            CURLE_OK &&
        retry_after_seconds > 0) {
        retry_after = std::chrono::seconds(retry_after_seconds);
    }
    // The server's Last-Modified (--remote-time); -1 when it sent none.
    std::optional<std::int64_t> remote_time;
    if (options.preserve_remote_time) {
        curl_off_t filetime = -1;
        if (curl_easy_getinfo(attempt.easy.get(), CURLINFO_FILETIME_T, &filetime) == CURLE_OK &&
            filetime >= 0) {
            remote_time = static_cast<std::int64_t>(filetime);
        }
    }
    // Read from the handle before detach() hands it back for reuse.
    const std::string curl_failure =
        code == CURLE_OK ? std::string()
                         : describe_curl_failure(attempt.easy.get(), code, attempt.url,
                                                 attempt.error_buffer.data(), attempt.redirects);
    detach(transfer);
    const long status = attempt.response.status;
    switch (attempt.abort) {
        case AbortReason::SizeMismatch:
            if (!retry_as_sent(transfer, attempt.abort_message)) {
                fail_attempt(transfer, attempt.abort_message, FailureKind::Permanent);
            }
            return;
        case AbortReason::RangeMismatch:
            fail_attempt(transfer, attempt.abort_message + "; starting over",
                         FailureKind::RestartSame);
            return;
        case AbortReason::RangeUnusable:
            fall_back_to_one_connection(transfer, attempt.abort_message);
            return;
        case AbortReason::Unframed:
            fail_attempt(transfer, attempt.abort_message, FailureKind::Permanent);
            return;
        case AbortReason::LocalIo:
            finish_failed(transfer,
                          Error{ErrorCode::Io, "cannot write the download", transfer.shown_path,
                                file_of(transfer).sink->write_errno()});
            return;
        case AbortReason::None:
            break;
    }
    if (status >= 400 || (code == CURLE_OK && status != 200 && status != 206)) {
        std::string outcome = "HTTP " + std::to_string(status);
        if (status == 416 && transfer.owner != nullptr) {
            fall_back_to_one_connection(transfer, outcome + " for a range");
        } else if (status == 416 && attempt.range_start > 0) {
            fail_attempt(transfer,
                         outcome + " for Range from " + std::to_string(attempt.range_start) +
                             "; starting over",
                         FailureKind::RestartSame);
        } else if (is_transient_status(status)) {
            fail_attempt(transfer, outcome, FailureKind::Transient, retry_after);
        } else {
            fail_attempt(transfer, outcome, FailureKind::Permanent);
        }
        return;
    }
    if (code == CURLE_BAD_CONTENT_ENCODING && retry_as_sent(transfer, curl_failure)) {
        return;  // not gzip or deflate at all: the label may be wrong
    }
    if (code != CURLE_OK) {
        std::string outcome = curl_failure;
        if (code == CURLE_OPERATION_TIMEDOUT && options.minrate > 0) {
            outcome += " (minrate " + std::to_string(options.minrate) + " B/s over " +
                       std::to_string(options.low_speed_time.count()) + " s)";
        }
        fail_attempt(
            transfer, std::move(outcome),
            is_transient_curl_code(code) ? FailureKind::Transient : FailureKind::Permanent);
        return;
    }
    if (transfer.request->expected_size != kUnknownSize &&
        transfer.accepted != expected_bytes(transfer)) {
        const std::string outcome = "size mismatch: received " + std::to_string(transfer.accepted) +
                                    " bytes, expected " + std::to_string(expected_bytes(transfer));
        if (!retry_as_sent(transfer, outcome)) {
            fail_attempt(transfer, outcome, FailureKind::Permanent);
        }
        return;
    }
    if (transfer.owner != nullptr) {
        range_done(transfer, remote_time);
        return;
    }
    begin_verification(transfer, Verification::Download);
    transfer.sink->finish(remote_time);
}

}  // namespace rpmirror::download
