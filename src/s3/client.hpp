// The client for the S3 operations a mirror needs (private to the library). Requests are signed
// by libcurl (CURLOPT_AWS_SIGV4, "aws:amz:REGION:s3"); responses are parsed with libxml2
// (src/util/xml).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/s3/s3.hpp"
#include "rpmirror/util/error.hpp"
#include "s3/config.hpp"

namespace rpmirror::s3 {

struct XmlNode;  // s3/xml_tree.hpp

struct PutOptions {
    std::string content_type;  // empty: none sent
    // Lowercase hex SHA-256 of the body, stored as x-amz-meta-sha256 and sent as the signed
    // payload hash (the server then rejects a body that does not match). Computed by put_object
    // when empty.
    std::string sha256;
    // Further user metadata (x-amz-meta-NAME: VALUE), NAME in lowercase.
    std::map<std::string, std::string> metadata;
    // A canned ACL sent as x-amz-acl ("public-read" lets the gateway serve the object to
    // anonymous HTTP clients such as dnf); empty = none sent (the bucket's default). Also sent by
    // create_multipart_upload.
    std::string acl;
    // Send If-None-Match: * (create only). A 412 from the server is Error{Busy}.
    bool if_none_match = false;
    // Send If-Match: ETAG (replace only that version of the object; not an object that is gone
    // or was replaced since). A 412 from the server is Error{Busy}.
    std::string if_match;
};

struct ObjectInfo {
    std::uint64_t size = 0;
    std::string etag;  // without quotes
    std::string last_modified;
    std::map<std::string, std::string> metadata;  // x-amz-meta-* (name lowercase, without prefix)
};

struct ListedObject {
    std::string key;
    std::uint64_t size = 0;
    std::string etag;  // without quotes
    std::string last_modified;
};

struct ByteRange {
    std::uint64_t offset = 0;
    std::uint64_t length = 0;  // > 0
};

struct CompletedPart {
    unsigned part_number = 0;  // 1..10000
    std::string etag;
};

struct MultipartUpload {
    std::string key;
    std::string upload_id;
};

// Receives a body as it arrives; an error aborts the transfer and is returned as is.
using BodySink = std::function<Result<void>(std::span<const char> bytes)>;

// A client of one bucket's store. Every failed request returns an Error whose subject is
// "s3://BUCKET/KEY" (or "s3://BUCKET" for bucket operations) and whose message names the HTTP
// status and the server's error code and message ("HTTP 403 AccessDenied: ..."); a missing
// bucket is an Error about "s3://BUCKET" whatever the key ("bucket 'B' does not exist at
// ENDPOINT (HTTP 404 NoSuchBucket...); create it ..."). Codes:
// NotFound for 404 (NoSuchKey, NoSuchBucket, NoSuchUpload); BadInput for the credential and
// signature errors (InvalidAccessKeyId, SignatureDoesNotMatch, AccessDenied,
// RequestTimeTooSkewed); Busy for 412 PreconditionFailed; Network for everything else,
// transport failures included. SlowDown/503/500 and transport failures are retried first
// (S3Config::retries). Keeps one connection open between requests.
// Not thread-safe: one S3Client per thread.
class S3Client {
  public:
    explicit S3Client(S3Config config);
    S3Client(S3Client&&) noexcept;
    S3Client& operator=(S3Client&&) noexcept;
    ~S3Client();

    const S3Config& config() const;

    // Creates `bucket`; an existing bucket owned by these credentials is not an error.
    Result<void> create_bucket(std::string_view bucket);
    // Deletes the empty `bucket`.
    Result<void> delete_bucket(std::string_view bucket);

    // Stores `body` as `key` in one PUT, with the options above. Returns the ETag.
    Result<std::string> put_object(std::string_view bucket, std::string_view key,
                                   std::string_view body, const PutOptions& options = {});

    // Returns the object's size, ETag and metadata; Error{NotFound} iff it does not exist.
    Result<ObjectInfo> head_object(std::string_view bucket, std::string_view key);

    // Streams the object (or `range` of it) into `sink`; returns its info (size = the whole
    // object's size). A ranged read checks the server answered 206 with that range. With
    // `if_match` (an ETag, without quotes) the read is pinned to that version of the object: one
    // replaced since is refused by the store (Error{Busy}, HTTP 412), so ranges read one by one
    // are never a mix of two versions.
    Result<ObjectInfo> get_object(std::string_view bucket, std::string_view key,
                                  const BodySink& sink,
                                  std::optional<ByteRange> range = std::nullopt,
                                  std::string_view if_match = {});
    // Returns the object (or `range` of it) as a string.
    Result<std::string> get_object(std::string_view bucket, std::string_view key,
                                   std::optional<ByteRange> range = std::nullopt,
                                   std::string_view if_match = {});

    // Gives the existing object `key` the canned ACL `acl` ("private", "public-read", ...):
    // PUT ?acl with x-amz-acl, the object's bytes untouched.
    Result<void> put_object_acl(std::string_view bucket, std::string_view key,
                                std::string_view acl);

