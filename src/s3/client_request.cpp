// S3Client's request machinery: signing, the curl call, retries and the S3 errors.
//
// S3Client: one libcurl easy handle (its connection kept between requests), requests signed by
// libcurl's CURLOPT_AWS_SIGV4.
//
// libcurl 7.88 signs the query string as given and takes the payload hash from an
// x-amz-content-sha256 header when there is one, and the time from an X-Amz-Date header: so every
// request carries both, keys are percent-encoded here, and query strings are built in SigV4's
// canonical form (sorted, encoded, "name=" for a flag).
#include <curl/curl.h>
#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <ctime>
#include <thread>

#include "checksum/hasher.hpp"
#include "download/curl_handles.hpp"
#include "fs/fault.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "s3/client_internal.hpp"
#include "s3/config.hpp"
#include "s3/xml_tree.hpp"

namespace rpmirror::s3 {

namespace {

using download::CurlSlist;

constexpr std::string_view kEmptySha256 =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
constexpr std::size_t kMaxResponseBody = 64 * 1024 * 1024;  // listings, errors, results

std::string amz_date(std::chrono::seconds offset) {
    const std::time_t now =
        std::chrono::system_clock::to_time_t(std::chrono::system_clock::now() + offset);
    std::tm utc{};
    ::gmtime_r(&now, &utc);
    std::array<char, 32> buffer{};
    const std::size_t length = std::strftime(buffer.data(), buffer.size(), "%Y%m%dT%H%M%SZ", &utc);
    return std::string(buffer.data(), length);
}

// State of one transfer, shared with libcurl's callbacks.
struct Transfer {
    CURL* easy = nullptr;
    std::string_view upload;
    std::size_t uploaded = 0;
    const BodySink* sink = nullptr;
    bool sink_used = false;
    std::optional<Error> sink_error;
    bool too_large = false;
    Response response;

    static std::size_t on_read(char* buffer, std::size_t size, std::size_t count, void* user) {
        auto* transfer = static_cast<Transfer*>(user);
        const std::size_t length =
            std::min(size * count, transfer->upload.size() - transfer->uploaded);
        std::copy_n(transfer->upload.data() + transfer->uploaded, length, buffer);
        transfer->uploaded += length;
        return length;
    }

    static std::size_t on_write(char* data, std::size_t size, std::size_t count, void* user) {
        auto* transfer = static_cast<Transfer*>(user);
        const std::size_t length = size * count;
        long status = 0;
        curl_easy_getinfo(transfer->easy, CURLINFO_RESPONSE_CODE, &status);
        if (transfer->sink != nullptr && status >= 200 && status < 300) {
            transfer->sink_used = true;
            if (auto accepted = (*transfer->sink)(std::span<const char>(data, length)); !accepted) {
                transfer->sink_error = accepted.error();
                return 0;
            }
            return length;
        }
        if (transfer->response.body.size() + length > kMaxResponseBody) {
            transfer->too_large = true;
            return 0;
        }
        transfer->response.body.append(data, length);
        return length;
    }

    static std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
        auto* transfer = static_cast<Transfer*>(user);
        const std::size_t length = size * count;
        std::string_view line(data, length);
        if (line.substr(0, 5) == "HTTP/") {
            transfer->response.headers.clear();  // a new response (after 100 Continue)
            return length;
        }
        const auto colon = line.find(':');
        if (colon == std::string_view::npos) {
            return length;
        }
        std::string name(line.substr(0, colon));
        std::transform(name.begin(), name.end(), name.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        std::string_view value = line.substr(colon + 1);
        while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) {
            value.remove_prefix(1);
        }
        while (!value.empty() &&
               (value.back() == '\r' || value.back() == '\n' || value.back() == ' ')) {
            value.remove_suffix(1);
        }
        transfer->response.headers[name] = std::string(value);
        return length;
    }
};

std::string default_code(long status) {
    switch (status) {
        case 403:
            return "Forbidden";
        case 404:
            return "NotFound";
        case 412:
            return "PreconditionFailed";
        case 503:
            return "ServiceUnavailable";
        default:
            return "Error";
    }
}

bool retryable(const Response& response) {
    if (response.status == 500 || response.status == 503) {
        return true;
    }
    if (response.body.find("<Code>SlowDown</Code>") != std::string::npos) {
        return true;
    }
    // A 200 whose body is an <Error> (CompleteMultipartUpload, CopyObject) reporting what would
    // have been a 500 or 503: retried as that status would be (AWS documents these as retryable).
    return response.status == 200 && response.body.find("<Error>") != std::string::npos &&
           (response.body.find("<Code>InternalError</Code>") != std::string::npos ||
            response.body.find("<Code>ServiceUnavailable</Code>") != std::string::npos);
}

}  // namespace

