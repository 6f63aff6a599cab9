// Whole files written at once, atomic replacement, flushing.
#include "fs/durable.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <string>

#include "util/fault.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror::fs {

namespace {

// Writes all of `contents` to `fd`, retrying short writes and EINTR. Returns 0, or -1 with errno.
int write_all(int fd, std::string_view contents) {
    for (std::size_t written = 0; written < contents.size();) {
        const ssize_t result =
            fault::write(fd, contents.data() + written, contents.size() - written);
        if (result < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -1;
        }
        written += static_cast<std::size_t>(result);
    }
    return 0;
}

}  // namespace

Result<std::string> read_file(const std::filesystem::path& path) {
    std::ifstream stream(path, std::ios::binary);
    if (!stream) {
        return make_errno_error("cannot read", path.string(), errno);
    }
    std::ostringstream contents;
    contents << stream.rdbuf();
    if (stream.bad()) {
        return make_errno_error("cannot read", path.string(), errno);
    }
    return contents.str();
}

Result<void> write_file(const std::filesystem::path& path, std::string_view contents) {
    UniqueFd fd(
        fault::fails(fault::Op::Create, path.string())
            ? -1
            : ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644));
    if (!fd) {
        return make_errno_error("cannot create", path.string(), errno);
    }
    if (write_all(fd.get(), contents) != 0) {
        return make_errno_error("cannot write", path.string(), errno);
    }
    return {};
}

Result<void> replace_file(const std::filesystem::path& path, std::string_view contents) {
    const std::filesystem::path temporary = path.string() + ".tmp";
    if (auto written = write_file(temporary, contents); !written) {
        ::unlink(temporary.c_str());
        return written;
    }
    if (fault::rename(temporary.c_str(), path.c_str()) != 0) {
        const int rename_errno = errno;
        ::unlink(temporary.c_str());
        return make_errno_error("cannot replace", path.string(), rename_errno);
    }
    return {};
}

Result<void> flush_filesystem(const std::filesystem::path& directory) {
    const UniqueFd fd(
        ::open(directory.empty() ? "." : directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd && errno == ENOENT) {
        return {};  // nothing was written there
    }
    if (!fd || fault::syncfs(fd.get(), directory.string()) != 0) {
        return make_errno_error("cannot flush the filesystem", directory.string(), errno);
    }
    return {};
}

Result<void> sync_directory(int dir_fd, const std::filesystem::path& shown) {
    if (fault::fsync(dir_fd, shown.string()) != 0) {
        return make_errno_error("cannot make the changes durable in", shown.string(), errno);
    }
    return {};
}

}  // namespace rpmirror::fs
