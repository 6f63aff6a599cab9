// The S3 store options (see s3_options.hpp).
#include "s3_options.hpp"

#include <string>

namespace rpmirror::cli {

void add_s3_options(CLI::App& app, s3::S3Overrides& overrides) {
    app.add_option_function<std::string>(
           "--s3-endpoint", [&overrides](const std::string& value) { overrides.endpoint = value; },
           "S3 endpoint URL, e.g. http://127.0.0.1:7480 (default: AWS_ENDPOINT_URL, ~/.aws/config, "
           "AWS)")
        ->type_name("URL");
    app.add_option_function<std::string>(
           "--s3-region", [&overrides](const std::string& value) { overrides.region = value; },
           "S3 region (default: AWS_REGION, the profile's, us-east-1)")
        ->type_name("REGION");
    app.add_option_function<std::string>(
           "--s3-profile", [&overrides](const std::string& value) { overrides.profile = value; },
           "profile in ~/.aws/credentials and ~/.aws/config (default: AWS_PROFILE, default)")
        ->type_name("NAME");
    app.add_option_function<std::string>(
           "--s3-addressing",
           [&overrides](const std::string& value) { overrides.path_style = value == "path"; },
           "path (http://HOST/BUCKET/KEY: Ceph, MinIO) or virtual (http://BUCKET.HOST/KEY: AWS); "
           "default: path iff an endpoint is set")
        ->check(CLI::IsMember({"path", "virtual"}));
}

}  // namespace rpmirror::cli
