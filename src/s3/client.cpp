// S3Client: one libcurl easy handle (its connection kept between requests), requests signed by
// libcurl's CURLOPT_AWS_SIGV4.
//
// libcurl 7.88 signs the query string as given and takes the payload hash from an
// x-amz-content-sha256 header when there is one, and the time from an X-Amz-Date header: so every
// request carries both, keys are percent-encoded here, and query strings are built in SigV4's
// canonical form (sorted, encoded, "name=" for a flag).
#include <curl/curl.h>
#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <ctime>
#include <fstream>
#include <random>
#include <thread>

#include "download/curl_handles.hpp"
#include "download/curl_options.hpp"
#include "rpmirror/checksum.hpp"
#include "rpmirror/download.hpp"
#include "rpmirror/s3.hpp"
#include "s3/client.hpp"
#include "s3/xml_tree.hpp"
#include "util/fault.hpp"

namespace rpmirror::s3 {

namespace {

using download::CurlEasy;
using download::CurlSlist;

constexpr std::string_view kEmptySha256 =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
constexpr std::size_t kMaxResponseBody = 64 * 1024 * 1024;  // listings, errors, results

// Percent-encodes `text` as SigV4 wants: everything but A-Z a-z 0-9 - _ . ~ (and '/' iff
// `keep_slash`).
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

// Builds a canonical query string from (name, value) pairs.
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

std::string base64_of_hex(std::string_view hex) {
    std::string bytes;
    for (std::size_t index = 0; index + 1 < hex.size(); index += 2) {
        bytes += static_cast<char>(std::stoi(std::string(hex.substr(index, 2)), nullptr, 16));
    }
    std::string encoded(4 * ((bytes.size() + 2) / 3) + 1, '\0');
    const int length = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(encoded.data()),
                                       reinterpret_cast<const unsigned char*>(bytes.data()),
                                       static_cast<int>(bytes.size()));
    encoded.resize(static_cast<std::size_t>(length));
    return encoded;
}

std::string amz_date(std::chrono::seconds offset) {
    const std::time_t now =
        std::chrono::system_clock::to_time_t(std::chrono::system_clock::now() + offset);
    std::tm utc{};
    ::gmtime_r(&now, &utc);
    std::array<char, 32> buffer{};
    const std::size_t length = std::strftime(buffer.data(), buffer.size(), "%Y%m%dT%H%M%SZ", &utc);
    return std::string(buffer.data(), length);
}

std::string unquote(std::string etag) {
    if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') {
        etag = etag.substr(1, etag.size() - 2);
    }
    return etag;
}

std::string xml_escape(std::string_view text) {
    std::string escaped;
    for (const char c : text) {
        switch (c) {
            case '&':
                escaped += "&amp;";
                break;
            case '<':
                escaped += "&lt;";
                break;
            case '>':
                escaped += "&gt;";
                break;
            case '"':
                escaped += "&quot;";
                break;
            case '\'':
                escaped += "&apos;";
                break;
            default:
                escaped += c;
        }
    }
    return escaped;
}

enum class Method { Get, Head, Put, Post, Delete };

struct Request {
    Method method = Method::Get;
    std::string_view bucket{};  // empty: the service
    std::string_view key{};     // empty: the bucket
    std::string query{};        // canonical
    std::vector<std::string> headers{};
    std::string_view body{};         // PUT/POST
    std::string body_sha256{};       // hex; computed iff empty and there is a body
    const BodySink* sink = nullptr;  // 2xx bodies go here instead of Response::body
};

struct Response {
    long status = 0;
    std::string body;
    std::map<std::string, std::string> headers;  // lowercase names

    std::string header(const std::string& name) const {
        const auto found = headers.find(name);
        return found == headers.end() ? std::string() : found->second;
    }
};

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

// Returns the error of a response whose body is an S3 <Error> document (or empty).
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

// The <OPERATIONResult> document of a 200 answer. S3 may answer 200 and report the failure in
// the body (CompleteMultipartUpload, CopyObject): an <Error> there is that error.
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

