// The trees and aliases of a directory tree's ObjectStore (store/disk_objects.hpp): a tree built
// in a temporary sibling directory, flushed and renamed into place without replacing anything; an
// alias a relative symlink switched by one rename.
#include "store/disk_objects.hpp"

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

namespace rpmirror::store::disk_objects {

Result<std::unique_ptr<TreeBuild>> DiskStore::build_tree(std::string_view key,
                                                         std::string_view what) {
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

Result<std::optional<std::int64_t>> DiskStore::tree(std::string_view key) {
    if (auto valid = check_key(key); !valid) {
        return tl::unexpected(std::move(valid.error()));
    }
    auto parent = open_dir(parent_of(key));
    if (!parent) {
        return tl::unexpected(std::move(parent.error()));
    }
    struct stat st {};
    if (!*parent || ::fstatat(parent->get(), name_of(key).c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISDIR(st.st_mode)) {
        return std::optional<std::int64_t>();
    }
    return std::optional<std::int64_t>(fs::timespec_ns(st.st_mtim));
}

Result<std::vector<std::string>> DiskStore::trees(std::string_view prefix) {
    auto dirs = list_dirs(prefix);
    if (dirs) {
        std::erase_if(*dirs, [](const std::string& name) { return name.starts_with('.'); });
    }
    return dirs;
}

Result<void> DiskStore::remove_tree(std::string_view key) {
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
        return make_errno_error("cannot remove all of", describe(join_key(parent_of(key), doomed)),
                                error);
    }
    (void)fs::sync_directory(parent->get(), describe(parent_of(key)));
    return {};
}

Result<void> DiskStore::point_alias(std::string_view alias, std::string_view tree, RepoLock* lock) {
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

Result<std::optional<std::string>> DiskStore::alias_target(std::string_view alias) {
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

}  // namespace rpmirror::store::disk_objects
