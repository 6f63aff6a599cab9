#include "download/destination.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <cerrno>
#include <system_error>

#include "download/download.hpp"
#include "fs/beneath.hpp"
#include "fs/tree.hpp"

namespace rpmirror::download {

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
    if (auto made = fs::make_directories(root, "the destination directory"); !made) {
        return tl::unexpected(std::move(made.error()));
    }
    DestinationRoot result;
    result.path_ = root;
    result.root_fd_ = fs::open_directory(root);
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
    auto opened = fs::make_directories_beneath(root_fd_.get(), relative_dir, path_);
    if (!opened) {
        return tl::unexpected(std::move(opened.error()));
    }
    const int fd = opened->get();
    directories_.emplace(key, std::move(*opened));
    return fd;
}

Result<PartFile> DestinationRoot::open_part(const std::filesystem::path& destination,
                                            bool unlinked_once) {
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
    const int fd = fs::create_file_at(part.dir_fd, part.part_name, shown);
    if (fd < 0) {
        const int error = errno;
        if (error == ELOOP) {
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
    if (S_ISREG(st.st_mode)) {
        // Held shared for the download's life (the sink keeps this descriptor): a sync's
        // cleanup of stale .part files (MirrorStore::remove_partials) leaves it alone. Taken
        // after that cleanup unlinked the file: a new one is made.
        // A filesystem without locks (ENOLCK, EOPNOTSUPP) only loses that protection.
        while (::flock(fd, LOCK_SH) != 0 && errno == EINTR) {
        }
        if (::fstat(fd, &st) != 0) {
            return make_errno_error("cannot stat", shown, errno);
        }
        if (st.st_nlink == 0 && !unlinked_once) {
            return open_part(destination, true);
        }
    }
    if (!S_ISREG(st.st_mode)) {
        return make_error(ErrorCode::Unsafe, "exists and is not a regular file", shown);
    }
    part.existing_size = static_cast<std::uint64_t>(st.st_size);
    return part;
}

}  // namespace rpmirror::download