struct S3Client::Impl {
    S3Config config;
    CurlEasy easy;
    std::string user_agent = download::user_agent_for(DownloadOptions{});
    std::uint64_t requests = 0;
    // The store's clock minus ours, from the Date of the latest answer that had one.
    std::optional<std::chrono::seconds> store_offset;
    std::minstd_rand jitter{std::random_device{}()};

    std::string url_for(std::string_view bucket, std::string_view key,
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

    // Records how far the store's clock (the answer's Date header, RFC 7231; whole seconds) is
    // from ours, iff the answer has a Date curl_getdate can read.
    void note_store_clock(const Response& response) {
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

    // Sends `request` once. Returns the response (any status), or a Network error for a transport
    // failure; `retry` says whether sending it again may help.
    Result<Response> send_once(const Request& request, const std::string& subject, bool& retry) {
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
            const std::string what = error_buffer[0] != '\0' ? std::string(error_buffer.data())
                                                             : curl_easy_strerror(code);
            return make_error(ErrorCode::Network, what + " (" + url + ")", subject);
        }
        curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &transfer.response.status);
        note_store_clock(transfer.response);
        retry = retryable(transfer.response);
        return std::move(transfer.response);
    }

    // Sends `request`, retrying transport failures, 500, 503 and SlowDown with exponential
    // backoff. Returns the last response (any status) or transport error.
    Result<Response> send(const Request& request, const std::string& subject) {
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

    // Sends `request` and returns its response iff the status is 2xx, else the S3 error.
    Result<Response> call(const Request& request) {
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
            return tl::unexpected(s3_error(*response, subject));
        }
        return response;
    }
};

S3Client::S3Client(S3Config config) : impl_(std::make_unique<Impl>()) {
    download::ensure_curl_initialized();
    impl_->config = std::move(config);
    impl_->easy.reset(curl_easy_init());
    if (!impl_->easy) {
        throw std::bad_alloc();
    }
}

S3Client::S3Client(S3Client&&) noexcept = default;
S3Client& S3Client::operator=(S3Client&&) noexcept = default;
S3Client::~S3Client() = default;

const S3Config& S3Client::config() const {
    return impl_->config;
}

std::uint64_t S3Client::request_count() const {
    return impl_->requests;
}

std::optional<std::chrono::seconds> S3Client::store_clock_offset() const {
    return impl_->store_offset;
}

std::chrono::system_clock::time_point S3Client::store_now() const {
    return std::chrono::system_clock::now() +
           impl_->store_offset.value_or(impl_->config.clock_offset);
}

Result<void> S3Client::create_bucket(std::string_view bucket) {
    Request request{.method = Method::Put, .bucket = bucket};
    auto response = impl_->call(request);
    if (!response &&
        response.error().message.find("BucketAlreadyOwnedByYou") != std::string::npos) {
        return {};
    }
    return response.map([](const Response&) {});
}

Result<void> S3Client::delete_bucket(std::string_view bucket) {
    return impl_->call(Request{.method = Method::Delete, .bucket = bucket})
        .map([](const Response&) {});
}

namespace {

std::vector<std::string> metadata_headers(const PutOptions& options, const std::string& sha256) {
    std::vector<std::string> headers;
    if (!options.content_type.empty()) {
        headers.push_back("Content-Type: " + options.content_type);
    }
    if (!sha256.empty()) {
        headers.push_back("x-amz-meta-sha256: " + sha256);
    }
    for (const auto& [name, value] : options.metadata) {
        headers.push_back("x-amz-meta-" + name + ": " + value);
    }
    if (!options.acl.empty()) {
        headers.push_back("x-amz-acl: " + options.acl);
    }
    if (options.if_none_match) {
        headers.push_back("If-None-Match: *");
    }
    return headers;
}

// A decimal byte count, or nullopt iff `text` is not one (empty, a sign, "*", garbage, overflow).
std::optional<std::uint64_t> byte_count(std::string_view text) {
    std::uint64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
        return std::nullopt;
    }
    return value;
}

