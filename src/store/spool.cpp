// The spool of a store that is no local directory (see store/spool.hpp).
#include "store/spool.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <string_view>
#include <system_error>

#include "fs/tree.hpp"

namespace rpmirror::store {

namespace {

constexpr std::string_view kSpoolPrefix = "rpmirror-s3-spool-";
constexpr std::size_t kSuffixLength = 6;  // mkdtemp's XXXXXX

constexpr const char* kOwnerFile = ".owner";

// True iff `name` is exactly `rpmirror-s3-spool-<digits>-XXXXXX` (the digits are the creating
// process's pid, for people reading the directory; never trusted: another PID namespace's).
bool is_spool_name(std::string_view name) {
    if (!name.starts_with(kSpoolPrefix)) {
        return false;
    }
    name.remove_prefix(kSpoolPrefix.size());
    if (name.size() < kSuffixLength + 2 || name[name.size() - kSuffixLength - 1] != '-') {
        return false;
    }
    const std::string_view suffix = name.substr(name.size() - kSuffixLength);
    const std::string_view digits = name.substr(0, name.size() - kSuffixLength - 1);
    return std::all_of(suffix.begin(), suffix.end(),
                       [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }) &&
           std::all_of(digits.begin(), digits.end(),
                       [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
}

// True iff the spool `directory` has an owner file that nobody holds locked: its process ended
// (the kernel drops a flock with the last descriptor, however the process died). A spool without
// one (being created this instant, or left by an rpmirror that did not make one) is not stale.
bool owner_gone(const std::filesystem::path& directory) {
    const UniqueFd owner(
        ::open((directory / kOwnerFile).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY));
    if (owner.get() < 0) {
        return false;
    }
    return ::flock(owner.get(), LOCK_EX | LOCK_NB) == 0;
}

}  // namespace

bool is_memory_backed(const std::filesystem::path& path) {
    struct statfs info {};
    if (::statfs(path.c_str(), &info) != 0) {
        return false;
    }
    return info.f_type == TMPFS_MAGIC || info.f_type == RAMFS_MAGIC;
}

std::vector<std::filesystem::path> remove_stale_spools(const std::filesystem::path& parent) {
    std::vector<std::filesystem::path> stale;
    std::error_code error;
    for (std::filesystem::directory_iterator it(parent, error), end; !error && it != end;
         it.increment(error)) {
        std::error_code ignored;
        if (!is_spool_name(it->path().filename().native()) || it->is_symlink(ignored) ||
            !it->is_directory(ignored)) {
            continue;
        }
        if (owner_gone(it->path())) {
            stale.push_back(it->path());
        }
    }
    std::vector<std::filesystem::path> removed;
    for (const std::filesystem::path& directory : stale) {
        if (fs::remove_tree(directory)) {
            removed.push_back(directory);
        }
    }
    return removed;
}

Result<S3Spool> create_s3_spool(const std::filesystem::path& chosen, std::uint64_t needed_bytes,
                                const std::filesystem::path& memory_parent) {
    S3Spool spool;
    std::filesystem::path parent = chosen;
    std::error_code error;
    std::string why_on_disk = " is missing or not memory-backed";
    if (parent.empty()) {
        const bool usable =
            !memory_parent.empty() && std::filesystem::is_directory(memory_parent, error) &&
            is_memory_backed(memory_parent) && ::access(memory_parent.c_str(), W_OK | X_OK) == 0;
        struct statvfs space {};
        const std::uint64_t free_bytes =
            usable && ::statvfs(memory_parent.c_str(), &space) == 0
                ? static_cast<std::uint64_t>(space.f_bavail) * space.f_frsize
                : 0;
        if (usable && free_bytes < needed_bytes) {
            why_on_disk = " has " + std::to_string(free_bytes >> 20) + " MiB free, less than the " +
                          std::to_string(needed_bytes >> 20) + " MiB of --s3-spool-size";
        }
        if (usable && free_bytes >= needed_bytes) {
            parent = memory_parent;
        } else {
            error.clear();
            parent = std::filesystem::temp_directory_path(error);
        }
    } else if (auto made = fs::make_directories(parent, "the spool directory"); !made) {
        return tl::unexpected(std::move(made.error()));
    }
    if (error) {
        return make_error(ErrorCode::Io, "cannot create the spool directory: " + error.message(),
                          parent.string());
    }
    remove_stale_spools(parent);
    std::string name =
        (parent / (std::string(kSpoolPrefix) + std::to_string(::getpid()) + "-XXXXXX")).string();
    if (::mkdtemp(name.data()) == nullptr) {
        return make_errno_error("cannot create the spool directory", name, errno);
    }
    spool.dir = name;
    // Held locked for the spool's life: how the next run's clean-up tells a live spool from a
    // killed run's, in any PID namespace sharing the directory.
    spool.owner = UniqueFd(::open((spool.dir / kOwnerFile).c_str(),
                                  O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (spool.owner.get() < 0 || ::flock(spool.owner.get(), LOCK_EX | LOCK_NB) != 0) {
        const int saved = errno;
        (void)fs::remove_tree(spool.dir);
        return make_errno_error("cannot lock the spool directory", spool.dir.string(), saved);
    }
    spool.in_memory = is_memory_backed(spool.dir);
    if (chosen.empty() && !spool.in_memory) {
        spool.warning = "the s3 spool " + spool.dir.string() +
                        " is on disk: " + memory_parent.string() + why_on_disk +
                        " (give --s3-spool-dir to choose)";
    }
    return spool;
}

}  // namespace rpmirror::store