    // Copies the object `source_key` of `source_bucket` to `key` of `bucket` inside the store
    // (CopyObject: no byte passes through this host), with its metadata (x-amz-meta-sha256
    // included) and content type. `acl` as PutOptions::acl (a copy does not inherit the source's
    // ACL). Returns the new object's ETag: the source's for an object stored in one PUT, so a
    // caller pins the copy to a version by comparing it (no x-amz-copy-source-if-match: sent
    // beside x-amz-copy-source, Ceph RGW 16 answered SignatureDoesNotMatch to libcurl 7.88's
    // SigV4 here, likely because libcurl sorts the canonical headers as "name:value" strings,
    // which puts it before x-amz-copy-source). Objects over 5 GiB cannot be
    // copied in one request: Error{Unsupported} naming the source.
    Result<std::string> copy_object(std::string_view bucket, std::string_view key,
                                    std::string_view source_bucket, std::string_view source_key,
                                    std::string_view acl = {});

    // Deletes `key`; a key that does not exist is not an error (S3 semantics).
    Result<void> delete_object(std::string_view bucket, std::string_view key);
    // Deletes `keys` in requests of at most 1000 keys. Returns Error naming the first key the
    // server refused (after trying all).
    Result<void> delete_objects(std::string_view bucket, std::span<const std::string> keys);

    // Calls `each` for every object whose key starts with `prefix`, in key order, one page
    // (1000 keys, `page_size` if smaller) per request. An error from `each` stops the listing and
    // is returned. Returns the number of requests made.
    Result<std::size_t> list_objects(std::string_view bucket, std::string_view prefix,
                                     const std::function<Result<void>(const ListedObject&)>& each,
                                     unsigned page_size = 1000);
    // Returns the "directories" right below `prefix` (ListObjectsV2 with delimiter '/': each
    // common prefix, ending in '/'), in key order.
    Result<std::vector<std::string>> list_prefixes(std::string_view bucket,
                                                   std::string_view prefix);
    // Returns every object under `prefix`.
    Result<std::vector<ListedObject>> list_all_objects(std::string_view bucket,
                                                       std::string_view prefix);

    // Multipart upload: create, upload parts (each but the last ≥ 5 MiB), complete or abort.
    // create_multipart_upload stores options.metadata and options.sha256 (which the caller must
    // then supply: the body is not seen whole). complete_multipart_upload checks the body of a
    // 200 too (S3 reports some failures that way). Returns the upload id / the part's ETag / the
    // object's ETag (empty against Ceph RGW 16, whose answer the client does not read it from
    // yet: head_object gives it).
    Result<std::string> create_multipart_upload(std::string_view bucket, std::string_view key,
                                                const PutOptions& options = {});
    Result<std::string> upload_part(std::string_view bucket, std::string_view key,
                                    std::string_view upload_id, unsigned part_number,
                                    std::string_view body);
    Result<std::string> complete_multipart_upload(std::string_view bucket, std::string_view key,
                                                  std::string_view upload_id,
                                                  std::span<const CompletedPart> parts);
    // Aborts the upload; its parts are freed. An upload that no longer exists is not an error.
    Result<void> abort_multipart_upload(std::string_view bucket, std::string_view key,
                                        std::string_view upload_id);
    // Returns the unfinished multipart uploads whose key starts with `prefix` (first 1000).
    Result<std::vector<MultipartUpload>> list_multipart_uploads(std::string_view bucket,
                                                                std::string_view prefix);

    // Returns true iff the store honours If-None-Match: * on PUT (a second create of one key
    // fails with 412), found by creating `probe_key` twice and deleting it.
    Result<bool> probe_conditional_put(std::string_view bucket, std::string_view probe_key);

    // Returns the number of HTTP requests this client sent (retries included).
    std::uint64_t request_count() const;

    // The store's clock minus this host's, in whole seconds, from the Date header of the latest
    // answer that carried one (any status); nullopt before such an answer.
    std::optional<std::chrono::seconds> store_clock_offset() const;
    // The time on the store's clock: ours plus store_clock_offset(), or plus
    // S3Config::clock_offset before the store has answered. What leases are judged by, so that a
    // host whose clock is wrong neither takes over a live lease nor writes one that looks expired.
    std::chrono::system_clock::time_point store_now() const;

  private:
    // ListObjectsV2 pages of `prefix` (with `delimiter` unless empty): `each` gets every child of
    // each ListBucketResult. Returns the number of requests made.
    Result<std::size_t> list_pages(std::string_view bucket, std::string_view prefix,
                                   unsigned page_size, std::string_view delimiter,
                                   const std::function<Result<void>(const XmlNode&)>& each);

    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// Writes the object `key` of `where` (relative to its prefix) to the new file `path` (its
// directories created), replacing what is there. Returns the client's error, or Error{Io} naming
// `path`.
Result<void> get_object_to_file(S3Client& client, const S3Location& where, std::string_view key,
                                const std::filesystem::path& path);

}  // namespace rpmirror::s3
