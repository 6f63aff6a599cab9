// The spool of an s3:// destination (see sync/s3_spool.hpp).
#include "sync/s3_spool.hpp"

#include <linux/magic.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <string_view>
#include <system_error>

namespace rpmirror {

namespace {

constexpr std::string_view kSpoolPrefix = "rpmirror-s3-spool-";
constexpr std::size_t kSuffixLength = 6;  // mkdtemp's XXXXXX

// The pid of a spool directory's name, or nullopt iff `name` is not exactly
// `rpmirror-s3-spool-<pid>-XXXXXX`.
std::optional<pid_t> spool_pid(std::string_view name) {
    if (!name.starts_with(kSpoolPrefix)) {
        return std::nullopt;
    }
    name.remove_prefix(kSpoolPrefix.size());
    if (name.size() < kSuffixLength + 2 || name[name.size() - kSuffixLength - 1] != '-') {
        return std::nullopt;
    }
    const std::string_view suffix = name.substr(name.size() - kSuffixLength);
    for (const char c : suffix) {
        if (std::isalnum(static_cast<unsigned char>(c)) == 0) {
            return std::nullopt;
        }
    }
    const std::string_view digits = name.substr(0, name.size() - kSuffixLength - 1);
    pid_t pid = 0;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
    if (error != std::errc() || end != digits.data() + digits.size() || pid <= 0 ||
        digits.front() == '0') {
        return std::nullopt;
    }
    return pid;
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
        const auto pid = spool_pid(it->path().filename().native());
        std::error_code ignored;
        if (!pid || it->is_symlink(ignored) || !it->is_directory(ignored)) {
            continue;
        }
        if (::kill(*pid, 0) != 0 && errno == ESRCH) {  // not alive (EPERM: another user's)
            stale.push_back(it->path());
        }
    }
    std::vector<std::filesystem::path> removed;
    for (const std::filesystem::path& directory : stale) {
        std::error_code failed;
        std::filesystem::remove_all(directory, failed);
        if (!failed) {
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
    } else {
        std::filesystem::create_directories(parent, error);
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
    spool.in_memory = is_memory_backed(spool.dir);
    if (chosen.empty() && !spool.in_memory) {
        spool.warning = "the s3 spool " + spool.dir.string() +
                        " is on disk: " + memory_parent.string() + why_on_disk +
                        " (give --s3-spool-dir to choose)";
    }
    return spool;
}

}  // namespace rpmirror
