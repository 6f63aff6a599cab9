// Paths beneath a root: openat2(RESOLVE_BENEATH) when the kernel has it (Linux 5.6+), else a
// component-by-component walk that follows no symlink.
#include "fs/beneath.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>

#include "fs/fault.hpp"

namespace rpmirror::fs {

namespace {

std::atomic<bool> forced_fallbacks{fault::fallbacks_forced()};

// openat2(2) through syscall(): glibc 2.36 has no wrapper. Retries EAGAIN (a concurrent rename).
int openat2_beneath(int dir_fd, const char* path, std::uint64_t flags, std::uint64_t mode) {
    struct open_how how {};
    how.flags = flags;
    how.mode = mode;
    how.resolve = RESOLVE_BENEATH;
    int fd;
    do {
        fd = static_cast<int>(::syscall(SYS_openat2, dir_fd, path, &how, sizeof(how)));
    } while (fd < 0 && errno == EAGAIN);
    return fd;
}

bool openat2_supported() {
    static const bool supported = [] {
        const int fd = openat2_beneath(AT_FDCWD, ".", O_PATH | O_CLOEXEC, 0);
        if (fd >= 0) {
            ::close(fd);
            return true;
        }
        return errno != ENOSYS && errno != EPERM;  // EPERM: seccomp filters without openat2
    }();
    return supported && !fallbacks_forced();
}

// Without openat2: opens each directory component with O_NOFOLLOW, so no symlink is followed.
int open_components(int root_fd, const std::filesystem::path& relative, int last_flags,
                    mode_t mode) {
    UniqueFd current(::fcntl(root_fd, F_DUPFD_CLOEXEC, 0));
    if (!current) {
        return -1;
    }
    auto component = relative.begin();
    while (component != relative.end()) {
        const std::string name = component->string();
        ++component;
        const bool is_last = component == relative.end();
        if (name.empty() || name == ".") {
            continue;  // "a//b", "a/./b"
        }
        if (name == "..") {
            errno = EXDEV;
            return -1;
        }
        const int flags = is_last ? last_flags : (O_PATH | O_DIRECTORY | O_CLOEXEC);
        UniqueFd next(
            ::openat(current.get(), name.c_str(), flags | O_NOFOLLOW, is_last ? mode : 0));
        if (!next) {
            if (!is_last && errno == ENOTDIR) {
                struct stat st {};
                if (::fstatat(current.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                    S_ISLNK(st.st_mode)) {
                    errno = ELOOP;  // a symlinked directory: not followed
                }
            }
            return -1;
        }
        current = std::move(next);
    }
    return current.release();
}

int open_resolved(int root_fd, const std::filesystem::path& relative, int flags, mode_t mode) {
    if (relative.empty()) {
        return ::fcntl(root_fd, F_DUPFD_CLOEXEC, 0);
    }
    if (openat2_supported()) {
        return openat2_beneath(root_fd, relative.c_str(), static_cast<std::uint64_t>(flags),
                               (flags & O_CREAT) != 0 ? mode : 0);
    }
    return open_components(root_fd, relative, flags, mode);
}

Error unsafe_or_io(std::string_view what, const std::filesystem::path& shown, int error) {
    if (error == EXDEV || error == ELOOP) {
        return Error{ErrorCode::Unsafe, "a symlink in the path leads outside the destination root",
                     shown.string(), error};
    }
    return make_errno_error(std::string(what), shown.string(), error).value();
}

}  // namespace

void force_fallbacks(bool forced) {
    forced_fallbacks.store(forced, std::memory_order_relaxed);
}

bool fallbacks_forced() {
    return forced_fallbacks.load(std::memory_order_relaxed);
}

int open_beneath(int root_fd, const std::filesystem::path& relative, int flags, mode_t mode) {
    return open_resolved(root_fd, relative, flags, mode);
}

UniqueFd open_directory(const std::filesystem::path& path, bool nofollow) {
    return UniqueFd(
        ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0)));
}

