// The MirrorStore of a mirror in a local (or NFS/FUSE) directory tree, over src/fs/.
#pragma once

#include <filesystem>
#include <vector>

#include "checksum/hasher.hpp"
#include "store/mirror_store.hpp"

namespace rpmirror::store {

// The mirror whose root directory is `root` (it need not exist yet). Packages are found by
// fs/walk.hpp's walk (no symlink followed), looked up and removed beneath the root
// (fs/beneath.hpp), so nothing outside it is ever touched. What the last sync recorded is its
// state file, and the lock its run lock, both in `state_dir` ("" = the default state directory).
// Files are hashed by verify_files (the xattr checksum cache). Thread-compatible: one thread at
// a time.
class LocalStore final : public MirrorStore {
  public:
    explicit LocalStore(std::filesystem::path root, std::filesystem::path state_dir = {});

    // A sync's store: its metadata (repodata/..., comps.xml) lives in `metadata_root`
    // (--metadata-path; the root otherwise), and ready_packages() flushes `package_roots` too
    // (--safe-write-path, the upstream layout's root).
    void set_sync_layout(std::filesystem::path metadata_root,
                         std::vector<std::filesystem::path> package_roots);

    // false: ready_packages() and publish_metadata() flush nothing (SyncOptions::dnf_cache).
    void set_durable(bool durable) { durable_ = durable; }

    RecordPlace record_of(std::string_view below, std::string_view name) override;
    std::string describe(std::string_view key) const override;
    Result<Listing> list_packages() override;
    Result<std::optional<StoredFile>> stat(std::string_view key) override;
    Result<std::vector<std::string>> remove_packages(std::span<const std::string> keys) override;
    Result<Listing> list_partials() override;
    Result<std::vector<std::string>> remove_partials(std::span<const std::string> keys) override;
    Result<std::string> read(std::string_view key) override;
    Result<std::filesystem::path> local_copy(std::string_view key,
                                             const std::filesystem::path& scratch) override;
    Result<bool> holds_below(std::string_view key) override;
    std::vector<CheckedFile> check_files(std::span<const ExpectedFile> files,
                                         const CheckOptions& options) override;
    Result<std::unique_ptr<MirrorStore>> beside(const std::filesystem::path& root) override;
    Result<RecordedSync> recorded() override;
    std::string record_place() const override;
    void follow_links(const Listing& linked) override;
    Result<void> forget(const std::set<std::string>& keys) override;
    Result<std::vector<std::string>> remove_files(std::span<const std::string> keys) override;
    Result<std::unique_ptr<RepoLock>> lock(std::optional<std::chrono::seconds> wait,
                                           std::stop_token stop) override;
    Result<std::unique_ptr<RepoLock>> lock_present(
        std::optional<std::chrono::seconds> wait) override;
    Result<void> write_document(std::string_view key, std::string_view content) override;
    Result<void> ready_packages() override;
    Result<void> publish_metadata(const MetadataRelease& release) override;
    Result<void> record_sync(const SyncRecord& record, std::vector<std::string>& warnings) override;
    void tidy() override;

    // The mirror's root directory, and the state directory its sync state and lock are in ("" =
    // the default).
    const std::filesystem::path& root() const { return root_; }
    const std::filesystem::path& state_dir() const { return state_dir_; }

    // The version stat() gives a file with these times and inode.
    static std::string version_of(std::int64_t mtime_ns, std::uint64_t inode,
                                  std::int64_t ctime_ns);

  private:
    // The packages (or, with `partials`, the download's temporary files) beneath the root.
    Result<Listing> list_files(bool partials);

    // Removes each of `keys` that is a regular file (or, with `symlinks_too`, a symlink).
    Result<std::vector<std::string>> remove_beneath(std::span<const std::string> keys,
                                                    bool symlinks_too);

    // Where `key` lives: the metadata root for metadata keys, the root otherwise.
    const std::filesystem::path& root_of(std::string_view key) const;

    std::filesystem::path root_;
    std::filesystem::path state_dir_;
    // What the mirror's sync state vouches for (CacheTrust), read at the first check_files and
    // forgotten whenever the state changes (forget, record_sync).
    std::shared_ptr<const CacheTrust> trust_;
    std::filesystem::path metadata_root_;  // root_ unless set_sync_layout
    std::vector<std::filesystem::path> package_roots_;
    bool durable_ = true;
};

// Returns true iff every file of `state` is a regular file under `repo_dir` with the recorded
// size, mtime, inode and ctime (lstat only; a symlink never matches): files_unchanged over the
// mirror's LocalStore.
bool state_files_unchanged(const std::filesystem::path& repo_dir, const SyncState& state);

}  // namespace rpmirror::store
