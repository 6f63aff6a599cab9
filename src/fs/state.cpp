// The state directory and the per-repository run lock.
#include "fs/state.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <thread>

#include <fmt/core.h>

#include "util/fault.hpp"

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

Result<RunLock> RunLock::acquire(const std::filesystem::path& state_dir,
                                 const std::filesystem::path& repo_dir,
                                 std::optional<std::chrono::seconds> wait, std::stop_token stop) {
    const std::filesystem::path path = state_entry(state_dir, repo_dir).string() + ".lock";
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
    const auto deadline = std::chrono::steady_clock::now() + wait.value_or(std::chrono::seconds(0));
    while (try_lock(fd.get()) != 0) {
        if (errno != EAGAIN && errno != EACCES && errno != EINTR) {
            return make_errno_error("cannot lock", path.string(), errno);
        }
        if (!wait || std::chrono::steady_clock::now() >= deadline) {
            const long pid = holder_pid(fd.get());
            return make_error(
                ErrorCode::Busy,
                fmt::format("repository directory {} is being synced by another rpmirror{}{}",
                            repo_dir.string(), pid > 0 ? fmt::format(" (pid {})", pid) : "",
                            wait ? fmt::format(" (waited {} s)", wait->count()) : ""));
        }
        if (stop.stop_requested()) {
            return make_error(ErrorCode::Interrupted, "interrupted while waiting for the lock",
                              repo_dir.string());
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    // The pid only makes the message of a refused run more helpful: on a full disk the lock is
    // held without it.
    const std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd.get(), 0) == 0) {
        (void)::pwrite(fd.get(), pid.data(), pid.size(), 0);
    }
    return RunLock(std::move(fd), path);
}

}  // namespace rpmirror::fs
