// The ObjectStore of a directory tree (store/object_store.hpp), over src/fs/: every lookup,
// creation and removal beneath the root (fs/beneath.hpp), no symlink followed, everything that
// creates, renames or removes through the fault seam. A put writes a temporary file beside the key
// and renames it over it; a tree is built in a temporary sibling directory (".NAME.creating-*",
// which fs/walk.hpp's walks skip), flushed and renamed into place without replacing anything; an
// alias is a relative symlink switched by one rename.
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <random>

#include <fmt/core.h>

#include "fs/beneath.hpp"
#include "fs/durable.hpp"
#include "fs/fault.hpp"
#include "fs/walk.hpp"
#include "store/disk_files.hpp"
#include "store/local_store.hpp"
#include "store/object_store.hpp"
#include "store/staging.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror::store {

namespace disk_objects {
namespace {

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

    std::string describe(std::string_view key) const override {
        return key.empty() ? root_.string() : (root_ / std::string(key)).string();
    }

    Result<std::optional<ObjectInfo>> stat(std::string_view key) override {
        if (auto valid = check_key(key); !valid) {
            return tl::unexpected(std::move(valid.error()));
        }
        auto root = root_fd();
        if (!root) {
            return root.error().code == ErrorCode::NotFound
                       ? Result<std::optional<ObjectInfo>>(std::nullopt)
                       : tl::unexpected(std::move(root.error()));
        }
        const fs::Entry entry = fs::lookup_beneath(root->get(), std::string(key));
        if (entry.kind == fs::EntryKind::Regular) {
            return std::optional<ObjectInfo>(info_of(entry.st));
        }
        if (entry.kind == fs::EntryKind::Error) {
            return make_errno_error("cannot look up", describe(key), entry.sys_errno);
        }
        return std::optional<ObjectInfo>();
    }

    Result<ObjectListing> list(std::string_view prefix) override {
        if (auto valid = check_key(prefix, true); !valid) {
            return tl::unexpected(std::move(valid.error()));
        }
        ObjectListing listing;
        auto dir = open_dir(prefix);
        if (!dir) {
            return tl::unexpected(std::move(dir.error()));
        }
        if (*dir) {
            if (auto walked = walk(dir->get(), std::string(prefix), listing); !walked) {
                return tl::unexpected(std::move(walked.error()));
            }
        }
        return listing;
    }

    Result<std::vector<std::string>> list_dirs(std::string_view prefix) override {
        if (auto valid = check_key(prefix, true); !valid) {
            return tl::unexpected(std::move(valid.error()));
        }
        std::vector<std::string> names;
        auto dir = open_dir(prefix);
        if (!dir) {
            return tl::unexpected(std::move(dir.error()));
        }
        if (*dir) {
            auto entries = entries_of(dir->get(), describe(prefix));
            if (!entries) {
                return tl::unexpected(std::move(entries.error()));
            }
            for (const auto& [name, st] : *entries) {
                if (S_ISDIR(st.st_mode)) {
                    names.push_back(name);
                }
            }
        }
        std::sort(names.begin(), names.end());
        return names;
    }

