// The ObjectStore of a directory tree (store/object_store.hpp), over src/fs/: every lookup,
// creation and removal beneath the root (fs/beneath.hpp), no symlink followed, everything that
// creates, renames or removes through the fault seam. Its files (disk_objects.cpp): a put writes
// a temporary file beside the key and renames it over it; a download is staged in place. Its
// trees and aliases (disk_trees.cpp): a tree is built in a temporary sibling directory
// (".NAME.creating-*", which fs/walk.hpp's walks skip), flushed and renamed into place without
// replacing anything; an alias is a relative symlink switched by one rename. Internal to
// src/store: disk_object_store (store/object_store.hpp) is how others open one.
#pragma once

#include <sys/stat.h>

#include <cerrno>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fs/durable.hpp"
#include "fs/fault.hpp"
#include "store/disk_files.hpp"
#include "store/object_store.hpp"
#include "store/staging.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror::store::disk_objects {

using namespace disk;  // NOLINT: the helpers of disk_files.hpp

class DiskStore;

class DiskTree final : public TreeBuild {
  public:
    DiskTree(DiskStore& store, std::string key, std::string staging, std::string what)
        : store_(store),
          key_(std::move(key)),
          staging_(std::move(staging)),
          what_(std::move(what)) {}
    ~DiskTree() override;

    const std::string& staging() const override { return staging_; }
    Result<void> copy(std::span<const CopyRequest> copies, const CopyOptions& options) override;
    Result<void> copy_from(ObjectStore& source, std::span<const CopyRequest> copies,
                           const CopyOptions& options) override;
    Result<void> put(std::string_view relative, std::string_view bytes) override;
    Result<void> commit(RepoLock* lock) override;

  private:
    DiskStore& store_;
    std::string key_;
    std::string staging_;
    std::string what_;
    bool committed_ = false;
};

class DiskStore final : public ObjectStore {
  public:
    explicit DiskStore(std::filesystem::path root) : root_(std::move(root)) {}

    std::string describe(std::string_view key) const override;

    Result<std::optional<ObjectInfo>> stat(std::string_view key) override;

    Result<ObjectListing> list(std::string_view prefix) override;

    Result<std::vector<std::string>> list_dirs(std::string_view prefix) override;

    // The regular file at `key`, open for reading: Error{Unsafe} iff something else is there (a
    // symlink is not followed), the open's error otherwise (Error{NotFound} iff nothing).
    Result<UniqueFd> open_regular(std::string_view key);

    Result<std::filesystem::path> local_copy(std::string_view key,
                                             const std::filesystem::path& scratch) override;

    Result<std::string> read(std::string_view key) override;

    Result<void> put(std::string_view key, std::string_view bytes) override;

    Result<void> put_file(std::string_view key, const std::filesystem::path& path) override;

    Result<std::unique_ptr<Staging>> stage(const StageOptions& options) override;

    Result<void> copy(std::span<const CopyRequest> copies, const CopyOptions&) override;

    Result<void> remove(std::span<const std::string> keys) override;

    // disk_find.cpp: the trees walked, size-matching files hashed.
    Result<FoundContent> find_content(std::span<const WantedContent> wanted,
                                      const FindOptions& options) override;

    void remove_empty_dirs(std::string_view key) override;

    Result<std::unique_ptr<TreeBuild>> build_tree(std::string_view key,
                                                  std::string_view what) override;

    Result<std::optional<std::int64_t>> tree(std::string_view key) override;

    Result<std::vector<std::string>> trees(std::string_view prefix) override;

    Result<void> remove_tree(std::string_view key) override;

    Result<void> point_alias(std::string_view alias, std::string_view tree,
                             RepoLock* lock) override;

    Result<std::optional<std::string>> alias_target(std::string_view alias) override;

    // --- for DiskTree and copy ---

    // The root, opened (its own symlink followed: the user named it).
    Result<UniqueFd> root_fd() const;

    // The directory `key` beneath the root; an invalid fd iff it (or the root) is absent or is
    // no directory reached without leaving the root.
    Result<UniqueFd> open_dir(std::string_view key) const;

    // The directory `key`, created with the directories above it (and the root).
    Result<UniqueFd> make_dirs(std::string_view key) const;

    // Makes `request.from` of `source` (this store, or another directory tree) appear as the new
    // entry `name` of the directory `dir_fd` (`shown_key` names it), as its mode says, after
    // checking its pin.
    Result<void> copy_into(const DiskStore& source, const CopyRequest& request, int dir_fd,
                           const std::string& name, const std::string& shown_key);

    const std::filesystem::path& root() const { return root_; }

  private:
    // Writes `key` through `write(dir_fd, temporary name)`, then renames it over `key`.
    template <typename Write>
    Result<void> replace(std::string_view key, const Write& write) {
        if (auto valid = check_key(key); !valid) {
            return valid;
        }
        const std::string parent_key = parent_of(key);
        auto dir = make_dirs(parent_key);
        if (!dir) {
            return tl::unexpected(std::move(dir.error()));
        }
        const std::string name = name_of(key);
        const std::string temporary = temporary_name(name, ".tmp-");
        if (auto written = write(dir->get(), temporary); !written) {
            (void)fault::unlinkat(dir->get(), temporary.c_str(), 0);
            return written;
        }
        if (fault::renameat(dir->get(), temporary.c_str(), dir->get(), name.c_str()) != 0) {
            const int rename_errno = errno;
            (void)fault::unlinkat(dir->get(), temporary.c_str(), 0);
            return make_errno_error("cannot rename into place", describe(key), rename_errno);
        }
        // Renamed over another link of the same file: rename did nothing.
        (void)fault::unlinkat(dir->get(), temporary.c_str(), 0);
        return fs::sync_directory(dir->get(), describe(parent_key));
    }

    // Adds every regular file beneath the directory `dir_fd` (whose key is `key`) to `listing`.
    Result<void> walk(int dir_fd, const std::string& key, ObjectListing& listing) const;

    std::filesystem::path root_;
};

}  // namespace rpmirror::store::disk_objects
