// The disk ObjectStore's file helpers (store/disk_files.hpp).
#include "store/disk_files.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <random>

#include <fmt/core.h>

#include "fs/beneath.hpp"
#include "fs/fault.hpp"
#include "store/local_store.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror::store::disk {

ObjectInfo info_of(const struct stat& st) {
    return ObjectInfo{
        static_cast<std::uint64_t>(st.st_size),
        LocalStore::version_of(fs::timespec_ns(st.st_mtim), static_cast<std::uint64_t>(st.st_ino),
                               fs::timespec_ns(st.st_ctim)),
        static_cast<std::uint64_t>(st.st_nlink), fs::timespec_ns(st.st_mtim)};
}

bool refuses_links(int error) {
    return error == EXDEV || error == EPERM || error == ENOTSUP || error == EOPNOTSUPP ||
           error == EMLINK;
}

// A name for a temporary entry beside `name`, unlikely to collide (".NAME.<infix><random>").
std::string temporary_name(std::string_view name, std::string_view infix) {
    static thread_local std::mt19937_64 random{std::random_device{}()};
    return fmt::format(".{}{}{:06x}", name, infix, random() & 0xffffff);
}

// Removes the entry `name` of the directory `dir_fd` and everything beneath it, never following
// a symlink. Returns the errno of the first failure (0: all gone, or nothing was there).
int remove_all_at(int dir_fd, const std::string& name) {
    struct stat st {};
    if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        return errno == ENOENT ? 0 : errno;
    }
    if (!S_ISDIR(st.st_mode)) {
        return fault::unlinkat(dir_fd, name.c_str(), 0) == 0 || errno == ENOENT ? 0 : errno;
    }
    UniqueFd child = fs::open_child_directory(dir_fd, name);
    if (!child) {
        return errno;
    }
    std::vector<std::string> names;
    {
        DIR* dir = ::fdopendir(::dup(child.get()));
        if (dir == nullptr) {
            return errno;
        }
        while (const dirent* entry = ::readdir(dir)) {
            const std::string_view entry_name = entry->d_name;
            if (entry_name != "." && entry_name != "..") {
                names.emplace_back(entry_name);
            }
        }
        ::closedir(dir);
    }
    int first = 0;
    for (const std::string& entry : names) {
        const int error = remove_all_at(child.get(), entry);
        first = first != 0 ? first : error;
    }
    if (fault::unlinkat(dir_fd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
        first = first != 0 ? first : errno;
    }
    return first;
}

// The entries of the directory open as `dir_fd` (lstat each), "." and ".." left out.
Result<std::vector<std::pair<std::string, struct stat>>> entries_of(int dir_fd,
                                                                    const std::string& shown) {
    DIR* dir = ::fdopendir(::dup(dir_fd));
    if (dir == nullptr) {
        return make_errno_error("cannot read", shown, errno);
    }
    std::vector<std::pair<std::string, struct stat>> entries;
    errno = 0;
    while (const dirent* entry = ::readdir(dir)) {
        const std::string name = entry->d_name;
        if (name == "." || name == "..") {
            continue;
        }
        struct stat st {};
        if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
            entries.emplace_back(name, st);
        }
    }
    ::closedir(dir);
    return entries;
}

// Copies the regular file open as `source` (its stat `st`) into the new file `name` of `to_dir`,
// with its mode and times. `shown` names the destination in errors.
Result<void> copy_bytes(int source, const struct stat& st, int to_dir, const std::string& name,
                        const std::string& shown) {
    const UniqueFd destination(fs::create_file_at(to_dir, name, shown));
    if (!destination) {
        return make_errno_error("cannot create", shown, errno);
    }
    if (::ftruncate(destination.get(), 0) != 0) {
        return make_errno_error("cannot truncate", shown, errno);
    }
    std::vector<char> buffer(1 << 20);
    for (;;) {
        const ssize_t got = ::read(source, buffer.data(), buffer.size());
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got < 0) {
            return make_errno_error("cannot read the source of", shown, errno);
        }
        if (got == 0) {
            break;
        }
        for (ssize_t written = 0; written < got;) {
            const ssize_t result = fault::write(destination.get(), buffer.data() + written,
                                                static_cast<std::size_t>(got - written));
            if (result < 0 && errno != EINTR) {
                return make_errno_error("cannot write", shown, errno);
            }
            written += std::max<ssize_t>(result, 0);
        }
    }
    const std::array<timespec, 2> times{st.st_atim, st.st_mtim};
    if (::fchmod(destination.get(), st.st_mode & 07777) != 0 ||
        ::futimens(destination.get(), times.data()) != 0) {
        return make_errno_error("cannot set the mode and times of", shown, errno);
    }
    return {};
}

