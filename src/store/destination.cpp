// Destinations as users give them (store/destination.hpp): the one place a bucket is told
// from a directory, and the arithmetic on both.
#include "store/destination.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "s3/config.hpp"

namespace rpmirror::store {

namespace {

// `text` without the trailing '/' of a URL (never the one of its scheme).
std::string url_without_trailing_slash(std::string_view text) {
    while (text.size() > s3::kScheme.size() && text.ends_with('/')) {
        text.remove_suffix(1);
    }
    return std::string(text);
}

// `path` without a trailing '/' ("/" stays "/").
std::filesystem::path path_without_trailing_slash(std::filesystem::path path) {
    while (!path.has_filename() && path.has_relative_path()) {
        path = path.parent_path();
    }
    return path;
}

// True iff `inner` is `outer` or lies beneath it by their names alone.
bool names_contain(const std::filesystem::path& outer, const std::filesystem::path& inner) {
    return std::mismatch(outer.begin(), outer.end(), inner.begin(), inner.end()).first ==
           outer.end();
}

bool begins_with(const std::vector<std::string>& names, const std::vector<std::string>& prefix) {
    return names.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), names.begin());
}

using DirectoryId = std::pair<dev_t, ino_t>;

}  // namespace

Destination Destination::of(std::string_view text) {
    if (text.starts_with(s3::kScheme)) {
        // URLs, never normalised as paths ("s3://" is not "s3:/").
        return Destination(std::string(text), url_without_trailing_slash(text), true);
    }
    std::error_code error;
    std::filesystem::path absolute = std::filesystem::absolute(text, error);
    if (error) {
        absolute = text;
    }
    return Destination(std::string(text), path_without_trailing_slash(absolute.lexically_normal()),
                       false);
}

Result<Destination> Destination::parse(std::string_view text) {
    if (text.empty()) {
        return make_error(ErrorCode::BadInput,
                          "empty destination (a directory or s3://BUCKET/PREFIX)",
                          std::string(text));
    }
    Destination destination = of(text);
    if (destination.in_bucket()) {
        if (auto where = destination.location(); !where) {
            return tl::unexpected(std::move(where.error()));
        }
    }
    return destination;
}

std::optional<Destination> Destination::parent() const {
    if (!bucket_) {
        if (normal_ == normal_.root_path() || !normal_.has_parent_path()) {
            return std::nullopt;
        }
        return Destination(normal_.parent_path().native(), normal_.parent_path(), false);
    }
    const auto where = location();
    if (!where || where->prefix.empty()) {
        return std::nullopt;  // a bucket's top, or no bucket
    }
    std::string above = normal_.native();
    above.erase(above.rfind('/'));
    return Destination(above, above, true);
}

Destination Destination::join(std::string_view relative) const {
    if (relative.empty()) {
        return *this;
    }
    if (bucket_) {
        // (The URL's own '/' joins.)
        std::string joined = normal_.native() + "/" + std::string(relative);
        return Destination(joined, url_without_trailing_slash(joined), true);
    }
    const std::filesystem::path joined =
        path_without_trailing_slash((normal_ / relative).lexically_normal());
    return Destination(joined.native(), joined, false);
}

std::string Destination::describe(const std::filesystem::path& relative) const {
    if (bucket_) {
        return normal_.native() + "/" + relative.string();
    }
    return (normal_ / relative).string();
}

Result<s3::S3Location> Destination::location() const {
    if (!bucket_) {
        return make_error(ErrorCode::BadInput, "not an s3:// location (s3://BUCKET/PREFIX)",
                          given_);
    }
    return s3::S3Location::parse(given_);
}

bool Destination::may_exist() const {
    std::error_code error;
    return bucket_ || std::filesystem::is_directory(normal_, error);
}

struct Destination::Resolved::State {
    bool bucket = false;
    bool comparable = true;  // false: an s3:// URL that does not parse
    std::string bucket_name;
    // A directory: the directories from "/" down to the deepest one of the path that exists.
    std::vector<DirectoryId> chain;
    // A directory: the names of the path below chain.back() (not there yet); a prefix: its
    // segments.
    std::vector<std::string> names;
    std::filesystem::path spelled;   // a directory: absolute and lexically normal, as given
    std::filesystem::path resolved;  // a directory: symlinks and ".." resolved as far as it exists
};

