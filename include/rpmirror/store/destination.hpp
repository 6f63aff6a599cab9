// A destination as a user gives it (-p, `destination =`, --snapshot-dir, --metadata-path): a
// directory or an s3:// prefix. The path arithmetic that works on both lives here, beside
// open_object_store (store/object_store.hpp), which opens one: features never ask which it is.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace rpmirror::store {

// `destination` without trailing '/': a directory made absolute and normal, an s3:// URL as given.
std::filesystem::path normal_destination(const std::filesystem::path& destination);

// True iff `a` and `b` are of one medium (both directories, or both in buckets).
bool same_medium(std::string_view a, std::string_view b);

// The destination holding `destination` (its parent directory, or the prefix above it in its
// bucket); nullopt iff there is none (a bucket's top).
std::optional<std::filesystem::path> destination_parent(std::string_view destination);

// How a user reads `relative` beneath `destination`: an absolute path, or the URL of the object.
std::string describe_beneath(const std::filesystem::path& destination,
                             const std::filesystem::path& relative);

}  // namespace rpmirror::store
