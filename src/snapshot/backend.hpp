// Where snapshots physically live, behind one interface: the snapshot rules (names, the lock,
// "exists already", "is published as", keep-N) are written once in snapshot.cpp over it, and each
// backend only does what its store can do.
//   local_snapshots.cpp  a directory tree: packages hard-linked (or copied), a published name a
//                        symlink switched by one rename
//   s3_snapshots.cpp     a bucket: objects copied inside the store (CopyObject), a snapshot
//                        complete once its manifest exists, a published name a copy of the
//                        snapshot published in the sync's order (records, then repomd.xml)
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/snapshot/snapshot.hpp"
#include "rpmirror/util/error.hpp"

namespace rpmirror::snapshot {

class Backend {
  public:
    virtual ~Backend() = default;
    Backend(const Backend&) = delete;
    Backend& operator=(const Backend&) = delete;

    // Takes the repository's lock (the one `sync` takes: the run lock of a local mirror, the
    // lease of an s3:// one) until the backend is destroyed. Error{Busy} iff a sync holds it.
    virtual Result<void> lock(const SnapshotLock& lock) = 0;

    // True iff something (a snapshot, or anything else) holds the name `name` already.
    virtual Result<bool> exists(std::string_view name) = 0;

    // Builds snapshot `name` (absent, valid, the lock held) of the live mirror, which it checks
    // first: complete (the state of the last sync names the live repomd.xml) and verified.
    // On any error nothing is left under `name`.
    virtual Result<SnapshotInfo> build(const std::string& name,
                                       const SnapshotCreateOptions& options) = 0;

    // Snapshot `name` as list() describes it (published_as empty), Error{NotFound} "no snapshot
    // NAME of repository ID" iff there is none.
    virtual Result<SnapshotInfo> describe(std::string_view name) = 0;

    // The name of every snapshot, in no particular order (temporaries and incomplete ones left
    // out).
    virtual Result<std::vector<std::string>> names() = 0;

    // Snapshot name -> each published name pointing at it.
    virtual Result<std::multimap<std::string, std::string>> published() = 0;

    // Points `published_name` at the existing snapshot `name` (the lock held).
    virtual Result<void> point(std::string_view published_name, std::string_view name) = 0;

    // Removes the unpublished snapshot `info` (the lock held): gone for readers at once.
    virtual Result<void> erase(const SnapshotInfo& info) = 0;

    // The small file `key` ("repodata/repomd.xml", ".treeinfo") of snapshot `name`, or of the
    // live mirror when `name` is nullopt; nullopt iff there is none. For the identity
    // snapshot.cpp compares (a snapshot is taken only when the mirror changed).
    virtual Result<std::optional<std::string>> read_small(std::optional<std::string_view> name,
                                                          std::string_view key) = 0;

  protected:
    Backend() = default;
};

// The backend of `root`: a local directory tree, or the bucket of `root.s3`.
Result<std::unique_ptr<Backend>> open_backend(const SnapshotRoot& root);

std::unique_ptr<Backend> local_backend(const SnapshotRoot& root);
Result<std::unique_ptr<Backend>> s3_backend(const SnapshotRoot& root);

// "no snapshot NAME of repository ID", the error every backend gives for a missing snapshot.
Error no_snapshot(const SnapshotRoot& root, std::string_view name, std::string subject);

}  // namespace rpmirror::snapshot
