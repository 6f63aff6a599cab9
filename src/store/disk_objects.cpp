// The files of a directory tree's ObjectStore (store/disk_objects.hpp).
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

namespace rpmirror::store {

namespace disk_objects {

std::string DiskStore::describe(std::string_view key) const {
    return key.empty() ? root_.string() : (root_ / std::string(key)).string();
}

Result<std::optional<ObjectInfo>> DiskStore::stat(std::string_view key) {
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

Result<ObjectListing> DiskStore::list(std::string_view prefix) {
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

Result<std::vector<std::string>> DiskStore::list_dirs(std::string_view prefix) {
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

Result<UniqueFd> DiskStore::open_regular(std::string_view key) {
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
            return make_error(ErrorCode::Unsafe, "not a regular file (a symlink)", describe(key));
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

Result<std::filesystem::path> DiskStore::local_copy(std::string_view key,
                                                    const std::filesystem::path& scratch) {
    (void)scratch;  // the file itself
    auto fd = open_regular(key);
    if (!fd) {
        return tl::unexpected(std::move(fd.error()));
    }
    return root_ / std::string(key);
}

Result<std::string> DiskStore::read(std::string_view key) {
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

Result<void> DiskStore::put(std::string_view key, std::string_view bytes) {
    return replace(key, [&](int dir_fd, const std::string& name) -> Result<void> {
        return write_file_at(dir_fd, name, bytes, describe(join_key(parent_of(key), name)),
                             /*flush=*/true);
    });
}

Result<void> DiskStore::put_file(std::string_view key, const std::filesystem::path& path) {
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

Result<std::unique_ptr<Staging>> DiskStore::stage(const StageOptions& options) {
    return in_place_staging(*this, root_, options.durable);
}

Result<void> DiskStore::copy(std::span<const CopyRequest> copies, const CopyOptions&) {
    for (const CopyRequest& request : copies) {
        auto copied = replace(request.to, [&](int dir_fd, const std::string& name) -> Result<void> {
            return copy_into(*this, request, dir_fd, name, join_key(parent_of(request.to), name));
        });
        if (!copied) {
            return copied;
        }
    }
    return {};
}

Result<void> DiskStore::remove(std::span<const std::string> keys) {
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

void DiskStore::remove_empty_dirs(std::string_view key) {
    if (!check_key(key)) {
        return;
    }
    for (std::string dir(key); !dir.empty(); dir = parent_of(dir)) {
        if (!fs::remove_empty_directory_beneath(root_, dir)) {
            return;
        }
    }
}

Result<UniqueFd> DiskStore::root_fd() const {
    UniqueFd fd = fs::open_directory(root_, false);
    if (!fd) {
        return make_errno_error("cannot open", root_.string(), errno);
    }
    return fd;
}

Result<UniqueFd> DiskStore::open_dir(std::string_view key) const {
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

Result<UniqueFd> DiskStore::make_dirs(std::string_view key) const {
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

Result<void> DiskStore::copy_into(const DiskStore& source, const CopyRequest& request, int dir_fd,
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
    return place_at(from_dir->get(), name_of(request.from), source.describe(request.from), request,
                    dir_fd, name, describe(shown_key));
}

Result<void> DiskStore::walk(int dir_fd, const std::string& key, ObjectListing& listing) const {
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

}  // namespace disk_objects

std::unique_ptr<ObjectStore> disk_object_store(std::filesystem::path root) {
    return std::make_unique<disk_objects::DiskStore>(std::move(root));
}

}  // namespace rpmirror::store