// The object's info from an answer to HEAD or GET of `subject`: its size is the total of a
// Content-Range ("bytes A-B/TOTAL") or else the Content-Length. Returns Error{Network} naming
// the object and the header iff the size is not given as a number (a "bytes A-B/*" of unknown
// length, as a proxy may answer, or garbage): what the store holds cannot be checked then.
Result<ObjectInfo> info_from(const Response& response, const std::string& subject) {
    ObjectInfo info;
    info.etag = unquote(response.header("etag"));
    info.last_modified = response.header("last-modified");
    const std::string range = response.header("content-range");
    const std::string length = response.header("content-length");
    if (!range.empty()) {
        const std::size_t slash = range.find('/');
        const auto total = slash == std::string::npos
                               ? std::nullopt
                               : byte_count(std::string_view(range).substr(slash + 1));
        if (!total) {
            return make_error(ErrorCode::Network,
                              "the answer gives no object size (Content-Range '" + range +
                                  "'; the total must be a number of bytes)",
                              subject);
        }
        info.size = *total;
    } else if (!length.empty()) {
        const auto size = byte_count(length);
        if (!size) {
            return make_error(ErrorCode::Network,
                              "the answer's Content-Length '" + length + "' is not a number",
                              subject);
        }
        info.size = *size;
    }
    for (const auto& [name, value] : response.headers) {
        if (name.starts_with("x-amz-meta-")) {
            info.metadata[name.substr(11)] = value;
        }
    }
    return info;
}

}  // namespace

Result<std::string> S3Client::put_object(std::string_view bucket, std::string_view key,
                                         std::string_view body, const PutOptions& options) {
    const std::string sha256 =
        options.sha256.empty() ? hash_bytes(ChecksumType::Sha256, body) : options.sha256;
    Request request{.method = Method::Put,
                    .bucket = bucket,
                    .key = key,
                    .headers = metadata_headers(options, sha256),
                    .body = body,
                    .body_sha256 = sha256};
    return impl_->call(request).map(
        [](const Response& response) { return unquote(response.header("etag")); });
}

Result<ObjectInfo> S3Client::head_object(std::string_view bucket, std::string_view key) {
    auto response = impl_->call(Request{.method = Method::Head, .bucket = bucket, .key = key});
    if (!response) {
        return tl::unexpected(std::move(response.error()));
    }
    return info_from(*response, object_url(bucket, key));
}

Result<ObjectInfo> S3Client::get_object(std::string_view bucket, std::string_view key,
                                        const BodySink& sink, std::optional<ByteRange> range,
                                        std::string_view if_match) {
    Request request{.method = Method::Get, .bucket = bucket, .key = key, .sink = &sink};
    if (!if_match.empty()) {
        request.headers.push_back("If-Match: \"" + std::string(if_match) + "\"");
    }
    if (range) {
        request.headers.push_back("Range: bytes=" + std::to_string(range->offset) + "-" +
                                  std::to_string(range->offset + range->length - 1));
    }
    auto response = impl_->call(request);
    if (!response) {
        return tl::unexpected(response.error());
    }
    if (range && response->status != 206) {
        return make_error(ErrorCode::Network,
                          "asked for bytes " + std::to_string(range->offset) + "+" +
                              std::to_string(range->length) + ", got HTTP " +
                              std::to_string(response->status) + " instead of 206",
                          object_url(bucket, key));
    }
    return info_from(*response, object_url(bucket, key));
}

Result<std::string> S3Client::get_object(std::string_view bucket, std::string_view key,
                                         std::optional<ByteRange> range,
                                         std::string_view if_match) {
    std::string body;
    const BodySink sink = [&body](std::span<const char> bytes) -> Result<void> {
        body.append(bytes.data(), bytes.size());
        return {};
    };
    return get_object(bucket, key, sink, range, if_match).map([&body](const ObjectInfo&) {
        return std::move(body);
    });
}

Result<void> S3Client::delete_object(std::string_view bucket, std::string_view key) {
    auto response = impl_->call(Request{.method = Method::Delete, .bucket = bucket, .key = key});
    if (!response && response.error().code == ErrorCode::NotFound &&
        response.error().message.find("NoSuchKey") != std::string::npos) {
        return {};
    }
    return response.map([](const Response&) {});
}