std::string uri_encode(std::string_view text, bool keep_slash) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string encoded;
    encoded.reserve(text.size());
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (std::isalnum(byte) != 0 || c == '-' || c == '_' || c == '.' || c == '~' ||
            (keep_slash && c == '/')) {
            encoded += c;
        } else {
            encoded += '%';
            encoded += kHex[byte >> 4];
            encoded += kHex[byte & 0xf];
        }
    }
    return encoded;
}

std::string canonical_query(std::vector<std::pair<std::string, std::string>> parameters) {
    std::sort(parameters.begin(), parameters.end());
    std::string query;
    for (const auto& [name, value] : parameters) {
        if (!query.empty()) {
            query += '&';
        }
        query += uri_encode(name, false) + "=" + uri_encode(value, false);
    }
    return query;
}

ErrorCode code_for(long status, std::string_view s3_code) {
    if (status == 404 || s3_code == "NoSuchKey" || s3_code == "NoSuchBucket" ||
        s3_code == "NoSuchUpload") {
        return ErrorCode::NotFound;
    }
    if (status == 412) {
        return ErrorCode::Busy;
    }
    if (s3_code == "InvalidAccessKeyId" || s3_code == "SignatureDoesNotMatch" ||
        s3_code == "AccessDenied" || s3_code == "RequestTimeTooSkewed" || status == 403) {
        return ErrorCode::BadInput;
    }
    return ErrorCode::Network;
}

Error s3_error(const Response& response, const std::string& subject) {
    std::string code;
    std::string message;
    if (!response.body.empty()) {
        if (auto tree = parse_xml_tree(response.body, subject); tree && tree->name == "Error") {
            code = tree->child_text("Code");
            message = tree->child_text("Message");
        }
    }
    if (code.empty()) {
        code = default_code(response.status);
    }
    std::string text = "HTTP " + std::to_string(response.status) + " " + code;
    if (!message.empty()) {
        text += ": " + message;
    }
    return Error{code_for(response.status, code), text, subject, 0};
}

Result<XmlNode> result_document(const Response& response, const std::string& subject,
                                const std::string& operation) {
    auto tree = parse_xml_tree(response.body, subject);
    if (!tree) {
        return tl::unexpected(tree.error());
    }
    if (tree->name == "Error") {
        return tl::unexpected(s3_error(response, subject));
    }
    if (tree->name != operation + "Result") {
        return make_error(ErrorCode::BadInput, operation + " answered <" + tree->name + ">",
                          subject);
    }
    return tree;
}

std::string S3Client::Impl::url_for(std::string_view bucket, std::string_view key,
                                    const std::string& query) const {
    std::string url;
    if (bucket.empty() || config.path_style) {
        url = config.endpoint + "/";
        if (!bucket.empty()) {
            url += std::string(bucket) + "/";
        }
    } else {
        const auto scheme_end = config.endpoint.find("://") + 3;
        url = config.endpoint.substr(0, scheme_end) + std::string(bucket) + "." +
              config.endpoint.substr(scheme_end) + "/";
    }
    url += uri_encode(key, true);
    if (!query.empty()) {
        url += "?" + query;
    }
    return url;
}

