// Destinations as users give them (rpmirror/store/destination.hpp).
#include "rpmirror/store/destination.hpp"

#include "rpmirror/s3/s3.hpp"

namespace rpmirror::store {

std::filesystem::path normal_destination(const std::filesystem::path& destination) {
    std::filesystem::path normal = destination;
    if (!s3::is_s3_url(normal.native())) {
        normal = std::filesystem::absolute(normal).lexically_normal();
    }
    while (!normal.has_filename() && normal.has_parent_path()) {
        normal = normal.parent_path();
    }
    return normal;
}

bool same_medium(std::string_view a, std::string_view b) {
    return s3::is_s3_url(a) == s3::is_s3_url(b);
}

std::optional<std::filesystem::path> destination_parent(std::string_view destination) {
    while (destination.size() > 1 && destination.ends_with('/')) {
        destination.remove_suffix(1);
    }
    std::filesystem::path parent = std::filesystem::path(destination).parent_path();
    if (s3::is_s3_url(destination) && !s3::S3Location::parse(parent.native())) {
        return std::nullopt;
    }
    return parent;
}

std::string describe_beneath(const std::filesystem::path& destination,
                             const std::filesystem::path& relative) {
    // (No path arithmetic on "s3://": the URL's own '/' joins.)
    if (s3::is_s3_url(destination.native())) {
        return destination.native() + "/" + relative.string();
    }
    return std::filesystem::absolute(destination / relative).string();
}

}  // namespace rpmirror::store
