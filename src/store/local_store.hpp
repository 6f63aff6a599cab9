// The MirrorStore of a mirror in a local (or NFS/FUSE) directory tree, over src/fs/.
#pragma once

#include <filesystem>

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

    std::string describe(std::string_view key) const override;
    Result<Listing> list_packages() override;
    Result<std::optional<StoredFile>> stat(std::string_view key) override;
    Result<std::vector<std::string>> remove_packages(std::span<const std::string> keys) override;
    Result<std::string> read(std::string_view key) override;
    Result<std::filesystem::path> local_copy(std::string_view key,
                                             const std::filesystem::path& scratch) override;
    Result<bool> holds_below(std::string_view key) override;
    std::vector<CheckedFile> check_files(std::span<const ExpectedFile> files,
                                         const CheckOptions& options) override;
    Result<std::unique_ptr<MirrorStore>> beside(const std::filesystem::path& root) override;
    Result<RecordedSync> recorded() override;
    Result<void> forget(const std::set<std::string>& keys) override;
    Result<std::vector<std::string>> remove_files(std::span<const std::string> keys) override;
    Result<std::unique_ptr<StoreLock>> lock(std::optional<std::chrono::seconds> wait,
                                            std::stop_token stop) override;

    // The version stat() gives a file with these times and inode.
    static std::string version_of(std::int64_t mtime_ns, std::uint64_t inode,
                                  std::int64_t ctime_ns);

  private:
    // Removes each of `keys` that is a regular file (or, with `symlinks_too`, a symlink).
    Result<std::vector<std::string>> remove_beneath(std::span<const std::string> keys,
                                                    bool symlinks_too);

    std::filesystem::path root_;
    std::filesystem::path state_dir_;
};

}  // namespace rpmirror::store
