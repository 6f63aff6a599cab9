// The state directory and the per-repository run lock.
#include "fs/state.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "fs/fault.hpp"

namespace rpmirror::fs {

namespace {

// FNV-1a, 64 bits: stable across builds and machines (std::hash is not), and enough to keep
// the entries of different directories apart; the readable name beside it tells them apart
// for a person.
std::uint64_t fnv1a(std::string_view text) {
    std::uint64_t hash = 14695981039346656037ULL;
    for (const char c : text) {
        hash ^= static_cast<unsigned char>(c);
        hash *= 1099511628211ULL;
    }
    return hash;
}

// The pid recorded in the lock file, or 0.
long holder_pid(int fd) {
    char buffer[32] = {};
    const ssize_t length = ::pread(fd, buffer, sizeof(buffer) - 1, 0);
    return length > 0 ? std::strtol(buffer, nullptr, 10) : 0;
}

int try_lock(int fd) {
    struct flock lock {};
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    lock.l_start = 0;
    lock.l_len = 0;
    return ::fcntl(fd, F_OFD_SETLK, &lock);
}

// What a holder writes into a lock file: its pid (the only thing older versions wrote) and the
// repository directory as it spelled it.
std::string holder_text(const std::filesystem::path& repo_dir) {
    return fmt::format("{}\n{}\n", ::getpid(),
                       std::filesystem::absolute(repo_dir).lexically_normal().string());
}

// The repository directory as the holder of the lock open as `fd` spelled it, or "".
std::string holder_spelling(int fd) {
    char buffer[4096] = {};
    const ssize_t length = ::pread(fd, buffer, sizeof(buffer) - 1, 0);
    const std::string_view text(buffer, length > 0 ? static_cast<std::size_t>(length) : 0);
    const std::size_t first_line_end = text.find('\n');
    if (first_line_end == std::string_view::npos) {
        return "";
    }
    const std::string_view rest = text.substr(first_line_end + 1);
    return std::string(rest.substr(0, rest.find('\n')));
}

// A directory's identity on this host.
struct DirectoryIdentity {
    dev_t device;
    ino_t inode;
};

// True iff the holder's spelling `spelled` names no directory with `identity` any more: the
// holder is releasing a directory it removed (RunLock removes what it created), and the inode
// number has already been given to a new directory, ours.
bool holder_left(const std::string& spelled, const std::optional<DirectoryIdentity>& identity) {
    if (!identity || spelled.empty()) {
        return false;
    }
    struct stat st {};
    return ::stat(spelled.c_str(), &st) != 0 || st.st_dev != identity->device ||
           st.st_ino != identity->inode;
}

// Opens the lock file `path` (created with its directory) and takes its lock, retrying until
// `deadline` iff `wait` is set. A lock by `identity` (the directory's inode) whose holder no
// longer has that directory is waited for a few seconds more in any case: it is being released.
// Error{Busy} names `repo_dir` and the holder (its pid, and its spelling of the directory iff
// that differs).
Result<UniqueFd> hold_lock_file(const std::filesystem::path& path,
                                const std::filesystem::path& repo_dir,
                                std::optional<std::chrono::seconds> wait,
                                std::chrono::steady_clock::time_point deadline,
                                const std::stop_token& stop,
                                std::optional<DirectoryIdentity> identity = std::nullopt) {
    constexpr auto kReleaseGrace = std::chrono::seconds(5);
    std::optional<std::chrono::steady_clock::time_point> release_deadline;
    std::error_code error;
    std::filesystem::create_directories(path.parent_path(), error);
    if (error) {
        return make_errno_error("cannot create the state directory", path.parent_path().string(),
                                error.value());
    }
    UniqueFd fd(fault::fails(fault::Op::Create, path.string())
                    ? -1
                    : ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644));
    if (!fd) {
        return make_errno_error("cannot open the lock file", path.string(), errno);
    }
    while (try_lock(fd.get()) != 0) {
        if (errno != EAGAIN && errno != EACCES && errno != EINTR) {
            return make_errno_error("cannot lock", path.string(), errno);
        }
        const auto now = std::chrono::steady_clock::now();
        if (!release_deadline && holder_left(holder_spelling(fd.get()), identity)) {
            release_deadline = now + kReleaseGrace;
        }
        const bool releasing = release_deadline && now < *release_deadline;
        if (!releasing && (!wait || now >= deadline)) {
            const long pid = holder_pid(fd.get());
            const std::string spelled = holder_spelling(fd.get());
            const std::string ours =
                std::filesystem::absolute(repo_dir).lexically_normal().string();
            std::string holder = pid > 0 ? fmt::format("pid {}", pid) : "";
            if (!spelled.empty() && spelled != ours) {
                holder += fmt::format("{}as {}", holder.empty() ? "" : ", ", spelled);
            }
            return make_error(
                ErrorCode::Busy,
                fmt::format("repository directory {} is being synced by another rpmirror{}{}",
                            repo_dir.string(), holder.empty() ? "" : " (" + holder + ")",
                            wait ? fmt::format(" (waited {} s)", wait->count()) : ""));
        }
        if (stop.stop_requested()) {
            return make_error(ErrorCode::Interrupted, "interrupted while waiting for the lock",
                              repo_dir.string());
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(releasing ? 10 : 100));
    }
    // The holder only makes the message of a refused run more helpful: on a full disk the lock
    // is held without it.
    const std::string text = holder_text(repo_dir);
    if (::ftruncate(fd.get(), 0) == 0) {
        (void)::pwrite(fd.get(), text.data(), text.size(), 0);
    }
    return fd;
}

// Creates `dir` and its missing parents (0777 & ~umask, as mkdir -p). Returns the directories it
// created, outermost first (none iff `dir` existed), or Error{Io} naming `dir` and the errno.
Result<std::vector<std::filesystem::path>> make_missing_directories(
    const std::filesystem::path& dir) {
    std::vector<std::filesystem::path> missing;
    std::filesystem::path path = dir;
    while (!path.has_filename() && path.has_relative_path()) {
        path = path.parent_path();  // "a/b/" is "a/b"
    }
    struct stat st {};
    while (!path.empty() && ::stat(path.c_str(), &st) != 0 && errno == ENOENT) {
        missing.push_back(path);
        if (!path.has_relative_path()) {
            break;
        }
        path = path.parent_path();
    }
    std::vector<std::filesystem::path> created;
    for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
        if (::mkdir(it->c_str(), 0777) == 0) {
            created.push_back(*it);
        } else if (errno != EEXIST) {
            const int mkdir_errno = errno;
            for (auto made = created.rbegin(); made != created.rend(); ++made) {
                ::rmdir(made->c_str());
            }
            return make_errno_error("cannot create the destination directory", dir.string(),
                                    mkdir_errno);
        }
    }
    if (::stat(dir.c_str(), &st) != 0) {
        return make_errno_error("cannot create the destination directory", dir.string(), errno);
    }
    if (!S_ISDIR(st.st_mode)) {
        return make_errno_error("cannot create the destination directory", dir.string(), ENOTDIR);
    }
    return created;
}

}  // namespace