Result<void> S3Client::delete_objects(std::string_view bucket, std::span<const std::string> keys) {
    constexpr std::size_t kBatch = 1000;
    std::optional<Error> first_error;
    for (std::size_t start = 0; start < keys.size(); start += kBatch) {
        std::string body =
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<Delete xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Quiet>true</Quiet>";
        for (std::size_t index = start; index < std::min(keys.size(), start + kBatch); ++index) {
            body += "<Object><Key>" + xml_escape(keys[index]) + "</Key></Object>";
        }
        body += "</Delete>";
        Request request{
            .method = Method::Post,
            .bucket = bucket,
            .query = canonical_query({{"delete", ""}}),
            .headers = {"Content-Type: application/xml",
                        "Content-MD5: " + base64_of_hex(hash_bytes(ChecksumType::Md5, body))},
            .body = body};
        auto response = impl_->call(request);
        if (!response) {
            return tl::unexpected(response.error());
        }
        auto tree = parse_xml_tree(response->body, object_url(bucket, ""));
        if (!tree) {
            return tl::unexpected(tree.error());
        }
        for (const XmlNode& node : tree->children) {
            if (node.name == "Error" && !first_error) {
                first_error = Error{
                    code_for(0, node.child_text("Code")),
                    "not deleted: " + node.child_text("Code") + ": " + node.child_text("Message"),
                    object_url(bucket, node.child_text("Key")), 0};
            }
        }
    }
    if (first_error) {
        return tl::unexpected(*first_error);
    }
    return {};
}

Result<std::size_t> S3Client::list_objects(
    std::string_view bucket, std::string_view prefix,
    const std::function<Result<void>(const ListedObject&)>& each, unsigned page_size) {
    const std::string subject = object_url(bucket, prefix);
    return list_pages(bucket, prefix, page_size, {}, [&](const XmlNode& node) -> Result<void> {
        if (node.name != "Contents") {
            return {};
        }
        ListedObject object{node.child_text("Key"), 0, unquote(node.child_text("ETag")),
                            node.child_text("LastModified")};
        const auto size = byte_count(node.child_text("Size"));
        if (!size) {
            return make_error(ErrorCode::BadInput,
                              "listing gives no valid <Size> for " + object.key, subject);
        }
        object.size = *size;
        return each(object);
    });
}

Result<std::vector<std::string>> S3Client::list_prefixes(std::string_view bucket,
                                                         std::string_view prefix) {
    std::vector<std::string> prefixes;
    auto listed =
        list_pages(bucket, prefix, 1000, "/", [&prefixes](const XmlNode& node) -> Result<void> {
            if (node.name == "CommonPrefixes") {
                prefixes.push_back(node.child_text("Prefix"));
            }
            return {};
        });
    if (!listed) {
        return tl::unexpected(std::move(listed.error()));
    }
    return prefixes;
}

Result<std::size_t> S3Client::list_pages(std::string_view bucket, std::string_view prefix,
                                         unsigned page_size, std::string_view delimiter,
                                         const std::function<Result<void>(const XmlNode&)>& each) {
    std::string token;
    std::size_t pages = 0;
    const std::string subject = object_url(bucket, prefix);
    for (;;) {
        std::vector<std::pair<std::string, std::string>> parameters = {
            {"list-type", "2"},
            {"prefix", std::string(prefix)},
            {"max-keys", std::to_string(std::clamp(page_size, 1U, 1000U))}};
        if (!delimiter.empty()) {
            parameters.emplace_back("delimiter", std::string(delimiter));
        }
        if (!token.empty()) {
            parameters.emplace_back("continuation-token", token);
        }
        auto response = impl_->call(
            Request{.method = Method::Get, .bucket = bucket, .query = canonical_query(parameters)});
        ++pages;
        if (!response) {
            return tl::unexpected(response.error());
        }
        auto tree = parse_xml_tree(response->body, subject);
        if (!tree) {
            return tl::unexpected(tree.error());
        }
        if (tree->name != "ListBucketResult") {
            return make_error(ErrorCode::BadInput,
                              "expected ListBucketResult, got <" + tree->name + ">", subject);
        }
        for (const XmlNode& node : tree->children) {
            if (auto accepted = each(node); !accepted) {
                return tl::unexpected(accepted.error());
            }
        }
        token = tree->child_text("NextContinuationToken");
        if (tree->child_text("IsTruncated") != "true") {
            return pages;
        }
        if (token.empty()) {
            return make_error(ErrorCode::BadInput,
                              "listing is truncated but gives no NextContinuationToken", subject);
        }
    }
}

