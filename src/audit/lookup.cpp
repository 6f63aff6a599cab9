// Lookups beneath a root: openat2(RESOLVE_BENEATH) when the kernel has it (Linux 5.6+), else a
// component-by-component walk that follows no symlink.
#include "audit/lookup.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>

namespace rpmirror::audit {

namespace {

// openat2(2) through syscall(): glibc 2.36 has no wrapper. Retries EAGAIN (a concurrent rename).
int openat2_beneath(int dir_fd, const char* path, std::uint64_t flags) {
    struct open_how how {};
    how.flags = flags;
    how.resolve = RESOLVE_BENEATH;
    int fd;
    do {
        fd = static_cast<int>(::syscall(SYS_openat2, dir_fd, path, &how, sizeof(how)));
    } while (fd < 0 && errno == EAGAIN);
    return fd;
}

bool openat2_supported() {
    static const bool supported = [] {
        const int fd = openat2_beneath(AT_FDCWD, ".", O_PATH | O_CLOEXEC);
        if (fd >= 0) {
            ::close(fd);
            return true;
        }
        return errno != ENOSYS && errno != EPERM;  // EPERM: seccomp filters without openat2
    }();
    return supported;
}

// Without openat2: opens each directory component with O_NOFOLLOW, so no symlink is followed.
int open_components(int root_fd, const std::filesystem::path& relative, int last_flags) {
    UniqueFd current(::fcntl(root_fd, F_DUPFD_CLOEXEC, 0));
    if (!current) {
        return -1;
    }
    auto component = relative.begin();
    while (component != relative.end()) {
        const std::string name = component->string();
        ++component;
        const bool is_last = component == relative.end();
        const int flags = is_last ? last_flags : (O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        UniqueFd next(::openat(current.get(), name.c_str(), flags | O_NOFOLLOW));
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

int open_beneath(int root_fd, const std::filesystem::path& relative, int flags) {
    if (relative.empty()) {
        return ::fcntl(root_fd, F_DUPFD_CLOEXEC, 0);
    }
    if (openat2_supported()) {
        return openat2_beneath(root_fd, relative.c_str(), static_cast<std::uint64_t>(flags));
    }
    return open_components(root_fd, relative, flags);
}

}  // namespace

Entry lookup_beneath(int root_fd, const std::filesystem::path& relative) {
    Entry entry;
    const UniqueFd fd(open_beneath(root_fd, relative, O_PATH | O_NOFOLLOW | O_CLOEXEC));
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
    return UniqueFd(open_beneath(root_fd, relative, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
}

Result<Removal> remove_beneath(const std::filesystem::path& root,
                               const std::filesystem::path& relative, bool symlinks_too) {
    const UniqueFd root_fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!root_fd) {
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
    if (::unlinkat(dir_fd.get(), name.c_str(), 0) != 0) {
        if (errno == ENOENT) {
            return Removal::Missing;
        }
        return make_errno_error("cannot remove", (root / relative).string(), errno);
    }
    return Removal::Removed;
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

}  // namespace rpmirror::audit
