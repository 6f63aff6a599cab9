// The s3:// destination of a sync: what differs from a local mirror once repomd.xml is fetched
// and trusted and the packages are selected (RepoSync, sync/repo_sync.hpp, keeps the shared
// stages).
//
// A repository lives at `s3://BUCKET/PREFIX/<repoid>/`; its keys are the relative paths a local
// mirror would have. What it already holds is its state object and listing's say
// (store/s3_holdings.hpp). Packages pass through the bucket's staging area
// (store::ObjectStore::stage: a bounded spool, in memory by default, uploaded by a pool from a
// mapping of the file, unlinked), and are recorded in the state by store().record_placed. What
// the sync then does once for every store (the no-op, the metadata published, the sync recorded)
// goes through store(), an S3Store over that state and listing (store/mirror_store.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
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
#include "store/s3_holdings.hpp"
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

using store::S3Package;

// The s3:// destination of one repository for one sync: its location, client and leases, its
// staging area, what it holds (store::S3Holdings), --dedupe and --upstream-layout. Not
// thread-safe.
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

    // Reads the state object and lists the repository (S3Holdings::load).
    Result<void> load();

    // What the bucket holds for this sync, and the mirror as the sync's store over it. Need
    // load().
    store::S3Holdings& holdings() { return *holdings_; }
    const store::S3Holdings& holdings() const { return *holdings_; }
    store::MirrorStore& store() { return holdings_->store(); }

    // The s3:// URL of `key` (relative to the repository).
    std::string describe(std::string_view key) const {
        return s3::object_url(location_.bucket, location_.key(key));
    }

    // --dedupe: copies inside the store the packages of `missing` (indices into `packages`) that
    // a sibling repository of the bucket holds (dedupe/siblings.hpp), and records them as this
    // run's. Returns the items still missing; counts the copies in `report` (linked,
    // linked_bytes, link_fallbacks) and says there why a search ended early (a warning).
    std::vector<std::size_t> copy_from_siblings(std::span<const S3Package> packages,
                                                std::vector<std::size_t> missing,
                                                RepoSyncReport& report);

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
    const SyncOptions& options_;
    s3::S3Config config_;
    s3::S3Location location_;
    std::string root_prefix_;  // location_'s prefix, or the layout root's (open's layout_path)
    s3::S3Client client_;
    std::filesystem::path layout_path_;
    std::unique_ptr<store::ObjectStore> objects_;  // at root_prefix_, stage()'s
    std::string state_key_{s3::kStateKey};
    std::unique_ptr<store::S3Holdings> holdings_;  // once loaded
    std::vector<RepoLock*> locks_;                 // hold()'s
};

}  // namespace rpmirror
