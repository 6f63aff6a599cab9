// A destination as a user gives it (-p, `destination =`, --snapshot-dir, --metadata-path, a diff
// side): a directory or an s3:// prefix, told apart once, here (Destination::of is the one place
// that looks at "s3://"). The path arithmetic that works on both lives in the value, beside
// open_object_store (store/object_store.hpp), which opens one: features never ask which it is.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "rpmirror/s3/s3.hpp"
#include "rpmirror/util/error.hpp"
#include "s3/config.hpp"

namespace rpmirror::store {

class Destination {
  public:
    // Returns the destination `text` names: a bucket's prefix iff `text` starts with "s3://", a
    // directory otherwise (made absolute against the current directory). Never fails: a bucket's
    // text that does not parse is kept as given (location() says what is wrong, opening it
    // refuses it, and it lies beneath nothing).
    static Destination of(std::string_view text);

    // As of(), and Error{BadInput} naming `text` iff it is empty or names a bucket's prefix that
    // does not parse (s3::S3Location::parse's error).
    static Result<Destination> parse(std::string_view text);

    // True iff the destination is a prefix in a bucket.
    bool in_bucket() const { return bucket_; }

    // The text as given.
    const std::string& given() const { return given_; }

    // The normal form: a directory absolute and lexically normal, an s3:// URL as given; neither
    // with a trailing '/' ("/" stays "/", "s3://b/" is "s3://b").
    const std::filesystem::path& path() const { return normal_; }

    // How a configuration keeps and shows it: a directory's normal form (path()), a bucket's URL
    // as the user wrote it (a trailing '/' kept).
    std::filesystem::path configured() const {
        return bucket_ ? std::filesystem::path(given_) : normal_;
    }

    // True iff `other` is of the same medium (both directories, or both in buckets).
    bool same_medium(const Destination& other) const { return bucket_ == other.bucket_; }

    // The destination holding this one (its parent directory, or the prefix above it in its
    // bucket); nullopt iff there is none ("/", a bucket's top, or a bucket's text that does not
    // parse).
    std::optional<Destination> parent() const;

    // The destination `relative` (names joined by '/', no "..") beneath this one: "/m" and "a/b"
    // give "/m/a/b", "s3://b/m" and "a/b" give "s3://b/m/a/b".
    Destination join(std::string_view relative) const;

    // How a user reads `relative` beneath the destination: an absolute path, or the URL of the
    // object.
    std::string describe(const std::filesystem::path& relative) const;

    // The bucket and prefix of a destination in a bucket; Error{BadInput} naming the text iff it
    // does not parse or the destination is a directory.
    Result<s3::S3Location> location() const;

    // True iff the destination may be read as a mirror's directory without a request: a
    // directory that exists, or any prefix in a bucket (whose contents only a request tells).
    bool may_exist() const;

    // Where a destination lies, resolved once for comparing with others (the check that trees
    // of a run do not overlap): a directory by the device and inode of each existing directory on
    // its way down (symlinks and bind mounts followed), then by the names not there yet; a prefix
    // by its bucket and segments.
    class Resolved {
      public:
        Resolved(Resolved&&) noexcept;
        Resolved& operator=(Resolved&&) noexcept;
        ~Resolved();

        // True iff `inner` is this destination or lies beneath it; false across media, or
        // when either is a bucket's text that does not parse.
        bool contains(const Resolved& inner) const;

        // How "<inner> <relation> <outer>" reads: " is the same prefix as ", " is inside ", ...
        std::string_view relation(bool equal) const;

        // What shows an overlap of this (inner) with `outer` that their spelling does not: ""
        // when the spelling shows it, else " (they resolve to A and B)" or the bind mount.
        std::string how(const Resolved& outer) const;

      private:
        friend class Destination;
        struct State;
        explicit Resolved(std::unique_ptr<State> state);
        std::unique_ptr<State> state_;
    };

    // Resolves the destination now (see Resolved); reads the file system, never a bucket.
    Resolved resolve() const;

  private:
    Destination(std::string given, std::filesystem::path normal, bool bucket)
        : given_(std::move(given)), normal_(std::move(normal)), bucket_(bucket) {}

    std::string given_;
    std::filesystem::path normal_;
    bool bucket_ = false;
};

}  // namespace rpmirror::store
