// What a bucket holds for one repository's sync, as its record says: the state object
// (s3/mirror_state.hpp) and one listing of the repository (under --upstream-layout, of the layout
// root beneath which its packages may lie) decide what is already there: a package is held iff
// the state has its key with the upstream checksum and the listing shows the object the state
// describes (same size and ETag). The sync's MirrorStore (store(): an S3Store over this state and
// listing) updates both as it stores (MirrorStore::record_placed, record_sync).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/checksum/checksum.hpp"
#include "rpmirror/s3/s3.hpp"
#include "rpmirror/util/error.hpp"
#include "s3/client.hpp"
#include "s3/config.hpp"
#include "s3/mirror_state.hpp"
#include "store/s3_store.hpp"
#include "store/sync_store.hpp"

namespace rpmirror::store {

// One file a sync wants in the bucket (a package, a tree's file): store/sync_store.hpp's.
using S3Package = WantedFile;

// A repository's holdings in a bucket, for one sync. Not thread-safe.
class S3Holdings {
  public:
    struct Settings {
        std::string state_key{s3::kStateKey};  // the state object (s3::kTreeStateKey: a tree's)
        bool use_checksum_cache = true;        // false (--no-cache): nothing is held by its record
        std::string acl;                       // --s3-acl, for what store() writes
        std::uint64_t part_size = 0;           // --s3-part-size
        std::function<Result<void>()> confirm_lease;  // Error{Busy} iff the sync's lease is lost
    };

    // The repository at `location`, whose packages may lie anywhere beneath `root_prefix` (its
    // own prefix, or the layout root's above it), through `client` (which must outlive it).
    S3Holdings(s3::S3Client& client, s3::S3Location location, std::string root_prefix,
               Settings settings);

    // Reads the state object and lists the root prefix (1 GET + one LIST per 1000 objects).
    // Returns the store's error (naming s3://BUCKET/KEY and its code) for a missing bucket or
    // refused credentials.
    Result<void> load();

    // What the state records (load()'s, updated by this sync), the listing, and the keys this
    // sync stored (with the ACL of Settings).
    s3::MirrorState& state() { return state_; }
    const s3::MirrorState& state() const { return state_; }
    const std::map<std::string, s3::ListedObject>& listing() const { return listing_; }
    void replace_listing(std::map<std::string, s3::ListedObject> listing) {
        listing_ = std::move(listing);
    }
    const std::set<std::string>& stored_now() const { return stored_now_; }

    // The mirror as the sync's store, over this state and listing. Needs load().
    S3Store& store() { return *store_; }

    // True iff the state records `key` with the sha256 `digest` and the listing shows the object
    // it recorded. Needs load().
    bool holds(const std::string& key, std::string_view sha256) const;

    // Returns the indices of `packages` that are not in the store as the state describes them.
    // Under --upstream-layout, a package another repository beneath the layout root recorded
    // (a shared blob) with the same checksum and signature check, and whose object is still
    // the one recorded, is not missing: it is recorded as this repository's too. One recorded
    // there with another checksum of the same type (or another size), and still as recorded,
    // is never replaced: its index goes to `conflicts` (when given) with what it holds, not to
    // the result. With `conflicts`, a blob beyond the repository that no repository recorded
    // is read and hashed: recorded as this repository's when it holds what the metadata lists,
    // a conflict (never replaced) when it holds anything else, as a file on disk is.
    struct Conflict {
        std::size_t item = 0;
        std::string held;  // "sha256 HEX" or "N bytes"
    };
    std::vector<std::size_t> missing(std::span<const S3Package> packages,
                                     std::vector<Conflict>* conflicts = nullptr);

    // True iff every package of the state was checked against `key_ids` (--gpgcheck's trusted
    // keys): nothing stored needs judging again. Needs load().
    bool signatures_checked_with(const std::string& key_ids) const;

    // Records `object`, copied into the store by this sync (--dedupe), as `key`.
    void record_copied(const std::string& key, s3::StoredObject object);

  private:
    // --upstream-layout: reads the state of every other repository beneath the layout root
    // (one GET each) into layout_records_, on the first package missing() does not find in
    // this repository's own state (never on a no-op). Best effort: one that cannot be read is
    // skipped (layout_unreadable_).
    void load_layout_records();
    // missing()'s judgement of `items`, unrecorded blobs the listing holds: hashed, then recorded,
    // added to `missing` (gone since the listing) or to `conflicts`.
    void judge_unrecorded(std::span<const S3Package> packages,
                          const std::vector<std::size_t>& items, std::vector<std::size_t>& missing,
                          std::vector<Conflict>& conflicts);

    s3::S3Client& client_;
    s3::S3Location location_;
    std::string root_prefix_;
    Settings settings_;
    s3::MirrorState state_;
    std::map<std::string, s3::ListedObject> listing_;
    std::set<std::string> stored_now_;
    // --upstream-layout: what the other repositories of the layout recorded, by key relative to
    // this one ("../../blobstore/…").
    struct LayoutRecord {
        s3::StoredObject object;
        bool shareable = false;  // recorded by a release whose packages were checked as ours
    };
    std::map<std::string, LayoutRecord> layout_records_;
    bool layout_records_loaded_ = false;
    bool layout_unreadable_ = false;  // a release's state could not be read
    std::unique_ptr<S3Store> store_;  // over state_ and listing_, once loaded
};

}  // namespace rpmirror::store
