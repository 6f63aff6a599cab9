// S3Client's request machinery, shared by client.cpp (the operations) and client_request.cpp
// (signing, the curl call, retries, error parsing): a request and its response, the S3 errors,
// and S3Client::Impl, the client's state (private).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "download/curl_handles.hpp"
#include "download/curl_options.hpp"
#include "download/download.hpp"
#include "rpmirror/s3/s3.hpp"
#include "rpmirror/util/error.hpp"
#include "s3/client.hpp"
#include "s3/config.hpp"
#include "s3/xml_tree.hpp"

namespace rpmirror::s3 {

// Percent-encodes `text` as SigV4 wants: everything but A-Z a-z 0-9 - _ . ~ (and '/' iff
// `keep_slash`).
std::string uri_encode(std::string_view text, bool keep_slash);

// Builds a canonical query string from (name, value) pairs.
std::string canonical_query(std::vector<std::pair<std::string, std::string>> parameters);

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

ErrorCode code_for(long status, std::string_view s3_code);

// Returns the error of a response whose body is an S3 <Error> document (or empty).
Error s3_error(const Response& response, const std::string& subject);

// The <OPERATIONResult> document of a 200 answer. S3 may answer 200 and report the failure in
// the body (CompleteMultipartUpload, CopyObject): an <Error> there is that error.
Result<XmlNode> result_document(const Response& response, const std::string& subject,
                                const std::string& operation);

struct S3Client::Impl {
    S3Config config;
    download::CurlEasy easy;
    std::string user_agent = download::user_agent_for(DownloadOptions{});
    std::uint64_t requests = 0;
    // The store's clock minus ours, from the Date of the latest answer that had one.
    std::optional<std::chrono::seconds> store_offset;
    std::minstd_rand jitter{std::random_device{}()};

    std::string url_for(std::string_view bucket, std::string_view key,
                        const std::string& query) const;

    // Records how far the store's clock (the answer's Date header, RFC 7231; whole seconds) is
    // from ours, iff the answer has a Date curl_getdate can read.
    void note_store_clock(const Response& response);

    // Sends `request` once. Returns the response (any status), or a Network error for a transport
    // failure; `retry` says whether sending it again may help.
    Result<Response> send_once(const Request& request, const std::string& subject, bool& retry);

    // Sends `request`, retrying transport failures, 500, 503 and SlowDown with exponential
    // backoff. Returns the last response (any status) or transport error.
    Result<Response> send(const Request& request, const std::string& subject);

    // Sends `request` and returns its response iff the status is 2xx, else the S3 error.
    Result<Response> call(const Request& request);
};

}  // namespace rpmirror::s3
