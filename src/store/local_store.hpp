// The MirrorStore of a mirror in a local (or NFS/FUSE) directory tree, over src/fs/.
#pragma once

#include <filesystem>

#include "store/mirror_store.hpp"

namespace rpmirror::store {

// The mirror whose root directory is `root` (it need not exist yet). Packages are found by
// fs/walk.hpp's walk (no symlink followed) and removed beneath the root (fs/beneath.hpp), so
// nothing outside it is ever touched. Thread-compatible: one thread at a time.
class LocalStore final : public MirrorStore {
  public:
    explicit LocalStore(std::filesystem::path root) : root_(std::move(root)) {}

    std::string describe(std::string_view key) const override;
    Result<Listing> list_packages() override;
    Result<std::optional<StoredFile>> stat(std::string_view key) override;
    Result<std::vector<std::string>> remove_packages(std::span<const std::string> keys) override;

    // The version stat() gives a file with these times and inode.
    static std::string version_of(std::int64_t mtime_ns, std::uint64_t inode,
                                  std::int64_t ctime_ns);

  private:
    std::filesystem::path root_;
};

}  // namespace rpmirror::store