UniqueFd open_child_directory(int dir_fd, const std::string& name) {
    return UniqueFd(
        ::openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

Result<UniqueFd> make_directories_beneath(int root_fd, const std::filesystem::path& relative,
                                          const std::filesystem::path& shown_root) {
    constexpr int kDirFlags = O_PATH | O_DIRECTORY | O_CLOEXEC;
    UniqueFd fd(open_resolved(root_fd, relative, kDirFlags, 0));
    if (!fd && errno == ENOENT && !relative.empty()) {
        // Create what is missing, one component at a time, each relative to its parent.
        auto parent = make_directories_beneath(root_fd, relative.parent_path(), shown_root);
        if (!parent) {
            return parent;
        }
        const std::string leaf = relative.filename().string();
        if (::mkdirat(parent->get(), leaf.c_str(), 0755) != 0 && errno != EEXIST) {
            return make_errno_error("cannot create directory", (shown_root / relative).string(),
                                    errno);
        }
        fd.reset(open_resolved(root_fd, relative, kDirFlags, 0));
    }
    if (!fd) {
        return tl::unexpected(unsafe_or_io("cannot open directory", shown_root / relative, errno));
    }
    return fd;
}

int create_file_at(int dir_fd, const std::string& name, std::string_view shown) {
    if (fault::fails(fault::Op::Create, shown)) {
        return -1;
    }
    const int fd = ::openat(dir_fd, name.c_str(),
                            O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0644);
    if (fd >= 0) {
        struct stat st {};
        if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
            ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
        }
    }
    return fd;
}

int rename_at(int dir_fd, const std::string& from, const std::string& to) {
    return fault::renameat(dir_fd, from.c_str(), dir_fd, to.c_str());
}

int unlink_at(int dir_fd, const std::string& name) {
    return fault::unlinkat(dir_fd, name.c_str(), 0);
}

Entry lookup_beneath(int root_fd, const std::filesystem::path& relative) {
    Entry entry;
    const UniqueFd fd(open_resolved(root_fd, relative, O_PATH | O_NOFOLLOW | O_CLOEXEC, 0));
    if (!fd) {
        entry.sys_errno = errno;
        switch (entry.sys_errno) {
            case ENOENT:
            case ENOTDIR:
                entry.kind = EntryKind::Missing;
                break;
            case EXDEV:
            case ELOOP:
                entry.kind = EntryKind::Escapes;
                break;
            default:
                entry.kind = EntryKind::Error;
        }
        return entry;
    }
    if (::fstat(fd.get(), &entry.st) != 0) {
        entry.sys_errno = errno;
        entry.kind = EntryKind::Error;
        return entry;
    }
    if (S_ISREG(entry.st.st_mode)) {
        entry.kind = EntryKind::Regular;
    } else if (S_ISLNK(entry.st.st_mode)) {
        entry.kind = EntryKind::Symlink;
    } else if (S_ISDIR(entry.st.st_mode)) {
        entry.kind = EntryKind::Directory;
    } else {
        entry.kind = EntryKind::Other;
    }
    return entry;
}

UniqueFd open_directory_beneath(int root_fd, const std::filesystem::path& relative) {
    return UniqueFd(open_resolved(root_fd, relative, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0));
}

Result<Removal> remove_beneath(const std::filesystem::path& root,
                               const std::filesystem::path& relative, bool symlinks_too) {
    const UniqueFd root_fd = open_directory(root);
    if (!root_fd) {
        if (errno == ENOENT) {
            return Removal::Missing;
        }
        return make_errno_error("cannot open directory", root.string(), errno);
    }
    const UniqueFd dir_fd = open_directory_beneath(root_fd.get(), relative.parent_path());
    if (!dir_fd) {
        if (errno == ENOENT) {
            return Removal::Missing;
        }
        return make_errno_error("cannot open the directory of", (root / relative).string(), errno);
    }
    const std::string name = relative.filename().string();
    struct stat st {};
    if (::fstatat(dir_fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT) {
            return Removal::Missing;
        }
        return make_errno_error("cannot inspect", (root / relative).string(), errno);
    }
    if (!S_ISREG(st.st_mode) && !(symlinks_too && S_ISLNK(st.st_mode))) {
        return Removal::Kept;
    }
    if (unlink_at(dir_fd.get(), name) != 0) {
        if (errno == ENOENT) {
            return Removal::Missing;
        }
        return make_errno_error("cannot remove", (root / relative).string(), errno);
    }
    return Removal::Removed;
}

bool remove_empty_directory_beneath(const std::filesystem::path& root,
                                    const std::filesystem::path& relative) {
    if (relative.empty() || relative.filename().empty()) {
        return false;
    }
    const UniqueFd root_fd = open_directory(root);
    if (!root_fd) {
        return false;
    }
    const UniqueFd dir_fd = open_directory_beneath(root_fd.get(), relative.parent_path());
    if (!dir_fd) {
        return false;
    }
    return fault::unlinkat(dir_fd.get(), relative.filename().c_str(), AT_REMOVEDIR) == 0;
}

const char* file_kind_name(mode_t mode) {
    if (S_ISLNK(mode)) {
        return "symlink";
    }
    if (S_ISDIR(mode)) {
        return "directory";
    }
    if (S_ISFIFO(mode)) {
        return "FIFO";
    }
    if (S_ISSOCK(mode)) {
        return "socket";
    }
    if (S_ISCHR(mode) || S_ISBLK(mode)) {
        return "device";
    }
    return "not a regular file";
}

}  // namespace rpmirror::fs