    // The regular file at `key`, open for reading: Error{Unsafe} iff something else is there (a
    // symlink is not followed), the open's error otherwise (Error{NotFound} iff nothing).
    Result<UniqueFd> open_regular(std::string_view key) {
        if (auto valid = check_key(key); !valid) {
            return tl::unexpected(std::move(valid.error()));
        }
        auto root = root_fd();
        if (!root) {
            return tl::unexpected(std::move(root.error()));
        }
        UniqueFd fd(fs::open_beneath(root->get(), std::string(key),
                                     O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
        if (!fd) {
            if (errno == ELOOP || errno == EXDEV) {
                return make_error(ErrorCode::Unsafe, "not a regular file (a symlink)",
                                  describe(key));
            }
            return make_errno_error("cannot open", describe(key), errno);
        }
        struct stat st {};
        if (::fstat(fd.get(), &st) != 0) {
            return make_errno_error("cannot read", describe(key), errno);
        }
        if (!S_ISREG(st.st_mode)) {
            return make_error(ErrorCode::Unsafe, "not a regular file", describe(key));
        }
        return fd;
    }

    Result<std::filesystem::path> local_copy(std::string_view key,
                                             const std::filesystem::path& scratch) override {
        (void)scratch;  // the file itself
        auto fd = open_regular(key);
        if (!fd) {
            return tl::unexpected(std::move(fd.error()));
        }
        return root_ / std::string(key);
    }

    Result<std::string> read(std::string_view key) override {
        auto fd = open_regular(key);
        if (!fd) {
            return tl::unexpected(std::move(fd.error()));
        }
        std::string bytes;
        std::array<char, 65536> buffer{};
        for (;;) {
            const ssize_t got = ::read(fd->get(), buffer.data(), buffer.size());
            if (got < 0 && errno == EINTR) {
                continue;
            }
            if (got < 0) {
                return make_errno_error("cannot read", describe(key), errno);
            }
            if (got == 0) {
                return bytes;
            }
            bytes.append(buffer.data(), static_cast<std::size_t>(got));
        }
    }

    Result<void> put(std::string_view key, std::string_view bytes) override {
        return replace(key, [&](int dir_fd, const std::string& name) -> Result<void> {
            const std::string shown = describe(join_key(parent_of(key), name));
            const UniqueFd fd(fs::create_file_at(dir_fd, name, shown));
            if (!fd) {
                return make_errno_error("cannot create", shown, errno);
            }
            for (std::size_t written = 0; written < bytes.size();) {
                const ssize_t result =
                    fault::write(fd.get(), bytes.data() + written, bytes.size() - written);
                if (result < 0 && errno != EINTR) {
                    return make_errno_error("cannot write", shown, errno);
                }
                written += static_cast<std::size_t>(std::max<ssize_t>(result, 0));
            }
            if (fault::fsync(fd.get(), shown) != 0) {
                return make_errno_error("cannot flush", shown, errno);
            }
            return {};
        });
    }

    Result<void> put_file(std::string_view key, const std::filesystem::path& path) override {
        const UniqueFd source(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
        struct stat st {};
        if (!source || ::fstat(source.get(), &st) != 0) {
            return make_errno_error("cannot open", path.string(), errno);
        }
        return replace(key, [&](int dir_fd, const std::string& name) -> Result<void> {
            const std::string shown = describe(join_key(parent_of(key), name));
            return copy_bytes(source.get(), st, dir_fd, name, shown);
        });
    }

    Result<std::unique_ptr<Staging>> stage(const StageOptions& /*options*/) override {
        return in_place_staging(*this, root_);
    }

    Result<void> copy(std::span<const CopyRequest> copies, const CopyOptions&) override {
        for (const CopyRequest& request : copies) {
            auto copied =
                replace(request.to, [&](int dir_fd, const std::string& name) -> Result<void> {
                    return copy_into(*this, request, dir_fd, name,
                                     join_key(parent_of(request.to), name));
                });
            if (!copied) {
                return copied;
            }
        }
        return {};
    }

    Result<void> remove(std::span<const std::string> keys) override {
        for (const std::string& key : keys) {
            if (auto valid = check_key(key); !valid) {
                return valid;
            }
            auto removed = fs::remove_beneath(root_, key, false);
            if (!removed) {
                return tl::unexpected(std::move(removed.error()));
            }
        }
        return {};
    }

    void remove_empty_dirs(std::string_view key) override {
        if (!check_key(key)) {
            return;
        }
        for (std::string dir(key); !dir.empty(); dir = parent_of(dir)) {
            if (!fs::remove_empty_directory_beneath(root_, dir)) {
                return;
            }
        }
    }

    Result<std::unique_ptr<TreeBuild>> build_tree(std::string_view key,
                                                  std::string_view what) override {
        if (auto valid = check_key(key); !valid) {
            return tl::unexpected(std::move(valid.error()));
        }
        auto parent = make_dirs(parent_of(key));
        if (!parent) {
            return tl::unexpected(std::move(parent.error()));
        }
        if (struct stat st{};
            ::fstatat(parent->get(), name_of(key).c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
            return make_error(ErrorCode::BadInput, "exists already", describe(key));
        }
        // What interrupted builds and removals left (the caller holds the owner's lock).
        auto entries = entries_of(parent->get(), describe(parent_of(key)));
        if (!entries) {
            return tl::unexpected(std::move(entries.error()));
        }
        for (const auto& [name, st] : *entries) {
            if (fs::is_snapshot_staging_name(name)) {
                (void)remove_all_at(parent->get(), name);
            }
        }
        for (int attempt = 0;; ++attempt) {
            const std::string name = temporary_name(name_of(key), fs::kSnapshotStagingInfix);
            if (::mkdirat(parent->get(), name.c_str(), 0755) == 0) {
                return std::unique_ptr<TreeBuild>(std::make_unique<DiskTree>(
                    *this, std::string(key), join_key(parent_of(key), name), std::string(what)));
            }
            if (errno != EEXIST || attempt > 100) {
                return make_errno_error("cannot create a directory in", describe(parent_of(key)),
                                        errno);
            }
        }
    }

    Result<std::optional<std::int64_t>> tree(std::string_view key) override {
        if (auto valid = check_key(key); !valid) {
            return tl::unexpected(std::move(valid.error()));
        }
        auto parent = open_dir(parent_of(key));
        if (!parent) {
            return tl::unexpected(std::move(parent.error()));
        }
        struct stat st {};
        if (!*parent ||
            ::fstatat(parent->get(), name_of(key).c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISDIR(st.st_mode)) {
            return std::optional<std::int64_t>();
        }
        return std::optional<std::int64_t>(fs::timespec_ns(st.st_mtim));
    }

    Result<std::vector<std::string>> trees(std::string_view prefix) override {
        auto dirs = list_dirs(prefix);
        if (dirs) {
            std::erase_if(*dirs, [](const std::string& name) { return name.starts_with('.'); });
        }
        return dirs;
    }

    Result<void> remove_tree(std::string_view key) override {
        if (auto valid = check_key(key); !valid) {
            return valid;
        }
        auto parent = open_dir(parent_of(key));
        if (!parent) {
            return tl::unexpected(std::move(parent.error()));
        }
        if (!*parent) {
            return {};
        }
        const std::string name = name_of(key);
        const std::string doomed =
            fmt::format(".{}{}{}", name, fs::kSnapshotRemovingInfix, static_cast<long>(::getpid()));
        if (fault::renameat(parent->get(), name.c_str(), parent->get(), doomed.c_str()) != 0) {
            if (errno == ENOENT) {
                return {};
            }
            return make_errno_error("cannot remove", describe(key), errno);
        }
        if (const int error = remove_all_at(parent->get(), doomed); error != 0) {
            return make_errno_error("cannot remove all of",
                                    describe(join_key(parent_of(key), doomed)), error);
        }
        (void)fs::sync_directory(parent->get(), describe(parent_of(key)));
        return {};
    }

    Result<void> point_alias(std::string_view alias, std::string_view tree,
                             RepoLock* lock) override {
        if (auto valid = check_key(alias); !valid) {
            return valid;
        }
        if (auto valid = check_key(tree); !valid) {
            return valid;
        }
        const std::string parent_key = parent_of(alias);
        auto dir = make_dirs(parent_key);
        if (!dir) {
            return tl::unexpected(std::move(dir.error()));
        }
        const std::string name = name_of(alias);
        struct stat st {};
        if (::fstatat(dir->get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            !S_ISLNK(st.st_mode)) {
            return make_error(ErrorCode::Unsafe,
                              fmt::format("is a {}, not a published name's symlink; not replaced",
                                          S_ISDIR(st.st_mode) ? "directory" : "file"),
                              describe(alias));
        }
        const std::string target = std::filesystem::path(std::string(tree))
                                       .lexically_relative(std::filesystem::path(parent_key))
                                       .string();
        const std::string temporary =
            fmt::format(".{}.publish-{}", name, static_cast<long>(::getpid()));
        (void)fault::unlinkat(dir->get(), temporary.c_str(), 0);  // an interrupted run's
        if (::symlinkat(target.c_str(), dir->get(), temporary.c_str()) != 0) {
            return make_errno_error("cannot create a symlink in", describe(parent_key), errno);
        }
        if (lock != nullptr) {
            if (auto held = lock->confirm(); !held) {
                (void)fault::unlinkat(dir->get(), temporary.c_str(), 0);
                return held;
            }
        }
        // One rename: a reader resolves the old tree or the new one. A directory that appeared
        // meanwhile is not replaced (rename fails with EISDIR).
        if (fault::renameat(dir->get(), temporary.c_str(), dir->get(), name.c_str()) != 0) {
            const int rename_errno = errno;
            (void)fault::unlinkat(dir->get(), temporary.c_str(), 0);
            return make_errno_error("cannot switch", describe(alias), rename_errno);
        }
        return fs::sync_directory(dir->get(), describe(parent_key));
    }

    Result<std::optional<std::string>> alias_target(std::string_view alias) override {
        if (auto valid = check_key(alias); !valid) {
            return tl::unexpected(std::move(valid.error()));
        }
        auto dir = open_dir(parent_of(alias));
        if (!dir) {
            return tl::unexpected(std::move(dir.error()));
        }
        if (!*dir) {
            return std::optional<std::string>();
        }
        std::array<char, 4096> target{};
        const ssize_t length =
            ::readlinkat(dir->get(), name_of(alias).c_str(), target.data(), target.size());
        if (length < 0 || static_cast<std::size_t>(length) >= target.size()) {
            return std::optional<std::string>();
        }
        const std::filesystem::path relative(std::string(target.data(), length));
        if (relative.is_absolute()) {
            return std::optional<std::string>();
        }
        const std::string key =
            (std::filesystem::path(parent_of(alias)) / relative).lexically_normal().string();
        if (!check_key(key)) {
            return std::optional<std::string>();
        }
        return std::optional<std::string>(key);
    }

    Result<std::filesystem::path> stage_path(std::string_view key,
                                             const std::filesystem::path&) override {
        if (auto valid = check_key(key); !valid) {
            return tl::unexpected(std::move(valid.error()));
        }
        if (auto dir = make_dirs(parent_of(key)); !dir) {
            return tl::unexpected(std::move(dir.error()));
        }
        return root_ / parent_of(key) / staged_name(name_of(key));
    }

    Result<void> commit_staged(std::string_view key, const std::filesystem::path& staged,
                               const CopyOptions&) override {
        if (auto valid = check_key(key); !valid) {
            return valid;
        }
        const std::string name = name_of(key);
        if (staged != root_ / parent_of(key) / staged_name(name)) {
            return make_error(ErrorCode::BadInput, "not staged for " + std::string(key),
                              staged.string());
        }
        auto dir = make_dirs(parent_of(key));
        if (!dir) {
            return tl::unexpected(std::move(dir.error()));
        }
        const std::string from = staged_name(name);
        {
            const UniqueFd file(
                ::openat(dir->get(), from.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
            struct stat st {};
            if (!file || ::fstat(file.get(), &st) != 0) {
                return make_errno_error("cannot open", staged.string(), errno);
            }
            if (!S_ISREG(st.st_mode)) {
                return make_error(ErrorCode::Unsafe, "not a regular file", staged.string());
            }
            if (fault::fsync(file.get(), staged.string()) != 0) {
                return make_errno_error("cannot flush", staged.string(), errno);
            }
        }
        if (fault::renameat(dir->get(), from.c_str(), dir->get(), name.c_str()) != 0) {
            return make_errno_error("cannot rename into place", describe(key), errno);
        }
        return fs::sync_directory(dir->get(), describe(parent_of(key)));
    }

    // stage_path's name beside `name`.
    static std::string staged_name(std::string_view name) {
        return "." + std::string(name) + ".rpmirror-staged";
    }

    // --- for DiskTree and copy ---

    // The root, opened (its own symlink followed: the user named it).
    Result<UniqueFd> root_fd() const {
        UniqueFd fd = fs::open_directory(root_, false);
        if (!fd) {
            return make_errno_error("cannot open", root_.string(), errno);
        }
        return fd;
    }

    // The directory `key` beneath the root; an invalid fd iff it (or the root) is absent or is
    // no directory reached without leaving the root.
    Result<UniqueFd> open_dir(std::string_view key) const {
        UniqueFd root = fs::open_directory(root_, false);
        if (!root) {
            if (errno == ENOENT) {
                return UniqueFd();
            }
            return make_errno_error("cannot open", root_.string(), errno);
        }
        if (key.empty()) {
            return root;
        }
        UniqueFd dir = fs::open_directory_beneath(root.get(), std::string(key));
        if (!dir && errno != ENOENT && errno != ENOTDIR && errno != ELOOP && errno != EXDEV) {
            return make_errno_error("cannot open", describe(key), errno);
        }
        return dir;
    }

    // The directory `key`, created with the directories above it (and the root).
    Result<UniqueFd> make_dirs(std::string_view key) const {
        std::error_code error;
        std::filesystem::create_directories(root_, error);
        auto root = root_fd();
        if (!root) {
            return root;
        }
        if (key.empty()) {
            return root;
        }
        auto made = fs::make_directories_beneath(root->get(), std::string(key), root_);
        if (!made) {
            return made;
        }
        // Opened again for reading: what make_directories_beneath returns may not be fsynced.
        UniqueFd dir = fs::open_directory_beneath(root->get(), std::string(key));
        if (!dir) {
            return make_errno_error("cannot open", describe(key), errno);
        }
        return dir;
    }

    // Makes `request.from` of `source` (this store, or another directory tree) appear as the new
    // entry `name` of the directory `dir_fd` (`shown_key` names it), as its mode says, after
    // checking its pin.
    Result<void> copy_into(const DiskStore& source, const CopyRequest& request, int dir_fd,
                           const std::string& name, const std::string& shown_key) {
        if (auto valid = check_key(request.from); !valid) {
            return valid;
        }
        auto from_dir = source.open_dir(parent_of(request.from));
        if (!from_dir) {
            return tl::unexpected(std::move(from_dir.error()));
        }
        if (!*from_dir) {
            return make_error(ErrorCode::NotFound, "no such file", source.describe(request.from));
        }
        return place_at(from_dir->get(), name_of(request.from), source.describe(request.from),
                        request, dir_fd, name, describe(shown_key));
    }

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
    Result<void> walk(int dir_fd, const std::string& key, ObjectListing& listing) const {
        auto entries = entries_of(dir_fd, describe(key));
        if (!entries) {
            return tl::unexpected(std::move(entries.error()));
        }
        for (const auto& [name, st] : *entries) {
            if (S_ISREG(st.st_mode)) {
                listing.emplace(join_key(key, name), info_of(st));
            } else if (S_ISDIR(st.st_mode)) {
                UniqueFd child = fs::open_child_directory(dir_fd, name);
                if (!child) {
                    continue;  // gone meanwhile, or replaced by a symlink: not followed
                }
                if (auto walked = walk(child.get(), join_key(key, name), listing); !walked) {
                    return walked;
                }
            }
        }
        return {};
    }

    std::filesystem::path root_;
};

DiskTree::~DiskTree() {
    if (committed_) {
        return;
    }
    if (auto parent = store_.open_dir(parent_of(staging_)); parent && *parent) {
        (void)remove_all_at(parent->get(), name_of(staging_));
    }
}

Result<void> DiskTree::copy(std::span<const CopyRequest> copies, const CopyOptions& options) {
    return copy_from(store_, copies, options);
}

Result<void> DiskTree::copy_from(ObjectStore& source, std::span<const CopyRequest> copies,
                                 const CopyOptions&) {
    const auto* from = dynamic_cast<const DiskStore*>(&source);
    if (from == nullptr) {
        return make_error(ErrorCode::Unsupported,
                          "cannot copy into a directory tree from another kind of store",
                          source.describe(""));
    }
    auto staging = store_.open_dir(staging_);
    if (!staging) {
        return tl::unexpected(std::move(staging.error()));
    }
    if (!*staging) {
        return make_error(ErrorCode::NotFound, "gone while it was built",
                          store_.describe(staging_));
    }
    std::map<std::string, UniqueFd> dirs;
    for (const CopyRequest& request : copies) {
        if (auto valid = check_key(request.to); !valid) {
            return valid;
        }
        const std::string parent = parent_of(request.to);
        auto found = dirs.find(parent);
        if (found == dirs.end()) {
            auto made = parent.empty() ? Result<UniqueFd>(UniqueFd(::dup(staging->get())))
                                       : fs::make_directories_beneath(staging->get(), parent,
                                                                      store_.describe(staging_));
            if (!made) {
                return tl::unexpected(std::move(made.error()));
            }
            found = dirs.emplace(parent, std::move(*made)).first;
        }
        if (auto copied = store_.copy_into(*from, request, found->second.get(), name_of(request.to),
                                           join_key(staging_, request.to));
            !copied) {
            return copied;
        }
    }
    return {};
}

Result<void> DiskTree::put(std::string_view relative, std::string_view bytes) {
    if (auto valid = check_key(relative); !valid) {
        return valid;
    }
    auto staging = store_.open_dir(staging_);
    if (!staging) {
        return tl::unexpected(std::move(staging.error()));
    }
    if (!*staging) {
        return make_error(ErrorCode::NotFound, "gone while it was built",
                          store_.describe(staging_));
    }
    const std::string parent = parent_of(relative);
    auto dir = parent.empty() ? Result<UniqueFd>(UniqueFd(::dup(staging->get())))
                              : fs::make_directories_beneath(staging->get(), parent,
                                                             store_.describe(staging_));
    if (!dir) {
        return tl::unexpected(std::move(dir.error()));
    }
    return write_file_at(dir->get(), name_of(relative), bytes,
                         store_.describe(join_key(staging_, relative)));
}

Result<void> DiskTree::commit(RepoLock* lock) {
    const std::string shown_staging = store_.describe(staging_);
    if (auto flushed = fs::flush_filesystem(shown_staging); !flushed) {
        return flushed;
    }
    auto parent = store_.open_dir(parent_of(key_));
    if (!parent) {
        return tl::unexpected(std::move(parent.error()));
    }
    if (!*parent) {
        return make_error(ErrorCode::NotFound, "gone while the tree was built",
                          store_.describe(parent_of(key_)));
    }
    const std::string staging_name = name_of(staging_);
    const std::string name = name_of(key_);
    // Completed now, whatever the last entry made in it.
    const std::array<timespec, 2> now{timespec{0, UTIME_NOW}, timespec{0, UTIME_NOW}};
    ::utimensat(parent->get(), staging_name.c_str(), now.data(), AT_SYMLINK_NOFOLLOW);
    if (lock != nullptr) {
        if (auto held = lock->confirm(); !held) {
            return held;
        }
    }
    int renamed = fault::renameat2(parent->get(), staging_name.c_str(), parent->get(), name.c_str(),
                                   RENAME_NOREPLACE);
    if (renamed != 0 && (errno == EINVAL || errno == ENOSYS || errno == ENOTSUP)) {
        // NFS, CIFS, FUSE: no RENAME_NOREPLACE. The caller holds the lock: nobody else creates it.
        struct stat st {};
        if (::fstatat(parent->get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
            errno = EEXIST;
        } else {
            renamed =
                fault::renameat(parent->get(), staging_name.c_str(), parent->get(), name.c_str());
        }
    }
    if (renamed != 0) {
        if (errno == EEXIST || errno == ENOTEMPTY) {
            return make_error(ErrorCode::BadInput, "exists already", store_.describe(key_));
        }
        return make_errno_error(fmt::format("cannot rename the new {} into place", what_),
                                store_.describe(key_), errno);
    }
    committed_ = true;
    return fs::sync_directory(parent->get(), store_.describe(parent_of(key_)));
}

}  // namespace
}  // namespace disk_objects

std::unique_ptr<ObjectStore> disk_object_store(std::filesystem::path root) {
    return std::make_unique<disk_objects::DiskStore>(std::move(root));
}

}  // namespace rpmirror::store
