// The MirrorStore of a mirror in an S3 bucket (s3://BUCKET/PREFIX/REPO/), over src/s3/.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "rpmirror/s3/s3.hpp"
#include "s3/client.hpp"
#include "s3/config.hpp"
#include "s3/mirror_state.hpp"
#include "store/mirror_store.hpp"

namespace rpmirror::store {

// The mirror at `repo` (its prefix ends in '/'), through `client` (which must outlive it).
// Answers from one listing of the prefix: `listing`, when the caller already made one this run
// (no request then), otherwise one it makes on first use (one LIST per 1000 objects). A file's
// version is its ETag. What the last sync recorded is the state object (.rpmirror/state.json,
// s3/mirror_state.hpp), which is also the checksum cache: an object whose listed size and ETag
// are those the state recorded is vouched for without a GET. The lock is the repository's lease
// (s3/lease.hpp), renewed from its own thread. Not thread-safe.
// What a sync's S3Store works on: the sync's live listing and state (store::SyncStore's in a
// bucket, which its uploads update too), and how it writes.
struct S3SyncView {
    std::map<std::string, s3::ListedObject>* listing = nullptr;
    s3::MirrorState* state = nullptr;
    std::set<std::string>* stored_now = nullptr;  // keys this run stored (with `acl`)
    std::string acl;                              // --s3-acl ("" = the bucket's default)
    std::uint64_t part_size = 0;
    std::function<Result<void>()> confirm_lease;  // Error{Busy} iff the sync's lease was lost
    std::string state_key{s3::kStateKey};         // where record_sync stores `state`
};

class S3Store final : public MirrorStore {
  public:
    S3Store(s3::S3Client& client, s3::S3Location repo,
            const std::map<std::string, s3::ListedObject>* listing = nullptr);
    // A sync's store: answers from `sync`'s listing and state, and publishes (write_document,
    // ready_packages, publish_metadata, record_sync) by updating them.
    S3Store(s3::S3Client& client, s3::S3Location repo, S3SyncView sync);

    // Objects larger than `threshold` are read for check_files as ranged GETs of `range_size`
    // bytes, `threads` at once, pinned to the listed ETag and hashed in order (memory: threads *
    // range_size); smaller ones whole, `threads` objects at once.
    void set_ranged_reads(std::uint64_t threshold, std::uint64_t range_size) override {
        ranged_threshold_ = threshold;
        range_size_ = range_size;
    }

    RecordPlace record_of(std::string_view below, std::string_view name) override;
    std::string describe(std::string_view key) const override;
    Result<Listing> list_packages() override;
    Result<std::optional<StoredFile>> stat(std::string_view key) override;
    // One DeleteObjects request per 1000 keys; a key the listing does not show is not sent.
    Result<std::vector<std::string>> remove_packages(std::span<const std::string> keys) override;
    Result<std::string> read(std::string_view key) override;
    Result<std::filesystem::path> local_copy(std::string_view key,
                                             const std::filesystem::path& scratch) override;
    Result<bool> holds_below(std::string_view key) override;
    std::vector<CheckedFile> check_files(std::span<const ExpectedFile> files,
                                         const CheckOptions& options) override;
    Result<std::unique_ptr<MirrorStore>> beside(const std::filesystem::path& root) override;
    Result<RecordedSync> recorded() override;
    std::string record_place() const override;
    Result<void> forget(const std::set<std::string>& keys) override;
    Result<std::vector<std::string>> remove_files(std::span<const std::string> keys) override;
    Result<std::unique_ptr<RepoLock>> lock(std::optional<std::chrono::seconds> wait,
                                           std::stop_token stop) override;
    Result<std::unique_ptr<RepoLock>> lock_present(
        std::optional<std::chrono::seconds> wait) override;
    Result<void> write_document(std::string_view key, std::string_view content) override;
    Result<void> record_placed(std::span<const PlacedFile> placed,
                               std::span<const std::string> condemned, bool checked) override;
    Result<void> ready_packages() override;
    Result<void> publish_metadata(const MetadataRelease& release) override;
    Result<void> record_sync(const SyncRecord& record, std::vector<std::string>& warnings) override;
    std::uint64_t requests() const override;
    // The client it sends its requests with, and the mirror's prefix.
    s3::S3Client& client() const { return client_; }
    const s3::S3Location& location() const { return repo_; }

    void refresh() override {
        own_.reset();
        state_.reset();
    }

  private:
    Result<const std::map<std::string, s3::ListedObject>*> listing();
    // The sync's view, or Error{Unsupported} for a store opened to audit.
    Result<S3SyncView*> sync_view(std::string_view operation);
    // PUTs `body` at `key` with the sync's ACL and records it in the sync's state.
    Result<void> put_document(S3SyncView& sync, std::string_view key, std::string_view body,
                              std::string content_type);
    // The state object (the sync's own with a sync view); null iff there is none.
    Result<const s3::MirrorState*> state();
    // The digest of `file`, read whole, pinned to the listed `etag` (If-Match).
    Result<std::string> hash_whole(s3::S3Client& client, const ExpectedFile& file,
                                   std::string_view etag, std::uint64_t& size) const;
    Result<std::string> hash_ranged(const ExpectedFile& file, const s3::ListedObject& listed,
                                    unsigned threads);

    s3::S3Client& client_;
    s3::S3Location repo_;
    const std::map<std::string, s3::ListedObject>* given_;
    std::optional<S3SyncView> sync_;
    std::optional<std::map<std::string, s3::ListedObject>> own_;
    std::optional<std::optional<s3::MirrorState>> state_;  // loaded on first use
    std::uint64_t ranged_threshold_ = std::uint64_t{64} << 20;
    std::uint64_t range_size_ = std::uint64_t{16} << 20;
    std::uint64_t worker_requests_ = 0;  // of the clients of parallel reads
};

}  // namespace rpmirror::store
