// The place one repository's mirror lives, behind one interface: a directory tree on a local
// (or NFS/FUSE) filesystem, or a prefix in an S3 bucket. Modelled on leveldb's Env: the stages
// above ask a MirrorStore what the mirror holds and to change it, and only the implementations
// (local_store.cpp over src/fs/, s3_store.cpp over src/s3/) touch the files or build requests.
//
// Keys are the relative paths a local mirror has ("Packages/a/foo.rpm", "repodata/repomd.xml"),
// '/'-separated, lexically normal. What the interface covers so far (doc/design.md, "The
// destination seam"): listing the mirror's packages, the size and version of any file, and
// removing packages; --delete, verify --extra and the no-op's "nothing changed" check are
// written once, below, over it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/error.hpp"

namespace rpmirror::store {

// One file of a mirror as its store describes it without reading it.
struct StoredFile {
    std::uint64_t size = 0;
    // Changes whenever the content may have changed: "MTIME_NS INODE CTIME_NS" of a local file
    // (a `cp -p` or a rewrite with its mtime put back still changes it), the ETag of an object.
    std::string version;

    bool operator==(const StoredFile&) const = default;
};

// Files by key, in key order.
using Listing = std::map<std::string, StoredFile>;

// True iff `key` is a package of the mirror: a `*.rpm` outside its metadata (the top-level
// `repodata/` and the staging directories beside it, fs/walk.hpp) and outside rpmirror's own
// `.rpmirror/` (the state and lease of a mirror in a bucket). What --delete may remove and verify
// --extra reports; the one definition every store uses.
bool is_package_key(std::string_view key);

class MirrorStore {
  public:
    virtual ~MirrorStore() = default;

    // The file's name for messages: "/srv/mirror/fedora/Packages/a.rpm",
    // "s3://bucket/prefix/fedora/Packages/a.rpm".
    virtual std::string describe(std::string_view key) const = 0;

    // Every package of the mirror (is_package_key) that is a regular file (an object), never
    // reached through a symlink. An absent mirror holds nothing. Returns Error{Unsafe} iff the
    // mirror's root is itself a symlink, or the store's error (Error{Io}, a request's) naming
    // what could not be read.
    virtual Result<Listing> list_packages() = 0;

    // The file at `key` (any key, metadata too), nullopt iff there is none or it is not a
    // regular file. Returns the store's error iff it cannot tell.
    virtual Result<std::optional<StoredFile>> stat(std::string_view key) = 0;

    // Removes the packages `keys` (as list_packages names them; anything else is refused with
    // Error{BadInput}). A key already gone, or that is no longer a regular file, is left alone.
    // Returns the keys removed, in the order given; on an error naming the file, those removed
    // before it stay removed.
    virtual Result<std::vector<std::string>> remove_packages(std::span<const std::string> keys) = 0;

  protected:
    MirrorStore() = default;
    MirrorStore(const MirrorStore&) = default;
    MirrorStore& operator=(const MirrorStore&) = default;
};

// --- Written once, for every store --------------------------------------------------------

// The packages of `store` that `keep` does not name (verify --extra; what --delete removes).
Result<Listing> unlisted_packages(MirrorStore& store, const std::set<std::string>& keep);

// --delete: removes the packages of `store` that `keep` does not name. Returns their keys,
// sorted; errors as MirrorStore::remove_packages.
Result<std::vector<std::string>> delete_unlisted(MirrorStore& store,
                                                 const std::set<std::string>& keep);

// True iff every file of `recorded` (what an earlier run wrote) is still in `store` with the same
// size and version (the no-op's check: sizes and versions, nothing read). A store that cannot
// tell counts as changed.
bool files_unchanged(MirrorStore& store, const Listing& recorded);

}  // namespace rpmirror::store
