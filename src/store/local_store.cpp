// A mirror in a local directory tree (see store/local_store.hpp).
#include "store/local_store.hpp"

#include <sys/stat.h>

#include <cerrno>

#include <fmt/core.h>

#include "fs/beneath.hpp"
#include "fs/walk.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror::store {

namespace {

std::int64_t nanoseconds(const timespec& time) {
    return static_cast<std::int64_t>(time.tv_sec) * 1'000'000'000 + time.tv_nsec;
}

StoredFile stored_file(const struct stat& st) {
    return {static_cast<std::uint64_t>(st.st_size),
            LocalStore::version_of(nanoseconds(st.st_mtim), static_cast<std::uint64_t>(st.st_ino),
                                   nanoseconds(st.st_ctim))};
}

}  // namespace

std::string LocalStore::version_of(std::int64_t mtime_ns, std::uint64_t inode,
                                   std::int64_t ctime_ns) {
    return fmt::format("{} {} {}", mtime_ns, inode, ctime_ns);
}

std::string LocalStore::describe(std::string_view key) const {
    return (root_ / key).string();
}

Result<Listing> LocalStore::list_packages() {
    UniqueFd root = fs::open_directory(root_, /*nofollow=*/true);
    if (!root) {
        const int open_errno = errno;
        if (open_errno == ENOENT) {
            return Listing{};
        }
        std::error_code ignored;
        if (std::filesystem::is_symlink(root_, ignored)) {
            return make_error(ErrorCode::Unsafe, "is a symlink; not walking through it",
                              root_.string());
        }
        return make_errno_error("cannot open directory", root_.string(), open_errno);
    }
    // The metadata directories at the top are not descended into (is_package_key).
    const fs::DescendFilter descend = [](const std::filesystem::path& relative,
                                         const struct stat&) {
        return relative.has_parent_path() ||
               is_package_key(relative.filename().string() + "/package.rpm");
    };
    Listing packages;
    const fs::RpmVisitor record = [&packages](int, const std::string&,
                                              const std::filesystem::path& relative,
                                              const struct stat& st) -> Result<bool> {
        packages.emplace(relative.generic_string(), stored_file(st));
        return true;
    };
    auto walked = fs::walk_rpm_files(std::move(root), root_, descend, record);
    if (!walked) {
        return tl::unexpected(std::move(walked.error()));
    }
    return packages;
}

Result<std::optional<StoredFile>> LocalStore::stat(std::string_view key) {
    struct stat st {};
    const std::filesystem::path path = root_ / key;
    if (::lstat(path.c_str(), &st) != 0) {
        if (errno == ENOENT || errno == ENOTDIR) {
            return std::optional<StoredFile>();
        }
        return make_errno_error("cannot stat", path.string(), errno);
    }
    if (!S_ISREG(st.st_mode)) {
        return std::optional<StoredFile>();
    }
    return std::optional<StoredFile>(stored_file(st));
}

Result<std::vector<std::string>> LocalStore::remove_packages(std::span<const std::string> keys) {
    std::vector<std::string> removed;
    for (const std::string& key : keys) {
        if (!is_package_key(key)) {
            return make_error(ErrorCode::BadInput, "is not a package of the mirror; not removed",
                              describe(key));
        }
        auto outcome = fs::remove_beneath(root_, key, /*symlinks_too=*/false);
        if (!outcome) {
            return tl::unexpected(std::move(outcome.error()));
        }
        if (*outcome == fs::Removal::Removed) {
            removed.push_back(key);
        }
    }
    return removed;
}

}  // namespace rpmirror::store