Result<void> write_file_at(int dir_fd, const std::string& name, std::string_view bytes,
                           const std::string& shown, bool flush) {
    const UniqueFd fd(fs::create_file_at(dir_fd, name, shown));
    if (!fd || ::ftruncate(fd.get(), 0) != 0) {
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
    if (flush && fault::fsync(fd.get(), shown) != 0) {
        return make_errno_error("cannot flush", shown, errno);
    }
    return {};
}

namespace {

// Makes the new file `name` of `dir_fd` (`shown`) a reflink of the regular file open as `from`
// (its stat `st`): Error{Unsupported} iff the filesystem has none (nothing is left).
Result<void> clone_at(int from, const struct stat& st, const std::string& shown_from, int dir_fd,
                      const std::string& name, const std::string& shown) {
    const UniqueFd destination(fs::create_file_at(dir_fd, name, shown));
    if (!destination) {
        return make_errno_error("cannot create", shown, errno);
    }
    struct stat cloned {};
    if (::ftruncate(destination.get(), 0) != 0 || ::ioctl(destination.get(), FICLONE, from) != 0) {
        const int clone_errno = errno;
        return tl::unexpected(Error{clone_errno == EXDEV || clone_errno == EOPNOTSUPP ||
                                            clone_errno == ENOTSUP || clone_errno == EINVAL ||
                                            clone_errno == ENOTTY || clone_errno == EPERM
                                        ? ErrorCode::Unsupported
                                        : ErrorCode::Io,
                                    "cannot reflink " + shown_from + " to", shown, clone_errno});
    }
    if (::fstat(destination.get(), &cloned) != 0 || cloned.st_size != st.st_size) {
        return make_error(ErrorCode::Corrupt, "the reflink has another size than", shown_from);
    }
    return {};
}

}  // namespace

Result<void> place_at(int from_dir, const std::string& from_name, const std::string& shown_from,
                      const CopyRequest& request, int dir_fd, const std::string& name,
                      const std::string& shown) {
    const UniqueFd from(::openat(from_dir, from_name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    if (!from || ::fstat(from.get(), &st) != 0) {
        if (errno == ELOOP) {
            return make_error(ErrorCode::Unsafe, "not a regular file", shown_from);
        }
        return make_errno_error("cannot open", shown_from, errno);
    }
    if (!S_ISREG(st.st_mode)) {
        return make_error(ErrorCode::Unsafe, "not a regular file", shown_from);
    }
    if (request.pin) {
        const ObjectInfo info = info_of(st);
        if (info.size != request.pin->size || info.version != request.pin->version) {
            return make_error(ErrorCode::Corrupt, "changed since it was recorded (copy refused)",
                              shown_from);
        }
    }
    if (request.mode == CopyMode::Clone) {
        return clone_at(from.get(), st, shown_from, dir_fd, name, shown);
    }
    if (request.mode != CopyMode::Copy) {
        if (::linkat(from_dir, from_name.c_str(), dir_fd, name.c_str(), 0) == 0) {
            // The name linked may have been replaced since it was opened (and its pin checked).
            struct stat linked {};
            if (::fstatat(dir_fd, name.c_str(), &linked, AT_SYMLINK_NOFOLLOW) != 0 ||
                linked.st_dev != st.st_dev || linked.st_ino != st.st_ino) {
                (void)fault::unlinkat(dir_fd, name.c_str(), 0);
                return make_error(ErrorCode::Corrupt, "changed while it was linked (link refused)",
                                  shown_from);
            }
            return {};
        }
        const int link_errno = errno;
        if (request.mode == CopyMode::Link || !refuses_links(link_errno)) {
            return tl::unexpected(
                Error{refuses_links(link_errno) ? ErrorCode::Unsupported : ErrorCode::Io,
                      "cannot hard-link " + shown_from + " to", shown, link_errno});
        }
    }
    if (auto copied = copy_bytes(from.get(), st, dir_fd, name, shown); !copied) {
        return copied;
    }
    // A pinned source written to in place while it was copied is no longer the pinned one.
    struct stat after {};
    if (request.pin &&
        (::fstat(from.get(), &after) != 0 || info_of(after).version != request.pin->version)) {
        (void)fault::unlinkat(dir_fd, name.c_str(), 0);
        return make_error(ErrorCode::Corrupt, "changed while it was copied (copy refused)",
                          shown_from);
    }
    return {};
}

}  // namespace rpmirror::store::disk
