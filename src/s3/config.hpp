// Where a bucket mirror goes (`s3://BUCKET/PREFIX`) and how the endpoint, region and
// credentials are found: the configuration behind rpmirror/s3/s3.hpp's S3Overrides.
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

namespace rpmirror::s3 {

// How every location in a bucket begins. Whether a destination is one is decided in one place,
// inside the library.
inline constexpr std::string_view kScheme = "s3://";

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

    // Returns the key of `relative` (e.g. "repodata/repomd.xml") under the prefix. Leading ".."
    // segments of `relative` climb out of the prefix, one segment each ("../blobstore/x.rpm"
    // under "m/al/x86_64/" is "m/al/blobstore/x.rpm": an --upstream-layout blob); never above
    // the bucket's root (the caller keeps them beneath the root it owns).
    std::string key(std::string_view relative) const;

    // Returns "s3://BUCKET/PREFIX".
    std::string to_string() const;
};

// Returns "s3://BUCKET/KEY", how errors name an object.
std::string object_url(std::string_view bucket, std::string_view key);

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
    // (the server refuses a request signed too far from its own clock: RequestTimeTooSkewed).
    std::chrono::seconds clock_offset{0};
    // How long a sync's lease on a repository (s3/lease.hpp) lasts unless renewed; it is renewed
    // every quarter of it. A worker that died blocks its repository at most this long.
    std::chrono::seconds lease_ttl{120};
    // SlowDown, 503, 500 and connection failures are retried this many times, backing off
    // exponentially from `retry_base_delay` (with jitter).
    unsigned retries = 5;
    std::chrono::milliseconds retry_base_delay{200};
    std::chrono::seconds connect_timeout{30};
    // A request during which no byte moves either way for this long (a gateway that accepted it
    // and never answers, a connection that went silent) is abandoned as a connection failure,
    // and so retried as one. Long uploads and downloads are never cut while bytes move.
    std::chrono::seconds stall_timeout{60};
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
// Not from AWS: RPMIRROR_S3_RETRY_DELAY_MS sets `retry_base_delay` (the first back-off, in
// milliseconds), RPMIRROR_S3_CLOCK_OFFSET (seconds, may be negative) sets `clock_offset`,
// RPMIRROR_S3_LEASE_TTL (seconds, >= 1) sets `lease_ttl`, RPMIRROR_S3_STALL_TIMEOUT (seconds,
// >= 1) sets `stall_timeout`; a value that is not such a number is
// an Error{BadInput} naming the variable.
Result<S3Config> resolve_config(const S3Overrides& overrides, const EnvLookup& env);

}  // namespace rpmirror::s3