Result<std::vector<ListedObject>> S3Client::list_all_objects(std::string_view bucket,
                                                             std::string_view prefix) {
    std::vector<ListedObject> objects;
    auto listed =
        list_objects(bucket, prefix, [&objects](const ListedObject& object) -> Result<void> {
            objects.push_back(object);
            return {};
        });
    if (!listed) {
        return tl::unexpected(listed.error());
    }
    return objects;
}

Result<std::string> S3Client::create_multipart_upload(std::string_view bucket, std::string_view key,
                                                      const PutOptions& options) {
    Request request{.method = Method::Post,
                    .bucket = bucket,
                    .key = key,
                    .query = canonical_query({{"uploads", ""}}),
                    .headers = metadata_headers(options, options.sha256)};
    auto response = impl_->call(request);
    if (!response) {
        return tl::unexpected(response.error());
    }
    auto tree = parse_xml_tree(response->body, object_url(bucket, key));
    if (!tree) {
        return tl::unexpected(tree.error());
    }
    std::string upload_id = tree->child_text("UploadId");
    if (upload_id.empty()) {
        return make_error(ErrorCode::BadInput, "CreateMultipartUpload answered no UploadId",
                          object_url(bucket, key));
    }
    return upload_id;
}

Result<std::string> S3Client::upload_part(std::string_view bucket, std::string_view key,
                                          std::string_view upload_id, unsigned part_number,
                                          std::string_view body) {
    Request request{.method = Method::Put,
                    .bucket = bucket,
                    .key = key,
                    .query = canonical_query({{"partNumber", std::to_string(part_number)},
                                              {"uploadId", std::string(upload_id)}}),
                    .body = body};
    return impl_->call(request).map(
        [](const Response& response) { return unquote(response.header("etag")); });
}

Result<std::string> S3Client::complete_multipart_upload(std::string_view bucket,
                                                        std::string_view key,
                                                        std::string_view upload_id,
                                                        std::span<const CompletedPart> parts) {
    std::string body =
        "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">";
    for (const CompletedPart& part : parts) {
        body += "<Part><PartNumber>" + std::to_string(part.part_number) + "</PartNumber><ETag>\"" +
                xml_escape(part.etag) + "\"</ETag></Part>";
    }
    body += "</CompleteMultipartUpload>";
    Request request{.method = Method::Post,
                    .bucket = bucket,
                    .key = key,
                    .query = canonical_query({{"uploadId", std::string(upload_id)}}),
                    .headers = {"Content-Type: application/xml"},
                    .body = body};
    const std::string subject = object_url(bucket, key);
    auto response = impl_->call(request);
    if (!response) {
        return tl::unexpected(response.error());
    }
    auto tree = result_document(*response, subject, "CompleteMultipartUpload");
    if (!tree) {
        return tl::unexpected(tree.error());
    }
    std::string etag = unquote(tree->child_text("ETag"));
    // Ceph RGW 16 leaves <ETag> out of the result: its ETag header carries it then.
    return etag.empty() ? unquote(response->header("etag")) : etag;
}

