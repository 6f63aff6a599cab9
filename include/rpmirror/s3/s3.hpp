// S3-compatible object storage (AWS S3, Ceph RGW, MinIO) as a destination (`s3://BUCKET/PREFIX`):
// the settings a user gives explicitly. The endpoint, region and credentials not given are found
// as the AWS CLI finds them (environment, ~/.aws/credentials, ~/.aws/config).
#pragma once

#include <optional>
#include <string>

namespace rpmirror::s3 {

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

}  // namespace rpmirror::s3
