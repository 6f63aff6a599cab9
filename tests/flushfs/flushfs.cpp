// flushfs: a FUSE passthrough of one directory whose flushes are logged and can be made slower:
// for the tests, which check that what rpmirror vouches for was flushed through a FUSE daemon,
// and for benchmarks that need storage where fsync costs what it costs on network block storage
// (EBS, Persistent Disk), not what a VM's host-cached virtio disk charges.
//
//   flushfs BACKING MOUNTPOINT [--latency-ms=N] [--log=FILE] [-f] [FUSE options]
//
// BACKING must change only through the mount while it is mounted (the kernel caches names and
// attributes). Every fsync, fdatasync and fsyncdir of a file below MOUNTPOINT waits N ms (default 0), then
// flushes the backing file for real, then appends "fsync|fdatasync|fsyncdir PATH MICROSECONDS"
// to FILE before it answers ("setxattr PATH NAME" is logged too). Everything else passes straight
// through to BACKING: data (the kernel's writeback cache batches writes as a block device's page
// cache does), metadata, renames with their flags, links, and extended attributes (librepo's
// checksum cache). syncfs(2) on a FUSE mount never reaches the daemon (Linux forwards it to
// virtiofs only): it returns 0 at once and flushes nothing, so it appears nowhere in the log.
#define FUSE_USE_VERSION 35

#include <fuse.h>
#include <fuse_opt.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace {

struct Options {
    char* backing = nullptr;
    char* log = nullptr;
    int latency_ms = 0;
};

struct State {
    int backing_fd = -1;
    std::chrono::milliseconds latency{0};
    std::FILE* log = nullptr;
    std::mutex log_mutex;
};

State state;

// Paths arrive absolute ("/a/b"); every call works relative to the backing directory's fd.
const char* rel(const char* path) {
    return path[1] == '\0' ? "." : path + 1;
}

int err(int result) {
    return result < 0 ? -errno : result;
}

void* init(fuse_conn_info* conn, fuse_config* config) {
    config->use_ino = 1;
    config->kernel_cache = 1;  // pages stay cached across opens, as on a local filesystem
    // Names and attributes cached as a local filesystem's are: everything changes through the
    // mount (BACKING is not to be changed beside it), so the kernel's copies stay true, and
    // the daemon is asked only for what a disk would be.
    config->entry_timeout = config->attr_timeout = config->negative_timeout = 3600;
    if (conn->capable & FUSE_CAP_WRITEBACK_CACHE) {
        conn->want |= FUSE_CAP_WRITEBACK_CACHE;
    }
    conn->max_write = 1 << 20;
    return nullptr;
}

int getattr(const char* path, struct stat* st, fuse_file_info* fi) {
    if (fi) {
        return err(fstat(static_cast<int>(fi->fh), st));
    }
    return err(fstatat(state.backing_fd, rel(path), st, AT_SYMLINK_NOFOLLOW));
}

int readlink_(const char* path, char* buffer, size_t size) {
    ssize_t n = readlinkat(state.backing_fd, rel(path), buffer, size - 1);
    if (n < 0) {
        return -errno;
    }
    buffer[n] = '\0';
    return 0;
}

struct DirCloser {
    void operator()(DIR* dir) const { closedir(dir); }
};