Result<std::string> S3Client::copy_object(std::string_view bucket, std::string_view key,
                                          std::string_view source_bucket,
                                          std::string_view source_key, std::string_view acl) {
    Request request{.method = Method::Put,
                    .bucket = bucket,
                    .key = key,
                    .headers = {"x-amz-copy-source: /" + std::string(source_bucket) + "/" +
                                uri_encode(source_key, true)}};
    if (!acl.empty()) {
        request.headers.push_back("x-amz-acl: " + std::string(acl));
    }
    const std::string subject = object_url(bucket, key);
    auto response = impl_->call(request);
    if (!response) {
        if (response.error().message.find("EntityTooLarge") != std::string::npos ||
            response.error().message.find("InvalidRequest") != std::string::npos) {
            return make_error(ErrorCode::Unsupported,
                              "cannot be copied inside the store in one request (over 5 GiB?): " +
                                  response.error().message,
                              object_url(source_bucket, source_key));
        }
        return tl::unexpected(response.error());
    }
    auto tree = result_document(*response, subject, "CopyObject");
    if (!tree) {
        return tl::unexpected(tree.error());
    }
    return unquote(tree->child_text("ETag"));
}

Result<void> S3Client::put_object_acl(std::string_view bucket, std::string_view key,
                                      std::string_view acl) {
    Request request{.method = Method::Put,
                    .bucket = bucket,
                    .key = key,
                    .query = canonical_query({{"acl", ""}}),
                    .headers = {"x-amz-acl: " + std::string(acl)}};
    return impl_->call(request).map([](const Response&) {});
}

Result<void> S3Client::abort_multipart_upload(std::string_view bucket, std::string_view key,
                                              std::string_view upload_id) {
    auto response =
        impl_->call(Request{.method = Method::Delete,
                            .bucket = bucket,
                            .key = key,
                            .query = canonical_query({{"uploadId", std::string(upload_id)}})});
    if (!response && response.error().message.find("NoSuchUpload") != std::string::npos) {
        return {};
    }
    return response.map([](const Response&) {});
}

Result<std::vector<MultipartUpload>> S3Client::list_multipart_uploads(std::string_view bucket,
                                                                      std::string_view prefix) {
    auto response = impl_->call(
        Request{.method = Method::Get,
                .bucket = bucket,
                .query = canonical_query({{"prefix", std::string(prefix)}, {"uploads", ""}})});
    if (!response) {
        return tl::unexpected(response.error());
    }
    auto tree = parse_xml_tree(response->body, object_url(bucket, prefix));
    if (!tree) {
        return tl::unexpected(tree.error());
    }
    std::vector<MultipartUpload> uploads;
    for (const XmlNode& node : tree->children) {
        if (node.name == "Upload") {
            uploads.push_back({node.child_text("Key"), node.child_text("UploadId")});
        }
    }
    return uploads;
}

Result<bool> S3Client::probe_conditional_put(std::string_view bucket, std::string_view probe_key) {
    PutOptions create_only;
    create_only.if_none_match = true;
    if (auto first = put_object(bucket, probe_key, "probe", create_only); !first) {
        if (first.error().code != ErrorCode::Busy) {
            return tl::unexpected(first.error());
        }
        // A leftover probe object: it exists, so the second create below tells the same.
    }
    auto second = put_object(bucket, probe_key, "probe", create_only);
    auto removed = delete_object(bucket, probe_key);
    if (!second && second.error().code != ErrorCode::Busy) {
        return tl::unexpected(second.error());
    }
    if (!removed) {
        return tl::unexpected(removed.error());
    }
    return !second.has_value();
}

Result<void> get_object_to_file(S3Client& client, const S3Location& where, std::string_view key,
                                const std::filesystem::path& path) {
    std::error_code made;
    std::filesystem::create_directories(path.parent_path(), made);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) {
        return make_errno_error("cannot create", path.string(), errno);
    }
    auto got = client.get_object(
        where.bucket, where.key(key), [&out, &path](std::span<const char> bytes) -> Result<void> {
            out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
            if (!out) {
                return make_errno_error("cannot write", path.string(), errno);
            }
            return {};
        });
    if (!got) {
        return tl::unexpected(std::move(got.error()));
    }
    out.close();
    if (!out) {
        return make_errno_error("cannot write", path.string(), errno);
    }
    return {};
}

}  // namespace rpmirror::s3
