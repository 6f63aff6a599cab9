// s3://BUCKET/PREFIX: parsing and key composition.
#include <string>

#include "rpmirror/s3/s3.hpp"
#include "s3/config.hpp"

namespace rpmirror::s3 {

namespace {

// Returns what is wrong with `bucket` as an S3 bucket name, or "" iff it is valid.
std::string bucket_problem(std::string_view bucket) {
    if (bucket.empty()) {
        return "no bucket name";
    }
    if (bucket.size() < 3 || bucket.size() > 63) {
        return "bucket name '" + std::string(bucket) + "' must have 3 to 63 characters";
    }
    for (const char c : bucket) {
        const bool allowed =
            (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
        if (!allowed) {
            return "bucket name '" + std::string(bucket) +
                   "' may only contain lowercase letters, digits, '.' and '-'";
        }
    }
    auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
    if (!alnum(bucket.front()) || !alnum(bucket.back())) {
        return "bucket name '" + std::string(bucket) +
               "' must start and end with a lowercase letter or digit";
    }
    return {};
}

}  // namespace

Result<S3Location> S3Location::parse(std::string_view text) {
    const std::string subject(text);
    if (!text.starts_with(kScheme)) {
        return make_error(ErrorCode::BadInput, "not an s3:// location (s3://BUCKET/PREFIX)",
                          subject);
    }
    std::string_view rest = text.substr(kScheme.size());
    const auto slash = rest.find('/');
    const std::string_view bucket = rest.substr(0, slash);
    if (const std::string problem = bucket_problem(bucket); !problem.empty()) {
        return make_error(ErrorCode::BadInput, problem, subject);
    }
    S3Location location;
    location.bucket = std::string(bucket);
    std::string_view prefix =
        slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
    if (!prefix.empty() && prefix.back() == '/') {
        prefix.remove_suffix(1);
    }
    if (prefix.empty()) {
        return location;
    }
    std::size_t start = 0;
    for (;;) {
        const auto end = prefix.find('/', start);
        const std::string_view segment = prefix.substr(start, end - start);
        if (segment.empty() || segment == "." || segment == "..") {
            return make_error(ErrorCode::BadInput,
                              "the prefix may not contain empty, '.' or '..' path segments",
                              subject);
        }
        if (end == std::string_view::npos) {
            break;
        }
        start = end + 1;
    }
    location.prefix = std::string(prefix) + "/";
    return location;
}

std::string S3Location::key(std::string_view relative) const {
    std::string_view base = prefix;
    while (relative.starts_with("../")) {
        relative.remove_prefix(3);
        base.remove_suffix(base.empty() ? 0 : 1);  // the '/' that ends it
        const std::size_t slash = base.rfind('/');
        base = slash == std::string_view::npos ? std::string_view{} : base.substr(0, slash + 1);
    }
    return std::string(base) + std::string(relative);
}

std::string S3Location::to_string() const {
    return std::string(kScheme) + bucket + "/" + prefix;
}

std::string object_url(std::string_view bucket, std::string_view key) {
    std::string url = std::string(kScheme) + std::string(bucket);
    if (!key.empty()) {
        url += "/";
        url += key;
    }
    return url;
}

}  // namespace rpmirror::s3