void S3Client::Impl::note_store_clock(const Response& response) {
    const std::string date = response.header("date");
    if (date.empty()) {
        return;
    }
    const time_t store = curl_getdate(date.c_str(), nullptr);
    if (store < 0) {
        return;
    }
    const auto local = std::chrono::duration_cast<std::chrono::seconds>(
        std::chrono::system_clock::now().time_since_epoch());
    store_offset = std::chrono::seconds(store) - local;
}

Result<Response> S3Client::Impl::send_once(const Request& request, const std::string& subject,
                                           bool& retry) {
    retry = false;
    CURL* handle = easy.get();
    curl_easy_reset(handle);
    ++requests;
    const std::string url = url_for(request.bucket, request.key, request.query);
    Transfer transfer;
    transfer.easy = handle;
    transfer.upload = request.body;
    transfer.sink = request.sink;

    CurlSlist headers;
    std::string payload_hash = request.body_sha256;
    if (payload_hash.empty()) {
        payload_hash = request.body.empty() ? std::string(kEmptySha256)
                                            : hash_bytes(ChecksumType::Sha256, request.body);
    }
    bool allocated = headers.append("x-amz-content-sha256: " + payload_hash) &&
                     headers.append("X-Amz-Date: " + amz_date(config.clock_offset));
    // No "Name:" (header removal) entries: libcurl 7.88 would sign them as empty headers
    // it does not send.
    if (!config.credentials.session_token.empty()) {
        allocated = allocated &&
                    headers.append("x-amz-security-token: " + config.credentials.session_token);
    }
    for (const std::string& header : request.headers) {
        allocated = allocated && headers.append(header);
    }
    if (!allocated) {
        return make_error(ErrorCode::Io, "out of memory building the request", subject);
    }
    const std::string sigv4 = "aws:amz:" + config.region + ":s3";
    std::array<char, CURL_ERROR_SIZE> error_buffer{};
    curl_easy_setopt(handle, CURLOPT_URL, url.c_str());
    curl_easy_setopt(handle, CURLOPT_AWS_SIGV4, sigv4.c_str());
    curl_easy_setopt(handle, CURLOPT_USERNAME, config.credentials.access_key_id.c_str());
    curl_easy_setopt(handle, CURLOPT_PASSWORD, config.credentials.secret_access_key.c_str());
    curl_easy_setopt(handle, CURLOPT_HTTPHEADER, headers.get());
    curl_easy_setopt(handle, CURLOPT_USERAGENT, user_agent.c_str());
    curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(handle, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(handle, CURLOPT_CONNECTTIMEOUT,
                     static_cast<long>(config.connect_timeout.count()));
    // Below 1 byte/s either way for stall_timeout: nothing moves, the store is not answering.
    curl_easy_setopt(handle, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(handle, CURLOPT_LOW_SPEED_TIME,
                     static_cast<long>(config.stall_timeout.count()));
    curl_easy_setopt(handle, CURLOPT_PROTOCOLS_STR, "http,https");
    if (!config.ca_bundle.empty()) {  // AWS_CA_BUNDLE, ca_bundle: verified, never skipped
        curl_easy_setopt(handle, CURLOPT_CAINFO, config.ca_bundle.c_str());
    }
    curl_easy_setopt(handle, CURLOPT_ERRORBUFFER, error_buffer.data());
    curl_easy_setopt(handle, CURLOPT_BUFFERSIZE, 512L * 1024L);
    curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, &Transfer::on_write);
    curl_easy_setopt(handle, CURLOPT_WRITEDATA, &transfer);
    curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, &Transfer::on_header);
    curl_easy_setopt(handle, CURLOPT_HEADERDATA, &transfer);
    switch (request.method) {
        case Method::Get:
            break;
        case Method::Head:
            curl_easy_setopt(handle, CURLOPT_NOBODY, 1L);
            break;
        case Method::Delete:
            curl_easy_setopt(handle, CURLOPT_CUSTOMREQUEST, "DELETE");
            break;
        case Method::Put:
            curl_easy_setopt(handle, CURLOPT_UPLOAD, 1L);
            curl_easy_setopt(handle, CURLOPT_READFUNCTION, &Transfer::on_read);
            curl_easy_setopt(handle, CURLOPT_READDATA, &transfer);
            curl_easy_setopt(handle, CURLOPT_UPLOAD_BUFFERSIZE, 1024L * 1024L);
            curl_easy_setopt(handle, CURLOPT_INFILESIZE_LARGE,
                             static_cast<curl_off_t>(request.body.size()));
            break;
        case Method::Post:
            curl_easy_setopt(handle, CURLOPT_POST, 1L);
            curl_easy_setopt(handle, CURLOPT_POSTFIELDS, request.body.data());
            curl_easy_setopt(handle, CURLOPT_POSTFIELDSIZE_LARGE,
                             static_cast<curl_off_t>(request.body.size()));
            break;
    }
    const CURLcode code = curl_easy_perform(handle);
    if (transfer.sink_error) {
        return tl::unexpected(*transfer.sink_error);
    }
    if (transfer.too_large) {
        return make_error(
            ErrorCode::Unsafe,
            "response larger than " + std::to_string(kMaxResponseBody) + " bytes; refused",
            subject);
    }
    if (code != CURLE_OK) {
        // A body already handed to a sink cannot be taken back: no retry then.
        retry = !transfer.sink_used;
        curl_off_t connected_us = 0;
        curl_easy_getinfo(handle, CURLINFO_CONNECT_TIME_T, &connected_us);
        const std::string what =
            code == CURLE_OPERATION_TIMEDOUT && connected_us > 0  // not the connect timeout
                ? fmt::format(
                      "the store sent nothing for {} s, request abandoned "
                      "(RPMIRROR_S3_STALL_TIMEOUT sets how long)",
                      config.stall_timeout.count())
                : error_buffer[0] != '\0' ? std::string(error_buffer.data())
                                          : curl_easy_strerror(code);
        return make_error(ErrorCode::Network, what + " (" + url + ")", subject);
    }
    curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &transfer.response.status);
    note_store_clock(transfer.response);
    retry = retryable(transfer.response);
    return std::move(transfer.response);
}

