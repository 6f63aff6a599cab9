// What every ObjectStore shares (store/object_store.hpp): keys, the publication order, and the
// one place a destination string becomes a store.
#include "store/object_store.hpp"

#include <fmt/core.h>

#include "s3/config.hpp"
#include "store/destination.hpp"

namespace rpmirror::store {

namespace object_store_impl {
namespace {

// True iff `key` is `name` or ends in "/<name>" (a repository's file, at the root or in a tree).
bool names_file(std::string_view key, std::string_view name) {
    return key == name || (key.size() > name.size() && key.ends_with(name) &&
                           key[key.size() - name.size() - 1] == '/');
}

}  // namespace
}  // namespace object_store_impl

int publication_rank(std::string_view key) {
    return key == ".treeinfo"                                              ? 3
           : object_store_impl::names_file(key, "repodata/repomd.xml")     ? 1
           : object_store_impl::names_file(key, "repodata/repomd.xml.asc") ? 2
                                                                           : 0;
}

Result<void> check_key(std::string_view key, bool allow_root) {
    if (key.empty()) {
        return allow_root ? Result<void>{}
                          : make_error(ErrorCode::BadInput, "not a key: empty", std::string(key));
    }
    if (key.front() == '/' || key.back() == '/') {
        return make_error(ErrorCode::BadInput, "not a key: a leading or trailing '/'",
                          std::string(key));
    }
    std::size_t start = 0;
    while (start <= key.size()) {
        const std::size_t slash = std::min(key.find('/', start), key.size());
        const std::string_view segment = key.substr(start, slash - start);
        if (segment.empty() || segment == "." || segment == "..") {
            return make_error(ErrorCode::BadInput, "not a key: an empty, \".\" or \"..\" segment",
                              std::string(key));
        }
        if (segment.find('\0') != std::string_view::npos) {
            return make_error(ErrorCode::BadInput, "not a key: a NUL byte", std::string(key));
        }
        start = slash + 1;
    }
    return {};
}

std::string join_key(std::string_view prefix, std::string_view relative) {
    if (prefix.empty()) {
        return std::string(relative);
    }
    if (relative.empty()) {
        return std::string(prefix);
    }
    return fmt::format("{}/{}", prefix, relative);
}

std::string parent_of(std::string_view key) {
    const auto slash = key.rfind('/');
    return slash == std::string_view::npos ? std::string() : std::string(key.substr(0, slash));
}

std::string name_of(std::string_view key) {
    const auto slash = key.rfind('/');
    return std::string(slash == std::string_view::npos ? key : key.substr(slash + 1));
}

Result<std::unique_ptr<ObjectStore>> open_object_store(std::string_view destination,
                                                       const std::optional<s3::S3Overrides>& s3) {
    const Destination place = Destination::of(destination);
    if (!place.in_bucket()) {
        return disk_object_store(std::filesystem::path(destination));
    }
    auto where = place.location();
    if (!where) {
        return tl::unexpected(std::move(where.error()));
    }
    auto config = s3::resolve_config(s3.value_or(s3::S3Overrides{}), s3::process_environment());
    if (!config) {
        return tl::unexpected(std::move(config.error()));
    }
    return s3_object_store(std::move(*config), std::move(*where));
}

}  // namespace rpmirror::store
