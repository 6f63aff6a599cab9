// Where snapshots physically live, written once over store::ObjectStore (snapshots.cpp): a
// snapshot is a tree (ObjectStore::build_tree) of the live mirror's files copied into it, a
// published name an alias (ObjectStore::point_alias) of one. The snapshot rules (names, the
// lock, "exists already", "is published as", keep-N) are in snapshot.cpp over Backend.
//
// The repository's lock is the store's (MirrorStore::lock_present), and the live mirror's check
// (LiveMirror) the audit's, both written once for every kind of mirror.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "metadata/treeinfo.hpp"
#include "rpmirror/snapshot/snapshot.hpp"
#include "rpmirror/util/error.hpp"
#include "store/mirror_root.hpp"
#include "store/object_store.hpp"
#include "store/repo_lock.hpp"

namespace rpmirror::snapshot {

// One file of the live mirror a snapshot copies.
struct LiveFile {
    std::string key;           // relative to the mirror's root
    bool is_metadata = false;  // copied (never linked): the snapshot's own copy
    store::Pin pin;  // what the copy must find (Error{Corrupt} otherwise): what was checked
};

// The live mirror of a snapshot's repository (live_mirror.cpp), written once for every store.
class LiveMirror {
  public:
    // The live mirror at the root of `live` (which must outlive it), its syncs' records in
    // `state_dir` ("" = the default) where its kind of store keeps them there.
    LiveMirror(const SnapshotRoot& root, store::MirrorRoot& live, std::filesystem::path state_dir);
    ~LiveMirror();
    LiveMirror(const LiveMirror&) = delete;
    LiveMirror& operator=(const LiveMirror&) = delete;

    // Checks the mirror complete (what its last sync recorded names the live index) and verified
    // (the audit, with the store's cache: every record and selected package intact; a tree's
    // images against .treeinfo), and returns the files a snapshot copies: every record, package,
    // image, index, signature, comps.xml and .treeinfo, each pinned to the version checked.
    // Error{BadInput} naming the repository iff it is not complete and verified.
    Result<std::vector<LiveFile>> check(const SnapshotCreateOptions& options);

    // The canned ACL the copies are given ("" = none): the mirror's --s3-acl. After check().
    const std::string& acl() const { return acl_; }

    // After the snapshot appeared: the live mirror's records follow the links it made
    // (MirrorStore::follow_links; best effort).
    void committed();

  private:
    // One repository of the mirror (the root, or a tree's repository at `key`) and the packages
    // and images a snapshot links from it, as they were checked.
    struct Part {
        std::string key;
        std::unique_ptr<store::MirrorStore> store;
        store::Listing linked;
    };

    Result<void> check_repository(Part& part, const SnapshotCreateOptions& options,
                                  std::vector<LiveFile>& files);
    // The small file `key` of `part` pinned to the version it had before it was read (its
    // content in `content` when given); Error{NotFound} iff it is not a regular file there.
    Result<store::Pin> pin_document(Part& part, std::string_view key, std::string* content);
    void add(Part& part, const std::string& key, bool is_metadata, store::Pin pin,
             const SnapshotCreateOptions& options, std::vector<LiveFile>& files);

    const SnapshotRoot& root_;
    store::MirrorRoot& live_;
    std::filesystem::path state_dir_;
    std::vector<Part> parts_;
    std::string acl_;
};

// The installation tree at the root of a live mirror (`sync --treeinfo`): its .treeinfo as read,
// and parsed.
struct LiveTree {
    std::string text;
    TreeInfo tree;
};

// Reads the live mirror's .treeinfo: nullopt iff it has none (a repository mirrored alone); the
// store's error iff it cannot be read, the parser's (naming it) iff it is not one. Written once
// for every kind of mirror: LiveMirror::check starts here.
Result<std::optional<LiveTree>> read_live_tree(store::MirrorStore& mirror);

class Backend {
  public:
    // The snapshots of `root`: the live mirror is the root of `live`, the snapshots and published
    // names are in `base` (snapshots/<repo id>/, published/), an object store of the same kind.
    Backend(const SnapshotRoot& root, std::unique_ptr<store::MirrorRoot> live,
            std::unique_ptr<store::ObjectStore> base);

    // Opens the live mirror (MirrorRoot::repository with the lock's state directory, its kind of
    // sync state's LiveMirror) and takes the repository's lock (the one `sync` takes:
    // MirrorStore::lock_present) until the backend is destroyed. Error{Busy} iff a sync holds it.
    // Before build() and point().
    Result<void> lock(const SnapshotLock& lock);

    // True iff a snapshot holds the name `name` already.
    Result<bool> exists(std::string_view name);

    // Builds snapshot `name` (absent, valid, the lock held) of the live mirror, which it checks
    // first (LiveMirror::check). On any error nothing is left under `name`.
    Result<SnapshotInfo> build(const std::string& name, const SnapshotCreateOptions& options);

    // Snapshot `name` as list() describes it (published_as empty), Error{NotFound} "no snapshot
    // NAME of repository ID" iff there is none.
    Result<SnapshotInfo> describe(std::string_view name);

    // Where snapshot `name` is (ObjectStore::describe), as describe() but without counting.
    Result<std::filesystem::path> location(std::string_view name);

    // The name of every snapshot, sorted (temporaries and incomplete ones left out).
    Result<std::vector<std::string>> names();

    // Every key (relative to a snapshot's root, as in the live mirror) some snapshot holds.
    Result<std::unordered_set<std::string>> held_keys();

    // Snapshot name -> each published name pointing at it.
    Result<std::multimap<std::string, std::string>> published();

    // Points `published_name` at the existing snapshot `name` (the lock held).
    Result<void> point(std::string_view published_name, std::string_view name);

    // Removes the unpublished snapshot `info` (the lock held): gone for readers at once.
    Result<void> erase(const SnapshotInfo& info);

    // The small file `key` ("repodata/repomd.xml", ".treeinfo") of snapshot `name`, or of the
    // live mirror when `name` is nullopt; nullopt iff there is none.
    Result<std::optional<std::string>> read_small(std::optional<std::string_view> name,
                                                  std::string_view key);

  private:
    // The key of the committed snapshot `name` and when it was completed (ns); Error{NotFound}
    // "no snapshot NAME of repository ID" iff there is none (describe and location share it).
    Result<std::pair<std::string, std::int64_t>> existing(std::string_view name);

    std::string snapshot_key(std::string_view name) const;

    const SnapshotRoot& root_;
    std::unique_ptr<store::MirrorRoot> live_root_;  // the live mirror
    store::ObjectStore& source_;                    // its files
    std::unique_ptr<store::ObjectStore> store_;     // the snapshot base
    std::unique_ptr<store::MirrorStore> mirror_;    // of the live mirror, after lock()
    std::unique_ptr<RepoLock> lock_;                // of the live mirror, after lock()
    std::unique_ptr<LiveMirror> live_;              // after lock()
    std::string snapshots_key_;
    std::string published_key_;
};

// The backend of `root`: the store of its live mirror and the store of its snapshot base.
Result<std::unique_ptr<Backend>> open_backend(const SnapshotRoot& root);

// "no snapshot NAME of repository ID", the error for a missing snapshot.
Error no_snapshot(const SnapshotRoot& root, std::string_view name, std::string subject);

}  // namespace rpmirror::snapshot
