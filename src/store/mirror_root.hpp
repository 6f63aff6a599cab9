// A mirror's root (-p DIR or -p s3://BUCKET/PREFIX): where its repositories are, each
// <root>/<id>, and the stores to read and change them through. Opened from the destination string
// in one place (open_object_store's rule: an s3:// URL is a prefix in a bucket, anything else a
// directory), so a feature over a whole mirror (verify) is written once.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/s3/s3.hpp"
#include "rpmirror/util/error.hpp"
#include "s3/config.hpp"
#include "store/mirror_store.hpp"
#include "store/object_store.hpp"

namespace rpmirror::s3 {
class S3Client;
}

namespace rpmirror::store {

struct MirrorRootOptions {
    std::filesystem::path state_dir;    // a local mirror's state directory ("" = the default)
    std::optional<s3::S3Overrides> s3;  // a bucket's settings (each unset one from the environment)
};

// What a mirror's root holds, found by discover().
struct MirrorContents {
    // The repositories: each <id> with published metadata (<id>/repodata/repomd.xml) or a bucket
    // mirror's state object (<id>/.rpmirror/state.json), and each repository of an installation
    // tree there as "<tree>/<path>" (the .treeinfo's repositories that hold repodata/repomd.xml);
    // sorted.
    std::vector<std::string> repositories;
    std::vector<std::string> trees;  // each <id> holding a .treeinfo, sorted
};

class MirrorRoot {
  public:
    // The root `destination`. Error{BadInput} iff an s3:// URL does not parse or its settings
    // cannot be resolved; nothing is read yet.
    static Result<MirrorRoot> open(std::string_view destination, MirrorRootOptions options);

    MirrorRoot(MirrorRoot&&) noexcept;
    MirrorRoot& operator=(MirrorRoot&&) noexcept;
    ~MirrorRoot();

    // The root for messages: the directory as given, or "s3://BUCKET/PREFIX/".
    const std::string& describe() const { return shown_; }

    // True iff the root is a prefix in a bucket: what cannot be done there (a local reference,
    // --safe-write-path's roots beside it) is refused by the caller with this.
    bool in_bucket() const { return client_ != nullptr; }

    // True iff the root is there to look in: a directory (not a symlink to a file), or a bucket
    // prefix (always: an empty one holds nothing).
    bool exists() const;

    // The repositories and trees below the root (MirrorContents), every directory of the root
    // with a valid repo id as name looked at (a symlink never followed). An absent root holds
    // nothing. The store's error naming what could not be read.
    Result<MirrorContents> discover();

    // The object store of the root (open_object_store's), for features over its files.
    ObjectStore& objects() { return *objects_; }

    // The store of the repository (or tree) <root>/<id> ("" = the root itself: --norepopath).
    std::unique_ptr<MirrorStore> repository(std::string_view id);

    // As repository(id), a local mirror's state (and lock) in `state_dir` ("" = the default)
    // rather than the root's: the caller's own (a snapshot's --state-dir).
    std::unique_ptr<MirrorStore> repository(std::string_view id,
                                            const std::filesystem::path& state_dir);

    // <root>/<id> for messages and reports: "/srv/mirror/fedora", "s3://bucket/prefix/fedora/".
    std::filesystem::path repository_path(std::string_view id) const;

    // Where a sync of the local repository <root>/<id> places packages (its directory); nullopt
    // in a bucket (only keys matter there).
    std::optional<std::filesystem::path> plan_root(std::string_view id) const;

  private:
    MirrorRoot() = default;
    s3::S3Location location_of(std::string_view id) const;  // a bucket's <root>/<id>/
    std::filesystem::path directory_of(std::string_view id) const;

    std::string shown_;
    std::filesystem::path dir_;  // a local root
    std::optional<s3::S3Location> where_;
    std::unique_ptr<s3::S3Client> client_;  // a bucket's
    std::unique_ptr<ObjectStore> objects_;
    MirrorRootOptions options_;
};

}  // namespace rpmirror::store