std::filesystem::path default_state_dir() {
    if (const char* dir = std::getenv("RPMIRROR_STATE_DIR"); dir != nullptr && *dir != '\0') {
        return dir;
    }
    if (::geteuid() == 0) {
        return "/var/lib/rpmirror";
    }
    if (const char* xdg = std::getenv("XDG_STATE_HOME"); xdg != nullptr && *xdg == '/') {
        return std::filesystem::path(xdg) / "rpmirror";
    }
    const char* home = std::getenv("HOME");
    return std::filesystem::path(home != nullptr && *home != '\0' ? home : "/tmp") / ".local" /
           "state" / "rpmirror";
}

std::filesystem::path state_entry(const std::filesystem::path& state_dir,
                                  const std::filesystem::path& repo_dir) {
    std::filesystem::path absolute = std::filesystem::absolute(repo_dir).lexically_normal();
    std::string text = absolute.string();
    while (text.size() > 1 && text.back() == '/') {
        text.pop_back();
    }
    std::string name = std::filesystem::path(text).filename().string();
    if (name.empty()) {
        name = "root";
    }
    for (char& c : name) {
        if (c == '/' || static_cast<unsigned char>(c) < 0x20) {
            c = '_';
        }
    }
    return state_dir / "repos" / fmt::format("{}-{:016x}", name, fnv1a(text));
}