int readdir_(const char* path, void* buffer, fuse_fill_dir_t fill, off_t, fuse_file_info*,
             fuse_readdir_flags) {
    int fd = openat(state.backing_fd, rel(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        return -errno;
    }
    std::unique_ptr<DIR, DirCloser> dir(fdopendir(fd));
    if (!dir) {
        int error = errno;
        close(fd);
        return -error;
    }
    while (dirent* entry = readdir(dir.get())) {
        struct stat st {};
        st.st_ino = entry->d_ino;
        st.st_mode = static_cast<mode_t>(DTTOIF(entry->d_type));
        if (fill(buffer, entry->d_name, &st, 0, static_cast<fuse_fill_dir_flags>(0))) {
            break;
        }
    }
    return 0;
}

int mknod_(const char* path, mode_t mode, dev_t dev) {
    return err(mknodat(state.backing_fd, rel(path), mode, dev));
}
int mkdir_(const char* path, mode_t mode) {
    return err(mkdirat(state.backing_fd, rel(path), mode));
}
int unlink_(const char* path) {
    return err(unlinkat(state.backing_fd, rel(path), 0));
}
int rmdir_(const char* path) {
    return err(unlinkat(state.backing_fd, rel(path), AT_REMOVEDIR));
}
int symlink_(const char* target, const char* path) {
    return err(symlinkat(target, state.backing_fd, rel(path)));
}
int rename_(const char* from, const char* to, unsigned int flags) {
    return err(renameat2(state.backing_fd, rel(from), state.backing_fd, rel(to), flags));
}
int link_(const char* from, const char* to) {
    return err(linkat(state.backing_fd, rel(from), state.backing_fd, rel(to), 0));
}
int chmod_(const char* path, mode_t mode, fuse_file_info* fi) {
    if (fi) {
        return err(fchmod(static_cast<int>(fi->fh), mode));
    }
    return err(fchmodat(state.backing_fd, rel(path), mode, 0));
}
int chown_(const char* path, uid_t uid, gid_t gid, fuse_file_info* fi) {
    if (fi) {
        return err(fchown(static_cast<int>(fi->fh), uid, gid));
    }
    return err(fchownat(state.backing_fd, rel(path), uid, gid, AT_SYMLINK_NOFOLLOW));
}
int truncate_(const char* path, off_t size, fuse_file_info* fi) {
    if (fi) {
        return err(ftruncate(static_cast<int>(fi->fh), size));
    }
    int fd = openat(state.backing_fd, rel(path), O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        return -errno;
    }
    int result = err(ftruncate(fd, size));
    close(fd);
    return result;
}
int utimens_(const char* path, const timespec times[2], fuse_file_info* fi) {
    if (fi) {
        return err(futimens(static_cast<int>(fi->fh), times));
    }
    return err(utimensat(state.backing_fd, rel(path), times, AT_SYMLINK_NOFOLLOW));
}

// The kernel's writeback cache may read a file opened write-only; open it read-write then.
int open_flags(int flags) {
    if ((flags & O_ACCMODE) == O_WRONLY) {
        flags = (flags & ~O_ACCMODE) | O_RDWR;
    }
    return (flags & ~O_APPEND) | O_CLOEXEC;
}

int create_(const char* path, mode_t mode, fuse_file_info* fi) {
    int fd = openat(state.backing_fd, rel(path), open_flags(fi->flags) | O_CREAT, mode);
    if (fd < 0) {
        return -errno;
    }
    fi->fh = static_cast<uint64_t>(fd);
    return 0;
}
int open_(const char* path, fuse_file_info* fi) {
    int fd = openat(state.backing_fd, rel(path), open_flags(fi->flags));
    if (fd < 0) {
        return -errno;
    }
    fi->fh = static_cast<uint64_t>(fd);
    return 0;
}
int read_(const char*, char* buffer, size_t size, off_t offset, fuse_file_info* fi) {
    return err(static_cast<int>(pread(static_cast<int>(fi->fh), buffer, size, offset)));
}
int write_(const char*, const char* buffer, size_t size, off_t offset, fuse_file_info* fi) {
    return err(static_cast<int>(pwrite(static_cast<int>(fi->fh), buffer, size, offset)));
}
int statfs_(const char*, struct statvfs* st) {
    return err(fstatvfs(state.backing_fd, st));
}
int release_(const char*, fuse_file_info* fi) {
    return err(close(static_cast<int>(fi->fh)));
}

// Appends "WHAT PATH DETAIL" to the log, before the caller's call returns.
void log_line(const char* what, const char* path, const std::string& detail) {
    if (state.log != nullptr) {
        std::lock_guard lock(state.log_mutex);
        std::fprintf(state.log, "%s %s %s\n", what, path == nullptr ? "?" : path, detail.c_str());
        std::fflush(state.log);
    }
}

// The one place a flush happens: the modelled round trip, the real flush, then the log line
// with the microseconds it took.
int flush_backing(const char* what, const char* path, int fd, int datasync) {
    auto start = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(state.latency);
    int result = err(datasync ? fdatasync(fd) : fsync(fd));
    auto waited = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - start);
    log_line(what, path, std::to_string(waited.count()));
    return result;
}
int fsync_(const char* path, int datasync, fuse_file_info* fi) {
    return flush_backing(datasync ? "fdatasync" : "fsync", path, static_cast<int>(fi->fh),
                         datasync);
}
int fsyncdir_(const char* path, int datasync, fuse_file_info*) {
    int fd = openat(state.backing_fd, rel(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        return -errno;
    }
    int result = flush_backing("fsyncdir", path, fd, datasync);
    close(fd);
    return result;
}
int fallocate_(const char*, int mode, off_t offset, off_t length, fuse_file_info* fi) {
    return err(fallocate(static_cast<int>(fi->fh), mode, offset, length));
}

// Extended attributes go through a path: the backing file's, under /proc/self/fd of the
// directory fd (the *at() family has no xattr calls before Linux 6.13's setxattrat).
std::string backing_path(const char* path) {
    return "/proc/self/fd/" + std::to_string(state.backing_fd) + "/" + rel(path);
}
// Logged too ("setxattr PATH NAME"), so a test sees whether a cache entry came after the flush
// of the data it vouches for.
int setxattr_(const char* path, const char* name, const char* value, size_t size, int flags) {
    int result = err(lsetxattr(backing_path(path).c_str(), name, value, size, flags));
    if (result == 0) {
        log_line("setxattr", path, name);
    }
    return result;
}
int getxattr_(const char* path, const char* name, char* value, size_t size) {
    return err(static_cast<int>(lgetxattr(backing_path(path).c_str(), name, value, size)));
}
int listxattr_(const char* path, char* list, size_t size) {
    return err(static_cast<int>(llistxattr(backing_path(path).c_str(), list, size)));
}
int removexattr_(const char* path, const char* name) {
    return err(lremovexattr(backing_path(path).c_str(), name));
}

fuse_operations operations() {
    fuse_operations ops{};
    ops.init = init;
    ops.getattr = getattr;
    ops.readlink = readlink_;
    ops.readdir = readdir_;
    ops.mknod = mknod_;
    ops.mkdir = mkdir_;
    ops.unlink = unlink_;
    ops.rmdir = rmdir_;
    ops.symlink = symlink_;
    ops.rename = rename_;
    ops.link = link_;
    ops.chmod = chmod_;
    ops.chown = chown_;
    ops.truncate = truncate_;
    ops.utimens = utimens_;
    ops.create = create_;
    ops.open = open_;
    ops.read = read_;
    ops.write = write_;
    ops.statfs = statfs_;
    ops.release = release_;
    ops.fsync = fsync_;
    ops.fsyncdir = fsyncdir_;
    ops.fallocate = fallocate_;
    ops.setxattr = setxattr_;
    ops.getxattr = getxattr_;
    ops.listxattr = listxattr_;
    ops.removexattr = removexattr_;
    return ops;
}

const fuse_opt option_spec[] = {
    {"--latency-ms=%d", offsetof(Options, latency_ms), 0},
    {"--log=%s", offsetof(Options, log), 0},
    FUSE_OPT_END,
};

// The first non-option argument is the backing directory; the rest go to FUSE.
int take_backing(void* data, const char* arg, int key, fuse_args*) {
    auto* options = static_cast<Options*>(data);
    if (key == FUSE_OPT_KEY_NONOPT && options->backing == nullptr) {
        options->backing = strdup(arg);
        return 0;
    }
    return 1;
}

}  // namespace

