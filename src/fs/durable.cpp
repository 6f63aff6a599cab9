// Whole files written at once, atomic replacement, flushing.
#include "fs/durable.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "fs/fault.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror::fs {

namespace {

// The oldest change a FUSE flush still fsyncs: the process's start less 10 minutes, for the
// clock of a network filesystem's server. Set when the library is loaded.
const std::int64_t kChangedSince = [] {
    timespec now{};
    ::clock_gettime(CLOCK_REALTIME, &now);
    return static_cast<std::int64_t>(now.tv_sec) - 600;
}();

bool changed_recently(const struct stat& st) {
    return std::max<std::int64_t>(st.st_ctim.tv_sec, st.st_mtim.tv_sec) >= kChangedSince;
}

// What a file looked like when this process flushed it; a FUSE flush skips it while it still
// does (a sync flushes the packages, then the repository's metadata beneath the same directory).
struct FlushedAs {
    off_t size;
    std::int64_t mtime_ns;
    std::int64_t ctime_ns;
    bool operator==(const FlushedAs&) const = default;
};

FlushedAs flushed_as(const struct stat& st) {
    const auto ns = [](const timespec& t) {
        return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
    };
    return {st.st_size, ns(st.st_mtim), ns(st.st_ctim)};
}

std::mutex flushed_mutex;
std::map<std::pair<dev_t, ino_t>, FlushedAs> flushed_files;

bool flushed_already(const struct stat& st) {
    const std::lock_guard lock(flushed_mutex);
    const auto it = flushed_files.find({st.st_dev, st.st_ino});
    return it != flushed_files.end() && it->second == flushed_as(st);
}

// Collects, beneath the directory open as `dir_fd` (shown as `shown`), every file and directory
// changed recently, the directories after what they hold. Symlinks are neither followed nor
// flushed; entries that vanish meanwhile are skipped. Returns Error{Io} iff a directory cannot
// be read.
Result<void> collect_changed(int dir_fd, const std::filesystem::path& shown,
                             std::vector<std::filesystem::path>& out) {
    const int fd = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        return make_errno_error("cannot open directory", shown.string(), errno);
    }
    const std::unique_ptr<DIR, DirCloser> dir(::fdopendir(fd));
    if (!dir) {
        const int error = errno;
        ::close(fd);
        return make_errno_error("cannot read directory", shown.string(), error);
    }
    for (;;) {
        errno = 0;  // before every readdir: a `continue` below may leave an fstatat's errno
        const dirent* entry = ::readdir(dir.get());
        if (entry == nullptr) {
            break;
        }
        const std::string_view name = entry->d_name;
        if (name == "." || name == "..") {
            continue;
        }
        struct stat st {};
        if (::fstatat(::dirfd(dir.get()), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            continue;
        }
        const std::filesystem::path path = shown / name;
        if (S_ISDIR(st.st_mode)) {
            const UniqueFd child(::openat(::dirfd(dir.get()), entry->d_name,
                                          O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            if (child) {
                if (auto done = collect_changed(child.get(), path, out); !done) {
                    return done;
                }
            }
        } else if (S_ISREG(st.st_mode) && changed_recently(st) && !flushed_already(st)) {
            out.push_back(path);
        }
    }
    if (errno != 0) {
        return make_errno_error("cannot read directory", shown.string(), errno);
    }
    struct stat self {};
    if (::fstat(::dirfd(dir.get()), &self) == 0 && changed_recently(self) &&
        !flushed_already(self)) {
        out.push_back(shown);
    }
    return {};
}

}  // namespace

Result<void> flush_files(const std::vector<std::filesystem::path>& paths) {
    std::atomic<std::size_t> next{0};
    std::mutex mutex;
    std::optional<Error> first;
    auto work = [&] {
        for (std::size_t i = next++; i < paths.size(); i = next++) {
            const UniqueFd fd(::open(paths[i].c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
            if (!fd && errno == ENOENT) {
                continue;
            }
            // The state before the flush is what the flush covers: a write landing after it
            // changes the file again, and the next walk flushes it again.
            struct stat st {};
            const bool stated = fd && ::fstat(fd.get(), &st) == 0;
            int flushed = -1;
            if (fd) {
                do {  // a FUSE request is interruptible
                    flushed = fault::fsync(fd.get(), paths[i].string());
                } while (flushed != 0 && errno == EINTR);
            }
            if (flushed != 0) {
                const int error = errno;
                const std::lock_guard lock(mutex);
                if (!first) {
                    first = Error{ErrorCode::Io, "cannot flush", paths[i].string(), error};
                }
            } else if (stated) {
                const std::lock_guard lock(flushed_mutex);
                flushed_files.insert_or_assign({st.st_dev, st.st_ino}, flushed_as(st));
            }
        }
    };
    {
        std::vector<std::jthread> threads;
        const std::size_t count = std::min<std::size_t>(16, paths.size());
        try {
            for (std::size_t t = 1; t < count; ++t) {
                threads.emplace_back(work);
            }
        } catch (const std::system_error&) {
            // No more threads (a pids limit): the ones started and this one do the rest.
        }
        work();
    }
    if (first) {
        return tl::unexpected(std::move(*first));
    }
    return {};
}

bool syncfs_reaches_storage(int fd) {
    struct statfs info {};
    return ::fstatfs(fd, &info) != 0 || info.f_type != FUSE_SUPER_MAGIC;
}

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

Result<void> write_all(int fd, std::string_view bytes, std::string_view shown) {
    while (!bytes.empty()) {
        const ssize_t written = fault::write(fd, bytes.data(), bytes.size());
        if (written < 0) {
            if (errno == EINTR) {
                continue;
            }
            return make_errno_error("cannot write", std::string(shown), errno);
        }
        bytes.remove_prefix(static_cast<std::size_t>(written));
    }
    return {};
}

Result<void> write_file(const std::filesystem::path& path, std::string_view contents) {
    UniqueFd fd(
        fault::fails(fault::Op::Create, path.string())
            ? -1
            : ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644));
    if (!fd) {
        return make_errno_error("cannot create", path.string(), errno);
    }
    return write_all(fd.get(), contents, path.string());
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
    if (fd && !syncfs_reaches_storage(fd.get())) {
        std::vector<std::filesystem::path> changed;
        if (auto collected =
                collect_changed(fd.get(), directory.empty() ? "." : directory, changed);
            !collected) {
            return collected;
        }
        return flush_files(changed);
    }
    if (!fd || fault::syncfs(fd.get(), directory.string()) != 0) {
        return make_errno_error("cannot flush the filesystem", directory.string(), errno);
    }
    return {};
}

Result<void> flush_filesystems(const std::vector<std::filesystem::path>& directories) {
    std::set<dev_t> flushed;
    for (const std::filesystem::path& directory : directories) {
        const UniqueFd fd(::open(directory.empty() ? "." : directory.c_str(),
                                 O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        struct stat st {};
        if (!fd || ::fstat(fd.get(), &st) != 0) {
            continue;  // nothing was written there
        }
        // One syncfs flushes a whole filesystem; a FUSE walk only the directory walked.
        if (syncfs_reaches_storage(fd.get()) && !flushed.insert(st.st_dev).second) {
            continue;
        }
        if (auto done = flush_filesystem(directory); !done) {
            return done;
        }
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