std::filesystem::path directory_lock_path(const std::filesystem::path& state_dir, dev_t device,
                                          ino_t inode) {
    return state_dir / "repos" / "by-inode" /
           fmt::format("{}.{}-{}.lock", major(device), minor(device), inode);
}

Result<RunLock> RunLock::acquire(const std::filesystem::path& state_dir,
                                 const std::filesystem::path& repo_dir,
                                 std::optional<std::chrono::seconds> wait, std::stop_token stop,
                                 MissingDirectory missing) {
    const auto deadline = std::chrono::steady_clock::now() + wait.value_or(std::chrono::seconds(0));
    // By spelling first (always in this order, so two runs never wait on each other crosswise).
    const std::filesystem::path by_path = state_entry(state_dir, repo_dir).string() + ".lock";
    auto path_fd = hold_lock_file(by_path, repo_dir, wait, deadline, stop);
    if (!path_fd) {
        return tl::unexpected(std::move(path_fd.error()));
    }
    RunLock lock(std::move(*path_fd), by_path);
    // Then by the directory itself, which must exist for that. A holder that created it removes
    // it again if it is still empty when released: between that holder's open and this one's
    // lock the path may have come to name another directory, so it is looked up again after.
    constexpr int kAttempts = 4;
    for (int attempt = 1;; ++attempt) {
        if (missing == MissingDirectory::Create) {
            auto created = make_missing_directories(repo_dir);
            if (!created) {
                return tl::unexpected(std::move(created.error()));
            }
            lock.created_.insert(lock.created_.end(), created->begin(), created->end());
        }
        const UniqueFd directory(::open(repo_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        struct stat st {};
        if (!directory || ::fstat(directory.get(), &st) != 0) {
            if (errno == ENOENT && missing == MissingDirectory::LockOnlyIfPresent) {
                return lock;
            }
            return make_errno_error("cannot open the repository directory", repo_dir.string(),
                                    errno);
        }
        auto directory_fd =
            hold_lock_file(directory_lock_path(state_dir, st.st_dev, st.st_ino), repo_dir, wait,
                           deadline, stop, DirectoryIdentity{st.st_dev, st.st_ino});
        if (!directory_fd) {
            return tl::unexpected(std::move(directory_fd.error()));
        }
        struct stat now {};
        if (::stat(repo_dir.c_str(), &now) == 0 && now.st_dev == st.st_dev &&
            now.st_ino == st.st_ino) {
            lock.by_inode_ = std::move(*directory_fd);
            return lock;
        }
        if (attempt == kAttempts) {
            return make_error(ErrorCode::Busy,
                              "the repository directory was replaced while it was being locked "
                              "(another rpmirror removing or creating it)",
                              repo_dir.string());
        }
    }
}

RunLock& RunLock::operator=(RunLock&& other) noexcept {
    if (this != &other) {
        remove_created();
        by_path_ = std::move(other.by_path_);
        by_inode_ = std::move(other.by_inode_);
        path_ = std::move(other.path_);
        created_ = std::exchange(other.created_, {});
    }
    return *this;
}

RunLock::~RunLock() {
    remove_created();
}

void RunLock::remove_created() {
    // Innermost first; a directory that holds anything stays (rmdir refuses it), and so do its
    // parents. Still under the lock: the fds close after this.
    for (auto it = created_.rbegin(); it != created_.rend(); ++it) {
        ::rmdir(it->c_str());
    }
    created_.clear();
}

}  // namespace rpmirror::fs
