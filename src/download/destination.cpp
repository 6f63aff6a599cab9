#include "download/destination.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "rpmirror/download.hpp"
#include "util/fault.hpp"

namespace rpmirror::download {
namespace {

// openat2(2) through syscall(): glibc 2.36 has no wrapper.
int openat2_beneath(int dir_fd, const char* path, std::uint64_t flags, std::uint64_t mode,
                    std::uint64_t resolve) {
    struct open_how how {};
    how.flags = flags;
    how.mode = mode;
    how.resolve = resolve;
    return static_cast<int>(::syscall(SYS_openat2, dir_fd, path, &how, sizeof(how)));
}

bool openat2_supported() {
    static const bool supported = [] {
        const int fd = openat2_beneath(AT_FDCWD, ".", O_PATH | O_CLOEXEC, 0, 0);
        if (fd >= 0) {
            ::close(fd);
            return true;
        }
        return errno != ENOSYS && errno != EPERM;  // EPERM: seccomp filters without openat2
    }();
    return supported;
}

// Opens `relative` (no ".." left after check_destination_path) below `base_fd`.
// With openat2: RESOLVE_BENEATH (symlinks inside the root are followed, escaping ones fail with
// EXDEV). Without it: one component at a time with O_NOFOLLOW (no symlink is followed at all).
int open_beneath(int base_fd, const std::string& relative, int flags, mode_t mode) {
    if (openat2_supported()) {
        int fd;
        do {
            fd = openat2_beneath(base_fd, relative.c_str(), static_cast<std::uint64_t>(flags),
                                 (flags & O_CREAT) != 0 ? mode : 0, RESOLVE_BENEATH);
        } while (fd < 0 && errno == EAGAIN);
        return fd;
    }
    return ::openat(base_fd, relative.c_str(), flags | O_NOFOLLOW, mode);
}

bool is_unsafe_errno(int error) {
    return error == EXDEV || error == ELOOP;
}

}  // namespace

Result<void> check_destination_path(const std::filesystem::path& destination) {
    const std::string text = destination.string();
    if (text.empty() || destination.is_absolute()) {
        return make_error(ErrorCode::BadInput, "destination must be a relative path", text);
    }
    for (const auto& component : destination) {
        if (component == ".." || component == ".") {
            return make_error(ErrorCode::Unsafe, "destination has a '.' or '..' component", text);
        }
    }
    const std::string name = destination.filename().string();
    if (name.empty() || text.back() == '/') {
        return make_error(ErrorCode::BadInput, "destination has no file name", text);
    }
    if (name.size() > 5 && name.front() == '.' && name.ends_with(".part")) {
        return make_error(ErrorCode::BadInput, "destination is itself a .part file name", text);
    }
    return {};
}

Result<DestinationRoot> DestinationRoot::open(const std::filesystem::path& root) {
    std::error_code ec;
    std::filesystem::create_directories(root, ec);
    if (ec) {
        return make_errno_error("cannot create the destination directory", root.string(),
                                ec.value());
    }
    DestinationRoot result;
    result.path_ = root;
    result.root_fd_.reset(::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!result.root_fd_) {
        return make_errno_error("cannot open the destination directory", root.string(), errno);
    }
    return result;
}

Result<int> DestinationRoot::directory_fd(const std::filesystem::path& relative_dir) {
    const std::string key = relative_dir.string();
    if (key.empty()) {
        return root_fd_.get();
    }
    if (auto found = directories_.find(key); found != directories_.end()) {
        return found->second.get();
    }
    constexpr int kDirFlags = O_PATH | O_DIRECTORY | O_CLOEXEC;
    int fd = open_beneath(root_fd_.get(), key, kDirFlags, 0);
    if (fd < 0 && errno == ENOENT) {
        // Create what is missing, one component at a time, each relative to its parent.
        auto parent = directory_fd(relative_dir.parent_path());
        if (!parent) {
            return tl::unexpected(parent.error());
        }
        const std::string leaf = relative_dir.filename().string();
        if (::mkdirat(*parent, leaf.c_str(), 0755) != 0 && errno != EEXIST) {
            return make_errno_error("cannot create directory", (path_ / relative_dir).string(),
                                    errno);
        }
        fd = open_beneath(root_fd_.get(), key, kDirFlags, 0);
    }
    if (fd < 0) {
        const int error = errno;
        if (is_unsafe_errno(error)) {
            return make_error(ErrorCode::Unsafe,
                              "a symlink in the path leads outside the destination root",
                              (path_ / relative_dir).string(), error);
        }
        return make_errno_error("cannot open directory", (path_ / relative_dir).string(), error);
    }
    directories_.emplace(key, UniqueFd(fd));
    return fd;
}

Result<PartFile> DestinationRoot::open_part(const std::filesystem::path& destination) {
    if (auto checked = check_destination_path(destination); !checked) {
        return tl::unexpected(checked.error());
    }
    auto dir = directory_fd(destination.parent_path());
    if (!dir) {
        return tl::unexpected(dir.error());
    }
    PartFile part;
    part.dir_fd = *dir;
    part.final_name = destination.filename().string();
    part.part_name = part_file_name(part.final_name);
    const std::string shown = (path_ / destination.parent_path() / part.part_name).string();
    // The last component is never followed: O_NOFOLLOW fails with ELOOP on a symlink.
    const int fd = fault::fails(fault::Op::Create, shown)
                       ? -1
                       : open_beneath(part.dir_fd, part.part_name,
                                      O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0644);
    if (fd < 0) {
        const int error = errno;
        if (is_unsafe_errno(error)) {
            return make_error(ErrorCode::Unsafe, "refusing to write through a symlink", shown,
                              error);
        }
        return make_errno_error("cannot open", shown, error);
    }
    part.fd.reset(fd);
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        return make_errno_error("cannot stat", shown, errno);
    }
    if (!S_ISREG(st.st_mode)) {
        return make_error(ErrorCode::Unsafe, "exists and is not a regular file", shown);
    }
    // O_NONBLOCK only guarded the open against a planted FIFO; regular files ignore it.
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    part.existing_size = static_cast<std::uint64_t>(st.st_size);
    return part;
}

}  // namespace rpmirror::download