int main(int argc, char** argv) {
    fuse_args args = FUSE_ARGS_INIT(argc, argv);
    Options options;
    if (fuse_opt_parse(&args, &options, option_spec, take_backing) != 0) {
        return 2;
    }
    std::unique_ptr<char, decltype(&std::free)> backing(options.backing, &std::free);
    std::unique_ptr<char, decltype(&std::free)> log(options.log, &std::free);
    if (!backing || options.latency_ms < 0) {
        std::fprintf(stderr,
                     "usage: flushfs BACKING MOUNTPOINT [--latency-ms=N] [--log=FILE] "
                     "[-f] [FUSE options]\n");
        fuse_opt_free_args(&args);
        return 2;
    }
    state.backing_fd = open(backing.get(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (state.backing_fd < 0) {
        std::fprintf(stderr, "flushfs: %s: %s\n", backing.get(), std::strerror(errno));
        fuse_opt_free_args(&args);
        return 1;
    }
    state.latency = std::chrono::milliseconds(options.latency_ms);
    // Opened before the daemon detaches (and changes to /).
    std::unique_ptr<std::FILE, decltype(&std::fclose)> log_file(
        log ? std::fopen(log.get(), "ae") : nullptr, &std::fclose);
    if (log && !log_file) {
        std::fprintf(stderr, "flushfs: %s: %s\n", log.get(), std::strerror(errno));
        fuse_opt_free_args(&args);
        return 1;
    }
    state.log = log_file.get();
    fuse_operations ops = operations();
    int result = fuse_main(args.argc, args.argv, &ops, nullptr);
    fuse_opt_free_args(&args);
    close(state.backing_fd);
    return result;
}