Destination::Resolved::Resolved(std::unique_ptr<State> state) : state_(std::move(state)) {}
Destination::Resolved::Resolved(Resolved&&) noexcept = default;
Destination::Resolved& Destination::Resolved::operator=(Resolved&&) noexcept = default;
Destination::Resolved::~Resolved() = default;

Destination::Resolved Destination::resolve() const {
    auto tree = std::make_unique<Resolved::State>();
    tree->bucket = bucket_;
    if (bucket_) {
        const auto where = location();  // its prefix: no "", "." or ".." segment
        if (!where) {
            tree->comparable = false;
            return Resolved(std::move(tree));
        }
        tree->bucket_name = where->bucket;
        std::string_view prefix = where->prefix;
        while (!prefix.empty()) {
            const std::size_t slash = prefix.find('/');
            tree->names.emplace_back(prefix.substr(0, slash));
            prefix.remove_prefix(slash == std::string_view::npos ? prefix.size() : slash + 1);
        }
        return Resolved(std::move(tree));
    }
    tree->spelled = normal_;
    // The existing part through realpath (symlinks, ".." after a symlink: so from the path as
    // given, not its lexically normal form), the rest lexically.
    std::error_code error;
    std::filesystem::path absolute = std::filesystem::absolute(given_, error);
    if (error) {
        absolute = given_;
    }
    const std::filesystem::path canonical = std::filesystem::weakly_canonical(absolute, error);
    tree->resolved =
        error ? tree->spelled : path_without_trailing_slash(canonical.lexically_normal());
    // Identified by device and inode (a bind mount of a directory is that directory), from "/"
    // down. A name that is not an existing directory (or cannot be examined) ends the chain; it
    // and the names after it are compared as names.
    std::filesystem::path walked = tree->resolved.root_path();
    struct stat st {};
    bool is_existing = ::stat(walked.c_str(), &st) == 0;
    if (is_existing) {
        tree->chain.emplace_back(st.st_dev, st.st_ino);
    }
    for (const std::filesystem::path& name : tree->resolved.relative_path()) {
        if (name.empty()) {
            continue;
        }
        if (is_existing) {
            walked /= name;
            is_existing = ::stat(walked.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
            if (is_existing) {
                tree->chain.emplace_back(st.st_dev, st.st_ino);
                continue;
            }
        }
        tree->names.push_back(name.string());
    }
    tree->comparable = !tree->chain.empty();
    return Resolved(std::move(tree));
}

bool Destination::Resolved::contains(const Resolved& inner_resolved) const {
    const State& outer = *state_;
    const State& inner = *inner_resolved.state_;
    if (!outer.comparable || !inner.comparable || outer.bucket != inner.bucket) {
        return false;
    }
    if (outer.bucket) {
        return outer.bucket_name == inner.bucket_name && begins_with(inner.names, outer.names);
    }
    if (outer.names.empty()) {
        // outer exists: inner is beneath it iff it is one of the directories inner passes.
        return std::find(inner.chain.begin(), inner.chain.end(), outer.chain.back()) !=
               inner.chain.end();
    }
    // outer does not exist yet: inner must go through the same missing names.
    return inner.chain.back() == outer.chain.back() && begins_with(inner.names, outer.names);
}

std::string_view Destination::Resolved::relation(bool equal) const {
    if (equal) {
        return state_->bucket ? " is the same prefix as " : " is the same directory as ";
    }
    return state_->bucket ? " is under " : " is inside ";
}

std::string Destination::Resolved::how(const Resolved& outer_resolved) const {
    const State& inner = *state_;
    const State& outer = *outer_resolved.state_;
    if (inner.bucket || names_contain(outer.spelled, inner.spelled)) {
        return "";
    }
    if (names_contain(outer.resolved, inner.resolved)) {
        return fmt::format(" (they resolve to {} and {})", inner.resolved.native(),
                           outer.resolved.native());
    }
    return fmt::format(" ({} and {} are one directory by device and inode: a bind mount)",
                       inner.resolved.native(), outer.resolved.native());
}

}  // namespace rpmirror::store
