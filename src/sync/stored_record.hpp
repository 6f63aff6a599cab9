// What rpmirror stored beneath a root outside any repository's own record (an installation
// tree's images under --treeinfo, an upstream layout's shared blobs under --upstream-layout), so
// that a later run keeps what is still as stored and --delete removes only rpmirror's own files.
// Kept where the root's store keeps its records (store::MirrorStore::record_of): apart from the
// files, on disk, a catalogue in the state directory (a sync state at
// sync_state_path(state_dir, root/<name>): sizes and times, no checksums); beside them, in a
// bucket, a state object of the root's prefix (s3/mirror_state.hpp: sizes, ETags and checksums).
// Everything else about the files is asked of the root's ObjectStore.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "checksum/hasher.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "rpmirror/util/error.hpp"
#include "store/mirror_store.hpp"
#include "store/object_store.hpp"
#include "store/repo_lock.hpp"

namespace rpmirror {

// One file as rpmirror stored it.
struct StoredEntry {
    std::uint64_t size = 0;
    std::string version;  // store::ObjectInfo::version just after it was stored
    ChecksumType type = ChecksumType::Sha256;
    std::string digest;  // what it was verified against; "" where the record keeps none (disk)

    // True iff `now` is still the file recorded.
    bool still(const store::ObjectInfo& now) const {
        return now.size == size && !version.empty() && now.version == version;
    }
};

// The names of a root's record: `state_key`'s last segment is its name where the store keeps
// records beside the files (MirrorStore::record_of("", name)); `catalogue` names the sync state
// kept apart from them (MirrorStore::record_of(catalogue, "json"), where it has always been).
struct RecordName {
    std::string catalogue;  // ".treeinfo-images"
    std::string state_key;  // ".rpmirror/treeinfo.json"
};

class StoredRecord {
  public:
    // Reads the record `name` of `root` (a repository's store, as store::MirrorRoot opens it).
    // Missing or unreadable it is empty (nothing is vouched for or removed for it); the bucket's
    // error for a failed request.
    static Result<StoredRecord> load(store::MirrorStore& root, const RecordName& name);

    StoredRecord(StoredRecord&&) noexcept;
    StoredRecord& operator=(StoredRecord&&) noexcept;
    ~StoredRecord();

    // The files recorded, by key relative to the root.
    std::map<std::string, StoredEntry>& files() { return files_; }
    const std::map<std::string, StoredEntry>& files() const { return files_; }

    // The canned ACL the files were stored with, iff the record keeps one (a bucket's).
    const std::optional<std::string>& acl() const { return acl_; }
    // Records `acl` as the files' ACL where the record keeps one.
    void set_acl(std::string acl) {
        if (acl_) {
            acl_ = std::move(acl);
        }
    }
    // For the place that keeps one, when loading.
    void acl_for_place(std::string acl) { acl_ = std::move(acl); }

    // A CacheTrust (rpmirror/checksum/checksum.hpp) believing the cached checksums of the local
    // files recorded while they are as recorded (empty in a bucket: no local files).
    std::shared_ptr<const CacheTrust> trust() const;

    // Writes it back at once (after confirming `lock`, when given). Error{Busy} iff the lock
    // was lost; the store's error.
    Result<void> save(RepoLock* lock) const;

    class Place;  // where it is kept (stored_record.cpp)

  private:
    StoredRecord() = default;

    std::unique_ptr<Place> place_;
    std::map<std::string, StoredEntry> files_;
    std::optional<std::string> acl_;
};

// Removes every file of `record` that `listed` (keys relative to the root) does not name and
// that `store` (the root's) still holds as recorded; one that changed since is left in place
// with a line in `warnings`. Each is forgotten by the record. Returns the keys removed, sorted;
// the store's error (nothing is forgotten then).
Result<std::vector<std::string>> collect_unlisted(store::ObjectStore& store, StoredRecord& record,
                                                  const std::set<std::string>& listed,
                                                  std::vector<std::string>& warnings);

}  // namespace rpmirror
