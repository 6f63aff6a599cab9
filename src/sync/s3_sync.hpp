// The s3:// destination of a sync: what differs from a local mirror once repomd.xml is fetched
// and trusted and the packages are selected (RepoSync, sync/repo_sync.hpp, keeps the shared
// stages).
//
// A repository lives at `s3://BUCKET/PREFIX/<repoid>/`; its keys are the relative paths a local
// mirror would have. The state object (s3/mirror_state.hpp) and one listing decide what is
// already there: a package is kept iff the state has its key with the upstream checksum and the
// listing shows the object the state describes (same size and ETag). Packages pass through the
// bucket's staging area (store::ObjectStore::stage: a bounded spool, in memory by default,
// uploaded by a pool from a mapping of the file, unlinked), and are recorded in the state by
// store().record_placed. What the sync then does once for every store (the no-op, the
// metadata published, the sync recorded) goes through store(), an S3Store over this
// destination's state and listing (store/mirror_store.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <stop_token>
#include <string>
#include <vector>

#include "rpmirror/s3/s3.hpp"
#include "rpmirror/store/repo_lock.hpp"
#include "rpmirror/sync/sync.hpp"
#include "rpmirror/util/error.hpp"
#include "s3/client.hpp"
#include "s3/mirror_state.hpp"
#include "store/object_store.hpp"
#include "store/s3_store.hpp"

namespace rpmirror {

// Returns true iff `options` name an s3:// destination (-p s3://...).
bool is_s3_destination(const SyncOptions& options);

// Returns the repository's location: `-p`'s location, plus `repo_id` unless --norepopath.
// Returns Error{BadInput} naming both iff --metadata-path is set and is not that same s3://
// location (metadata goes with the packages in a bucket), or naming -p iff it does not parse;
// Error{Unsupported} naming -p, the option and the reason for what a bucket cannot do
// (--remote-time, --safe-write-path, --dedupe-dir): the one place they are refused.
Result<s3::S3Location> s3_repo_location(const SyncOptions& options, std::string_view repo_id);

// One selected package as the s3 destination sees it.
struct S3Package {
    std::string key;  // relative to the repository prefix, e.g. "Packages/f/foo.rpm"
    ChecksumType checksum_type = ChecksumType::Sha256;
    std::string digest;  // lowercase hex
    std::uint64_t size = 0;
    // The store already holds it as the state describes: it passes through the spool only to be
    // judged (--gpgcheck over objects no check vouches for) and is never uploaded again.
    bool stored = false;
};

// The s3:// destination of one repository for one sync. Not thread-safe (it runs its upload
// pool itself).
class S3Destination {
  public:
    // Resolves the store's configuration (SyncOptions::s3 over the environment and ~/.aws).
    // `layout_path` (--upstream-layout): the repository's directory beneath the layout root
    // (s3_repo_location's), e.g. "al2023/core/guids/G/x86_64"; its packages may then lie
    // anywhere beneath that root, by keys climbing out of the repository ("../../blobstore/…").
    // Returns Error{BadInput} for a bad location or configuration (--s3-spool-size below
    // --s3-part-size).
    static Result<std::unique_ptr<S3Destination>> open(
        const SyncOptions& options, std::string_view repo_id,
        const std::filesystem::path& layout_path = {});
    ~S3Destination();
    S3Destination(const S3Destination&) = delete;
    S3Destination& operator=(const S3Destination&) = delete;

    // Takes the lease of this destination's prefix (`.rpmirror/lock`: store::S3Store::lock, the
    // one way a bucket's repository is locked), waiting up to `wait` for another worker's.
    Result<std::unique_ptr<RepoLock>> lock(std::optional<std::chrono::seconds> wait,
                                           std::stop_token stop);
    // The locks the sync holds (the root's of lock_repository, the repository's own when it lies
    // elsewhere): each must outlive the destination's last write.
    void hold(std::vector<RepoLock*> locks) { locks_ = std::move(locks); }
    // Confirms every held lock (renewing a lease that is due). Returns Error{Busy} iff one was
    // lost: called before every write only the holder may make (the state, the metadata).
    Result<void> confirm_lock();

    // Before load(): keeps this destination's state in `key` (s3::kTreeStateKey) instead of
    // the repository's state object.
    void use_state(std::string_view key) { state_key_ = key; }

    // What the state records (load()'s, updated by this run).
    const s3::MirrorState& state() const { return state_; }

    // True iff the state records `key` with the sha256 `digest` and the listing shows the object
    // it recorded. Needs load().
    bool holds(const std::string& key, std::string_view sha256) const;

    // Reads the state object and lists the repository (1 GET + one LIST per 1000 objects).
    // Returns the store's error (naming s3://BUCKET/KEY and its code) for a missing bucket or
    // refused credentials.
    Result<void> load();

    // The mirror as the sync's store, answering from and updating this destination's state and
    // listing. Needs load().
    store::MirrorStore& store() { return *store_; }

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

