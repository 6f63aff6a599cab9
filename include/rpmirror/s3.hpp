// S3-compatible object storage (AWS S3, Ceph RGW, MinIO): where a mirror goes
// (`s3://BUCKET/PREFIX`), how the endpoint, region and credentials are found, and a client for the
// operations a mirror needs. Requests are signed by libcurl (CURLOPT_AWS_SIGV4,
// "aws:amz:REGION:s3"); responses are parsed with libxml2 (src/util/xml). The foundation of the
// s3:// destination (issue 14).
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

#include "rpmirror/error.hpp"

namespace rpmirror::s3 {

// Returns true iff `text` starts with "s3://" (the form every s3 destination has).
bool is_s3_url(std::string_view text);

// A bucket and a key prefix: `s3://BUCKET/PREFIX`.
struct S3Location {
    std::string bucket;
    // Empty (the bucket's root) or ending in '/'; never starting with '/'.
    std::string prefix;

    // Parses "s3://BUCKET[/PREFIX[/]]". The bucket must be a valid S3 bucket name (3..63
    // characters of a-z 0-9 . -, starting and ending with a letter or digit); the prefix may not
    // contain empty, "." or ".." segments. A trailing '/' is added to a non-empty prefix.
    // Returns Error{BadInput} naming `text` and what was wrong otherwise.
    static Result<S3Location> parse(std::string_view text);

    // Returns the key of `relative` (e.g. "repodata/repomd.xml") under the prefix.
    std::string key(std::string_view relative) const;

    // Returns "s3://BUCKET/PREFIX".
    std::string to_string() const;
};

// Returns "s3://BUCKET/KEY", how errors name an object.
std::string object_url(std::string_view bucket, std::string_view key);

struct S3Credentials {
    std::string access_key_id;
    std::string secret_access_key;
    std::string session_token;  // empty unless temporary credentials
};

// What a user set explicitly (command line, configuration file); each one wins over the
// environment and the AWS files.
struct S3Overrides {
    std::optional<std::string> endpoint;  // "http://127.0.0.1:7480", "https://s3.example.com"
    std::optional<std::string> region;
    std::optional<std::string> profile;
    std::optional<S3Credentials> credentials;
    std::optional<bool> path_style;
};

// Everything a client needs to talk to one store.
struct S3Config {
    // Scheme, host and optional port, no trailing '/'. AWS: "https://s3.REGION.amazonaws.com".
    std::string endpoint;
    std::string region = "us-east-1";
    S3Credentials credentials;
    // true: http://HOST/BUCKET/KEY (Ceph, MinIO); false: http://BUCKET.HOST/KEY (AWS).
    bool path_style = true;
    // Where the credentials came from ("environment", "profile default in ~/.aws/credentials",
    // "explicit"), for messages.
    std::string credentials_source;
    // Added to the local clock when signing requests; for a host whose clock is known to be off
    // (and for tests of the server's RequestTimeTooSkewed check).
    std::chrono::seconds clock_offset{0};
    // How long a sync's lease on a repository (s3/lease.hpp) lasts unless renewed; it is renewed
    // every quarter of it. A worker that died blocks its repository at most this long.
    std::chrono::seconds lease_ttl{120};
    // SlowDown, 503, 500 and connection failures are retried this many times, backing off
    // exponentially from `retry_base_delay` (with jitter).
    unsigned retries = 5;
    std::chrono::milliseconds retry_base_delay{200};
    std::chrono::seconds connect_timeout{30};
    // The CA certificates an https:// endpoint is verified against (CURLOPT_CAINFO); empty = the
    // system's. Certificates are always verified. Proxies: libcurl's https_proxy / no_proxy.
    std::filesystem::path ca_bundle;
};

// Returns the value of an environment variable, or nullopt iff it is unset.
using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;

// Returns the process environment as an EnvLookup.
EnvLookup process_environment();

// Resolves the configuration the way the AWS CLI does, each setting from the first place that has
// it:
// - credentials: `overrides.credentials`; the profile `overrides.profile` in the credentials file
//   (then the config file); AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN);
//   the profile AWS_PROFILE (or "default") in the credentials file, then in the config file.
// - region: `overrides.region`; AWS_REGION; AWS_DEFAULT_REGION; the profile's `region`;
//   "us-east-1".
// - endpoint: `overrides.endpoint`; AWS_ENDPOINT_URL_S3; AWS_ENDPOINT_URL; the profile's
//   `endpoint_url` (or `endpoint_url` in its `s3 =` sub-section); AWS's regional endpoint.
// - path style: `overrides.path_style`; the profile's `s3 = addressing_style = path|virtual`;
//   path style iff an endpoint was set (Ceph, MinIO), virtual-hosted for AWS.
// - CA bundle: AWS_CA_BUNDLE; the profile's `ca_bundle`; none (the system's certificates). A
//   bundle that is not a readable file is an error naming it and where it was set.
// Files: AWS_SHARED_CREDENTIALS_FILE (default ~/.aws/credentials) and AWS_CONFIG_FILE (default
// ~/.aws/config), ~ from HOME; a missing file is not an error. Returns Error{BadInput} naming the
// file and line for a malformed file, naming the profile for an explicit profile that exists in
// neither file, and listing where it looked when no credentials were found at all; an endpoint
// that is not http(s)://HOST[:PORT] is an error naming it.
// Not from AWS: RPMIRROR_S3_RETRY_DELAY_MS sets `retry_base_delay` (tests make retries fast with
// it), RPMIRROR_S3_CLOCK_OFFSET (seconds, may be negative) sets `clock_offset`,
// RPMIRROR_S3_LEASE_TTL (seconds, >= 1) sets `lease_ttl`; a value that is not such a number is
// an Error{BadInput} naming the variable.
Result<S3Config> resolve_config(const S3Overrides& overrides, const EnvLookup& env);

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
// status and the server's error code and message ("HTTP 403 AccessDenied: ..."). Codes:
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
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace rpmirror::s3