Result<Response> S3Client::Impl::send(const Request& request, const std::string& subject) {
    for (unsigned attempt = 0;; ++attempt) {
        bool retry = false;
        auto response = send_once(request, subject, retry);
        if (!retry || attempt >= config.retries) {
            return response;
        }
        const auto base = config.retry_base_delay * (1U << std::min(attempt, 10U));
        std::uniform_int_distribution<long> spread(base.count() / 2, base.count() * 3 / 2);
        std::this_thread::sleep_for(std::chrono::milliseconds(spread(jitter)));
    }
}

Result<Response> S3Client::Impl::call(const Request& request) {
    const std::string subject = object_url(request.bucket, request.key);
    if (request.method != Method::Get && request.method != Method::Head &&
        fault::fails(fault::Op::S3, subject)) {
        return make_errno_error("injected fault before the request to", subject, errno);
    }
    auto response = send(request, subject);
    if (!response) {
        return response;
    }
    if (response->status < 200 || response->status >= 300) {
        Error error = s3_error(*response, subject);
        if (!request.bucket.empty() && error.message.find(" NoSuchBucket") != std::string::npos) {
            // Whatever key the request was for (often the lock, the first request of a sync),
            // what is missing is the bucket: name it, where it was looked for, and the way out.
            error.subject = object_url(request.bucket, "");
            error.message = fmt::format(
                "bucket '{}' does not exist at {} ({}); create it (e.g. `aws s3 mb s3://{} "
                "--endpoint-url {}`) or correct the bucket of the destination or the endpoint "
                "(--s3-endpoint, s3-endpoint =, AWS_ENDPOINT_URL)",
                request.bucket, config.endpoint, error.message, request.bucket, config.endpoint);
        }
        return tl::unexpected(std::move(error));
    }
    return response;
}

}  // namespace rpmirror::s3