    // --upstream-layout: records the blobs this run stored beneath the layout root (outside the
    // repository) in the layout's catalogue object (`.rpmirror/upstream-layout-catalogue.json`
    // of the root: only what rpmirror stored is ever deleted). With `collect` (a published sync
    // with --delete), then removes every catalogued blob that no repository beneath the root
    // lists any more (each one's repomd.xml and primary read from the bucket and verified) and
    // whose object is still the one stored. Any doubt (a repository that cannot be read) removes
    // nothing and is a line in `warnings`; so is a blob that changed since. Returns the keys
    // removed (relative to the repository).
    Result<std::vector<std::string>> collect_layout_blobs(bool collect,
                                                          std::vector<std::string>& warnings);

    // --upstream-layout: records that rpmirror synced this release now (`.rpmirror/release` of
    // its prefix: the time, which --keep-releases ranks by). One PUT.
    Result<void> mark_release();

    // The s3:// URL of `key` (relative to the repository).
    std::string describe(std::string_view key) const {
        return s3::object_url(location_.bucket, location_.key(key));
    }

    // --dedupe: copies inside the store the packages of `missing` (indices into `packages`) that
    // a sibling repository of the bucket holds (dedupe/s3_dedupe.hpp), and records them as this
    // run's. Returns the items still missing; counts the copies in `report` (linked,
    // linked_bytes, link_fallbacks) and says there why a search ended early (a warning).
    std::vector<std::size_t> copy_from_siblings(std::span<const S3Package> packages,
                                                std::vector<std::size_t> missing,
                                                RepoSyncReport& report);

    // True iff every package of the state was checked against `key_ids` (check_signatures'):
    // nothing stored needs judging again. Needs load().
    bool signatures_checked_with(const std::string& key_ids) const;

    // The bucket's staging area (store::ObjectStore::stage) rooted where the repository's
    // packages may lie (the layout root under --upstream-layout, the repository otherwise): a
    // spool in /dev/shm unless --s3-spool-dir, of --s3-spool-size, uploading with --s3-parallel
    // workers, --s3-part-size and --s3-acl; stopped by `stop`. Its keys are layout_path()/KEY.
    // Error{Io} naming the spool iff it cannot be created. Destroy it before this destination.
    Result<std::unique_ptr<store::Staging>> stage(std::stop_token stop);
    // Where the repository lies beneath stage()'s root (open's `layout_path`; empty: at it).
    const std::filesystem::path& layout_path() const { return layout_path_; }

    // Requests sent to the store so far, all clients.
    std::uint64_t requests() const;

  private:
    S3Destination(const SyncOptions& options, s3::S3Config config, s3::S3Location location,
                  const std::filesystem::path& layout_path);
    // --upstream-layout: reads the state of every other repository beneath the layout root
    // (one GET each) into layout_records_, on the first package missing() does not find in
    // this repository's own state (never on a no-op). Best effort: one that cannot be read is
    // skipped.
    void load_layout_records();
    // missing()'s judgement of `items`, unrecorded blobs the listing holds: hashed, then recorded,
    // added to `missing` (gone since the listing) or to `conflicts`.
    // --keep-releases, inside collect_layout_blobs with the root's fresh listing: this
    // repository's other releases beneath the root that carry rpmirror's record (mark_release),
    // all but the keep_releases - 1 marked most recently, are removed under their own lease (the
    // mirror.list objects naming them, then their repomd.xml, then the rest), and taken out of
    // the listing; the keys removed go to `removed`. One without a record, or whose lease is
    // held, is left with a line in `warnings`.
    Result<void> prune_releases(std::vector<std::string>& removed,
                                std::vector<std::string>& warnings);
    void judge_unrecorded(std::span<const S3Package> packages,
                          const std::vector<std::size_t>& items, std::vector<std::size_t>& missing,
                          std::vector<Conflict>& conflicts);
    const SyncOptions& options_;
    s3::S3Config config_;
    s3::S3Location location_;
    std::string root_prefix_;  // location_'s prefix, or the layout root's (open's layout_path)
    s3::S3Client client_;
    std::filesystem::path layout_path_;
    std::unique_ptr<store::ObjectStore> objects_;  // at root_prefix_, stage()'s
    std::string state_key_{s3::kStateKey};
    s3::MirrorState state_;
    std::map<std::string, s3::ListedObject> listing_;
    // --upstream-layout: what the other repositories of the layout recorded, by key relative to
    // this one ("../../blobstore/…").
    struct LayoutRecord {
        s3::StoredObject object;
        bool shareable = false;  // recorded by a release whose packages were checked as ours
    };
    std::map<std::string, LayoutRecord> layout_records_;
    bool layout_records_loaded_ = false;
    bool layout_unreadable_ = false;         // a release's state could not be read
    std::set<std::string> uploaded_now_;     // keys this run uploaded (with --s3-acl's ACL)
    std::unique_ptr<store::S3Store> store_;  // over state_ and listing_, once loaded
    std::vector<RepoLock*> locks_;           // hold()'s
};

}  // namespace rpmirror
