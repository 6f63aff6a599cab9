// S3Client's operations: buckets, objects (put, head, get, delete, copy, ACLs), listings and
// multipart uploads, each built as a request and read from its answer here; client_request.cpp
// signs and sends them.
#include <openssl/evp.h>

#include <algorithm>
#include <charconv>
#include <fstream>

#include "checksum/hasher.hpp"
#include "fs/tree.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "rpmirror/s3/s3.hpp"
#include "s3/client.hpp"
#include "s3/client_internal.hpp"
#include "s3/config.hpp"
#include "s3/xml_tree.hpp"
#include "util/xml_scanner.hpp"

namespace rpmirror::s3 {

namespace {

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

std::string unquote(std::string etag) {
    if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') {
        etag = etag.substr(1, etag.size() - 2);
    }
    return etag;
}

}  // namespace

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
    if (!options.if_match.empty()) {
        // Bare, not quoted: Ceph RGW 16.2 compares a PUT's If-Match with the bare ETag, so a
        // quoted one (RFC 9110's form) never matches there; AWS S3 takes either.
        headers.push_back("If-Match: " + options.if_match);
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
            body += "<Object><Key>" + xml_scan::escape(keys[index]) + "</Key></Object>";
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
                xml_scan::escape(part.etag) + "\"</ETag></Part>";
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
    (void)fs::make_directories(path.parent_path());  // else opening it below says why
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
