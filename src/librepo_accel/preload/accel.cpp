// librpmirror-librepo-accel.so: librepo 1.14.5's checksum entry points, computed with rpmirror's
// engine, for stock dnf started with LD_PRELOAD (README.md, "Faster stock dnf").
//
// librepo calls lr_checksum_fd_compare (downloader.c, and from lr_checksum_fd_cmp) and
// lr_checksum_fd_cmp (package_downloader.c, yum.c; libdnf too) through its PLT, so a preloaded
// definition replaces every call. lr_checksum_fd is deliberately not replaced: it is only called
// by librepo's own lr_checksum_fd_compare, which is what a call falls through to, and that
// fall-through must be librepo's code unchanged.
//
// Semantics are librepo 1.14.5's (librepo/checksum.c): the same return values and GError
// (domain lr_checksum_error, codes, messages), the same xattr cache (`user.Librepo.checksum.mtime`
// = st_mtim in ns as "%lli", `user.Librepo.checksum.<type>` = lowercase hex; read into 255 bytes;
// a stale mtime clears every cached type; written only on a match with caching on), and the file
// offset where librepo leaves it (end of file after hashing, untouched on a cache hit). What this
// library cannot serve (an unknown type, a failure of its own, a librepo that does not behave as
// 1.14.5, mode "off") goes to librepo's own function.
//
// Which librepo: a build whose GNU build-id is listed (kVerifiedBuilds, identity.cpp: the project's
// tests passed against it) is served at once; any other is first checked at run time, before its
// first call is served (self_check.hpp: the same calls to librepo's functions and to this
// library's, on a file of the first call's directory), and left alone if it differs.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <dlfcn.h>

#include "checksum/hasher.hpp"
#include "checksum/sigbus_guard.hpp"
#include "fs/durable.hpp"
#include "librepo_accel/librepo_accel.hpp"
#include "librepo_accel/preload/librepo_abi.hpp"
#include "librepo_accel/preload/self_check.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "rpmirror/librepo_accel/librepo_accel.hpp"
#include "util/mapped_file.hpp"
#include "util/unique_fd.hpp"

namespace abi = rpmirror::librepo_abi;

extern "C" {
__attribute__((visibility("default"))) gboolean lr_checksum_fd_compare(
    int type, int fd, const char* expected, gboolean caching, gboolean* matches, gchar** calculated,
    GError** err);
__attribute__((visibility("default"))) gboolean lr_checksum_fd_cmp(int type, int fd,
                                                                   const char* expected,
                                                                   gboolean caching,
                                                                   gboolean* matches, GError** err);
}

namespace rpmirror {
namespace {

constexpr std::size_t kLibrepoBufferSize = 2048;              // librepo 1.14.5 BUFFER_SIZE
constexpr std::size_t kPatchedBufferSize = 128 * 1024;        // librepo PR #295
constexpr std::uint64_t kPatchedMmapLimit = 10 * 128 * 1024;  // PR #296: st_size < 10 * BUFFER_SIZE
constexpr std::size_t kXattrValueSize = 256;                  // librepo reads into char buf[256]
// Deferred mode writes cache entries after one syncfs every this many entries, and at exit. A
// syncfs holds dnf's one thread (and so its downloads) until everything written is on disk:
// with 1,024, a cold reposync of 2,000 packages (3.2 GB) stalled mid-run and took 9.88 s against
// 7.31 s without flushing (bench/librepo_table --profile full). An entry waiting costs ~200 bytes.
constexpr std::size_t kDeferredBatch = 65536;

// ---------------------------------------------------------------------------------------------
// Process-wide set-up: the originals, the mode, the verdict on the librepo in this process.

void* original_function(const char* name, void* own) {
    void* function = ::dlsym(RTLD_NEXT, name);
    if (function == nullptr || function == own) {
        // Loaded with dlopen (a test) rather than preloaded: ask librepo itself.
        if (void* librepo = ::dlopen("librepo.so.0", RTLD_LAZY | RTLD_NOLOAD)) {
            function = ::dlsym(librepo, name);
            ::dlclose(librepo);
        }
    }
    return function == own ? nullptr : function;
}

struct Setup {
    abi::CompareFunction original_compare = nullptr;
    abi::CmpFunction original_cmp = nullptr;
    abi::ErrorQuarkFunction error_quark = nullptr;
    LibrepoAccelMode mode = kDefaultLibrepoAccelMode;
    bool serve = false;              // false: everything falls through
    std::string fallthrough_reason;  // why serve is false
    bool self_check = false;         // serve only once self_check.hpp has passed
    std::string librepo;             // "PATH (build-id ID)", for messages
    UniqueFd log;                    // RPMIRROR_LIBREPO_ACCEL_LOG, O_APPEND
};

void warn(const std::string& message) {
    const std::string line = "rpmirror librepo accelerator: " + message + "\n";
    (void)!::write(STDERR_FILENO, line.data(), line.size());
}

Setup make_setup() {
    Setup setup;
    setup.original_compare = reinterpret_cast<abi::CompareFunction>(original_function(
        "lr_checksum_fd_compare", reinterpret_cast<void*>(&lr_checksum_fd_compare)));
    setup.original_cmp = reinterpret_cast<abi::CmpFunction>(
        original_function("lr_checksum_fd_cmp", reinterpret_cast<void*>(&lr_checksum_fd_cmp)));
    setup.error_quark = reinterpret_cast<abi::ErrorQuarkFunction>(
        original_function("lr_checksum_error_quark", nullptr));
    if (const char* log = std::getenv(kLibrepoAccelLogVariable); log != nullptr && *log != '\0') {
        // Never through a symlink (a log in /tmp, where anyone can plant one), and only into a
        // regular file.
        setup.log.reset(
            ::open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644));
        struct stat st {};
        if (setup.log && (::fstat(setup.log.get(), &st) != 0 || !S_ISREG(st.st_mode))) {
            setup.log.reset();
        }
        if (!setup.log) {
            warn(std::string("not logging: cannot open ") + kLibrepoAccelLogVariable + " " + log +
                 " as a regular file without following a symlink");
        }
    }
    if (const char* name = std::getenv(kLibrepoAccelModeVariable); name != nullptr) {
        const auto mode = parse_librepo_accel_mode(name);
        if (!mode) {
            warn(std::string("unknown mode \"") + name + "\" in " + kLibrepoAccelModeVariable +
                 " (expected off, plain, buffer, mmap, nofsync, full or deferred); checksums are "
                 "left to "
                 "librepo");
            setup.fallthrough_reason = "unknown-mode";
            return setup;
        }
        setup.mode = *mode;
    }
    if (setup.mode == LibrepoAccelMode::Off) {
        setup.fallthrough_reason = "mode-off";
        return setup;
    }
    if (setup.original_compare == nullptr || setup.original_cmp == nullptr ||
        setup.error_quark == nullptr) {
        setup.fallthrough_reason = "no-librepo";
        return setup;
    }
    const auto librepo =
        loaded_object_containing(reinterpret_cast<const void*>(setup.original_compare));
    const std::string id = librepo && !librepo->build_id.empty() ? librepo->build_id : "none";
    setup.librepo =
        (librepo ? librepo->path.string() : std::string("librepo")) + " (build-id " + id + ")";
    const char* forced = std::getenv(kLibrepoAccelSelfCheckVariable);
    setup.self_check = !librepo || find_verified_librepo_build(librepo->build_id) == nullptr ||
                       (forced != nullptr && std::string_view(forced) == "always");
    setup.serve = true;
    return setup;
}

Setup& setup() {
    static Setup instance = make_setup();
    return instance;
}

// True while this thread runs the self-check: a call of librepo's lr_checksum_fd_cmp reaches
// librepo's lr_checksum_fd_compare through this library (its PLT), and must go straight on; and
// nothing is logged, so the log counts dnf's calls only.
thread_local bool checking = false;

void log_event(const std::string& line) {
    if (checking) {
        return;
    }
    const Setup& state = setup();
    if (state.log) {
        const std::string text = line + "\n";
        (void)!::write(state.log.get(), text.data(), text.size());
    }
}

void set_checksum_error(GError** err, int code, const std::string& message) {
    const GQuark domain = setup().error_quark != nullptr
                              ? setup().error_quark()
                              : g_quark_from_static_string(abi::kChecksumErrorDomain);
    g_set_error(err, domain, code, "%s", message.c_str());
}

std::optional<ChecksumType> engine_type(int type) {
    if (type < abi::kChecksumMd5 || type > abi::kChecksumSha512) {
        return std::nullopt;
    }
    return kAllChecksumTypes[type - abi::kChecksumMd5];
}

// ---------------------------------------------------------------------------------------------
// The engines. Each returns the lowercase hex digest of the whole file with the file offset at
// its end (where librepo's read loop leaves it), or nullopt iff it failed (the caller falls
// through to librepo, which reports the failure in its own words).

std::optional<std::string> digest_by_read(int fd, ChecksumType type, std::size_t buffer_size) {
    if (::lseek(fd, 0, SEEK_SET) == -1) {
        return std::nullopt;
    }
    std::vector<std::byte> buffer(buffer_size);
    Hasher hasher(type);
    for (;;) {
        const ssize_t bytes = ::read(fd, buffer.data(), buffer.size());
        if (bytes < 0) {
            return std::nullopt;  // librepo does not retry EINTR either: let it report it
        }
        if (bytes == 0) {
            break;
        }
        hasher.update(buffer.data(), static_cast<std::size_t>(bytes));
    }
    return hasher.finish();
}

// PR #296 as merged: files under 10 * 128 KiB mapped whole and read-ahead, larger ones read.
std::optional<std::string> digest_as_pr296(int fd, ChecksumType type) {
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        return std::nullopt;
    }
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (size == 0 || size >= kPatchedMmapLimit) {
        return digest_by_read(fd, type, kPatchedBufferSize);
    }
    auto mapped = MappedFile::map_for_sequential_read(fd, static_cast<std::size_t>(size));
    if (!mapped) {
        return digest_by_read(fd, type, kPatchedBufferSize);
    }
    Hasher hasher(type);
    const bool complete =
        consume_mapping_guarded(mapped->data(), mapped->size(), mapped->size(),
                                [&](std::size_t offset, std::size_t length) {
                                    hasher.update(mapped->data() + offset, length);
                                });
    if (!complete || ::lseek(fd, static_cast<off_t>(size), SEEK_SET) == -1) {
        return std::nullopt;
    }
    return hasher.finish();
}

// rpmirror's engine with pread into its 256 KiB buffer, OpenSSL EVP fetched once. Not its mmap
// windows: dnf hashes a file right after writing it, from the page cache, where the copy into a
// cache-resident buffer cost less CPU than walking fresh mappings (re-verifying 3.2 GB with
// bench/librepo_table: 2.63 s user with mmap windows, against 1.99 s for the read() of `nofsync`).
std::optional<std::string> digest_full(int fd, ChecksumType type) {
    thread_local FileHasher hasher(HashOptions{.use_cache = false, .method = ReadMethod::Pread});
    auto digest = hasher.hash_fd(fd, type, "fd " + std::to_string(fd));
    if (!digest || ::lseek(fd, static_cast<off_t>(digest->size), SEEK_SET) == -1) {
        return std::nullopt;
    }
    return std::move(digest->hex);
}

std::optional<std::string> compute(LibrepoAccelMode mode, int fd, ChecksumType type) {
    switch (mode) {
        case LibrepoAccelMode::Plain:
            return digest_by_read(fd, type, kLibrepoBufferSize);
        case LibrepoAccelMode::Buffer:
            return digest_by_read(fd, type, kPatchedBufferSize);
        case LibrepoAccelMode::Mmap:
        case LibrepoAccelMode::NoFsync:
            return digest_as_pr296(fd, type);
        case LibrepoAccelMode::Full:
        case LibrepoAccelMode::Deferred:
            return digest_full(fd, type);
        case LibrepoAccelMode::Off:
            break;
    }
    return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// The cache, as librepo 1.14.5 keeps it.

// librepo's XATTR_CHKSUM_PREFIX in this process: 1.14.5's, or 1.19's once the self-check found
// that one the same. Set before the first call is served, never after.
const char* xattr_prefix = abi::kXattrPrefix;

std::string xattr_key(const char* suffix) {
    return std::string(xattr_prefix) + suffix;
}

// fgetxattr into librepo's 256-byte buffer, read as a C string; nullopt iff it fails.
std::optional<std::string> get_librepo_xattr(int fd, const std::string& key) {
    char buffer[kXattrValueSize];
    const ssize_t size = ::fgetxattr(fd, key.c_str(), buffer, sizeof(buffer) - 1);
    if (size == -1) {
        return std::nullopt;
    }
    buffer[size] = '\0';
    return std::string(buffer);
}

void set_librepo_xattrs(int fd, const std::string& mtime_key, const std::string& mtime_text,
                        const std::string& checksum_key, const std::string& digest) {
    (void)::fsetxattr(fd, mtime_key.c_str(), mtime_text.data(), mtime_text.size(), 0);
    (void)::fsetxattr(fd, checksum_key.c_str(), digest.data(), digest.size(), 0);
}

// The absolute path the file open as `fd` was opened by (/proc/self/fd), or nullopt iff there is
// none (an anonymous or unreachable file).
std::optional<std::string> path_of(int fd) {
    char path[4096];
    const std::string link = "/proc/self/fd/" + std::to_string(fd);
    const ssize_t length = ::readlink(link.c_str(), path, sizeof(path) - 1);
    if (length <= 0 || path[0] != '/') {
        return std::nullopt;
    }
    return std::string(path, static_cast<std::size_t>(length));
}

// A cache entry deferred mode has not written yet: written once the file's data is known durable.
struct DeferredEntry {
    std::string path;
    dev_t device = 0;
    ino_t inode = 0;
    off_t size = 0;
    long long mtime_ns = -1;
    std::string checksum_key;
    std::string digest;
};

long long mtime_ns_of(const struct stat& st) {
    return static_cast<long long>(st.st_mtime) * 1000000000LL + st.st_mtim.tv_nsec;
}

// Flushed by its destructor at exit (a static: run by exit(), before the loader unmaps us).
class DeferredCache {
  public:
    DeferredCache() = default;
    DeferredCache(const DeferredCache&) = delete;
    DeferredCache& operator=(const DeferredCache&) = delete;
    ~DeferredCache() { flush(); }

    // Queues `digest` for the file open as `fd` whose fstat was `st` when it was hashed.
    void add(int fd, const struct stat& st, std::string checksum_key, std::string digest) {
        std::optional<std::string> path = path_of(fd);
        if (!path) {
            return;  // no path to find it by later: no cache entry (it is only a cache)
        }
        DeferredEntry entry{std::move(*path), st.st_dev,       st.st_ino,
                            st.st_size,       mtime_ns_of(st), std::move(checksum_key),
                            std::move(digest)};
        std::vector<DeferredEntry> batch;
        {
            const std::lock_guard lock(mutex_);
            if (owner_ == 0) {
                owner_ = ::getpid();
            }
            pending_.push_back(std::move(entry));
            if (pending_.size() >= kDeferredBatch) {
                batch.swap(pending_);
            }
        }
        write_durable(std::move(batch));
    }

    // Writes every queued entry whose file is still the one hashed, after syncfs.
    void flush() {
        std::vector<DeferredEntry> batch;
        {
            const std::lock_guard lock(mutex_);
            if (owner_ != ::getpid()) {
                return;  // a forked child: the entries are its parent's to write
            }
            batch.swap(pending_);
        }
        write_durable(std::move(batch));
    }

  private:
    static bool still_the_hashed_file(int fd, const DeferredEntry& entry) {
        struct stat st {};
        return ::fstat(fd, &st) == 0 && st.st_dev == entry.device && st.st_ino == entry.inode &&
               st.st_size == entry.size && mtime_ns_of(st) == entry.mtime_ns;
    }

    static void write_durable(std::vector<DeferredEntry> batch) {
        if (batch.empty()) {
            return;
        }
        // device -> its files are durable. One syncfs makes every byte written before it durable
        // on its filesystem (all of the batch's files were hashed, and so written, before it);
        // FUSE does not pass a syncfs on to its daemon, so there each file is flushed.
        std::map<dev_t, bool> durable;
        std::set<dev_t> per_file;
        std::vector<std::filesystem::path> to_flush;
        // The entries this batch's flushes cover: found unchanged before them (one that could not
        // be opened then was neither queued for a per-file flush nor is it known to be there).
        std::vector<bool> covered(batch.size(), false);
        for (std::size_t index = 0; index < batch.size(); ++index) {
            const DeferredEntry& entry = batch[index];
            UniqueFd fd(::open(entry.path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
            if (!fd || !still_the_hashed_file(fd.get(), entry)) {
                continue;
            }
            covered[index] = true;
            if (auto [state, first] = durable.try_emplace(entry.device, false); first) {
                if (fs::syncfs_reaches_storage(fd.get())) {
                    state->second = ::syncfs(fd.get()) == 0;
                } else {
                    per_file.insert(entry.device);
                }
            }
            if (per_file.contains(entry.device)) {
                to_flush.push_back(entry.path);
            }
        }
        if (!to_flush.empty()) {
            const bool flushed = fs::flush_files(to_flush).has_value();
            for (const dev_t device : per_file) {
                durable[device] = flushed;
            }
        }
        std::size_t written = 0;
        for (std::size_t index = 0; index < batch.size(); ++index) {
            const DeferredEntry& entry = batch[index];
            const auto state = durable.find(entry.device);
            if (!covered[index] || state == durable.end() || !state->second) {
                continue;
            }
            UniqueFd fd(::open(entry.path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
            // Unchanged since before the flush: the data the digest describes is durable.
            if (!fd || !still_the_hashed_file(fd.get(), entry)) {
                continue;
            }
            set_librepo_xattrs(fd.get(), xattr_key("mtime"), std::to_string(entry.mtime_ns),
                               entry.checksum_key, entry.digest);
            ++written;
        }
        log_event("deferred-cache written=" + std::to_string(written) +
                  " queued=" + std::to_string(batch.size()) +
                  " flushed-per-file=" + std::to_string(to_flush.size()));
    }

    std::mutex mutex_;
    std::vector<DeferredEntry> pending_;
    pid_t owner_ = 0;
};

DeferredCache& deferred_cache() {
    static DeferredCache instance;
    return instance;
}

// lr_checksum_fd_compare, served. Returns nullopt iff the call must go to librepo instead (nothing
// observable has happened then beyond what librepo's own call repeats: a stale cache cleared).
std::optional<gboolean> serve_compare(LibrepoAccelMode mode, ChecksumType type, int fd,
                                      const char* expected, gboolean caching, gboolean* matches,
                                      gchar** calculated, GError** err,
                                      const std::string& function) {
    long long timestamp = -1;
    struct stat st {};
    if (caching && ::fstat(fd, &st) == 0) {
        timestamp = mtime_ns_of(st);
    }
    const std::string timestamp_text = std::to_string(timestamp);  // "%lli"
    const std::string mtime_key = xattr_key("mtime");
    const std::string checksum_key = xattr_key(std::string(checksum_type_name(type)).c_str());
    const std::string type_name(checksum_type_name(type));

    if (caching && timestamp != -1) {
        if (const auto cached_mtime = get_librepo_xattr(fd, mtime_key)) {
            if (*cached_mtime == timestamp_text) {
                if (const auto cached = get_librepo_xattr(fd, checksum_key)) {
                    *matches = std::strcmp(expected, cached->c_str()) == 0 ? TRUE : FALSE;
                    if (calculated != nullptr) {
                        *calculated = g_strdup(cached->c_str());
                    }
                    log_event("served " + function + " " + type_name +
                              " cached matches=" + std::to_string(*matches));
                    return TRUE;
                }
            } else {
                clear_librepo_entries(fd, xattr_prefix);
            }
        }
    }

    const auto digest = compute(mode, fd, type);
    if (!digest) {
        return std::nullopt;
    }
    *matches = std::strcmp(expected, digest->c_str()) == 0 ? TRUE : FALSE;

    const bool per_file_fsync = mode == LibrepoAccelMode::Plain ||
                                mode == LibrepoAccelMode::Buffer || mode == LibrepoAccelMode::Mmap;
    if (per_file_fsync && ::fsync(fd) != 0 && errno != EROFS && errno != EINVAL) {
        set_checksum_error(err, abi::kLreFile,
                           std::string("fsync failed: ") + std::strerror(errno));
        return FALSE;
    }
    std::string detail = "hashed";
    if (caching && *matches && timestamp != -1) {
        if (mode == LibrepoAccelMode::Deferred) {
            deferred_cache().add(fd, st, checksum_key, *digest);
            detail += " cache-deferred";
        } else {
            // Full: the entry vouches only for data on stable storage (librepo fsyncs every file
            // for this; only the files it vouches for need it). fdatasync flushes the data and
            // what is needed to read it back; the entry itself need not survive a crash.
            if (mode == LibrepoAccelMode::Full && ::fdatasync(fd) != 0 && errno != EROFS &&
                errno != EINVAL) {
                set_checksum_error(err, abi::kLreFile,
                                   std::string("fsync failed: ") + std::strerror(errno));
                return FALSE;
            }
            set_librepo_xattrs(fd, mtime_key, timestamp_text, checksum_key, *digest);
            detail += mode == LibrepoAccelMode::Full ? " cache-flushed" : "";
        }
    }
    if (calculated != nullptr) {
        *calculated = g_strdup(digest->c_str());
    }
    log_event("served " + function + " " + type_name + " " + detail + " matches=" +
              std::to_string(*matches) + " mode=" + std::string(librepo_accel_mode_name(mode)));
    return TRUE;
}

// A call the accelerator answers in `mode`; nullopt iff it goes to librepo instead.
std::optional<gboolean> serve(LibrepoAccelMode mode, int type, int fd, const char* expected,
                              gboolean caching, gboolean* matches, gchar** calculated, GError** err,
                              const std::string& function) {
    const auto engine = engine_type(type);
    if (!engine) {
        return std::nullopt;
    }
    *matches = FALSE;
    if (expected == nullptr) {
        set_checksum_error(err, abi::kLreBadFuncArg, "No expected checksum passed");
        return FALSE;
    }
    try {
        return serve_compare(mode, *engine, fd, expected, caching, matches, calculated, err,
                             function);
    } catch (...) {  // NOLINT(bugprone-empty-catch): librepo will do it, and report its own way
    }
    return std::nullopt;
}

// The directory of the file open as `fd`, then the temporary ones: where the self-check may run.
std::vector<std::filesystem::path> check_directories(int fd) {
    std::vector<std::filesystem::path> directories;
    if (const auto path = path_of(fd)) {
        directories.push_back(std::filesystem::path(*path).parent_path());
    }
    if (const char* tmpdir = std::getenv("TMPDIR"); tmpdir != nullptr && *tmpdir == '/') {
        directories.emplace_back(tmpdir);
    }
    directories.emplace_back("/var/tmp");
    directories.emplace_back("/tmp");
    return directories;
}

// Whether the librepo in this process may be served: at once for a listed build, else once the
// self-check, run before the first call is served (next to that call's file), found it the same.
bool librepo_checked(const Setup& state, int fd) {
    struct CheckState {
        std::once_flag once;
        bool same = false;
    };
    static CheckState verdict;
    if (!state.self_check) {
        return true;
    }
    std::call_once(verdict.once, [&] {
        librepo_accel::ChecksumCalls librepo;
        librepo.compare = [&](int type, int file, const char* expected, gboolean caching,
                              gboolean* matches, gchar** calculated,
                              GError** err) -> std::optional<gboolean> {
            return state.original_compare(type, file, expected, caching, matches, calculated, err);
        };
        librepo.cmp = [&](int type, int file, const char* expected, gboolean caching,
                          gboolean* matches, GError** err) -> std::optional<gboolean> {
            return state.original_cmp(type, file, expected, caching, matches, err);
        };
        // Deferred mode writes cache entries later by design; all else is full mode's.
        const LibrepoAccelMode mode =
            state.mode == LibrepoAccelMode::Deferred ? LibrepoAccelMode::Full : state.mode;
        librepo_accel::ChecksumCalls accelerator;
        accelerator.compare = [mode](int type, int file, const char* expected, gboolean caching,
                                     gboolean* matches, gchar** calculated, GError** err) {
            return serve(mode, type, file, expected, caching, matches, calculated, err, "check");
        };
        accelerator.cmp = [mode](int type, int file, const char* expected, gboolean caching,
                                 gboolean* matches, GError** err) {
            return serve(mode, type, file, expected, caching, matches, nullptr, err, "check");
        };
        checking = true;
        const auto started = std::chrono::steady_clock::now();
        // 1.14.5's semantics, then 1.19's (the same but for the xattr names): the first the same.
        using Verdict = librepo_accel::SelfCheckResult::Verdict;
        std::optional<librepo_accel::SelfCheckResult> result;
        for (const char* prefix : {abi::kXattrPrefix, abi::kXattrPrefix119}) {
            xattr_prefix = prefix;
            auto attempt =
                librepo_accel::self_check(librepo, accelerator, check_directories(fd), prefix);
            // Reported: the one the same, else the one that went further.
            if (!result || attempt.verdict == Verdict::Same || attempt.calls > result->calls) {
                result = std::move(attempt);
            }
            if (result->verdict != Verdict::Different) {
                break;
            }
        }
        checking = false;
        const std::chrono::duration<double, std::milli> took =
            std::chrono::steady_clock::now() - started;
        char milliseconds[32];
        std::snprintf(milliseconds, sizeof(milliseconds), "%.1f", took.count());
        verdict.same = result->verdict == Verdict::Same;
        if (!verdict.same) {
            xattr_prefix = abi::kXattrPrefix;  // as reported: every call falls through anyway
        }
        const char* name = verdict.same                            ? "same"
                           : result->verdict == Verdict::Different ? "different"
                                                                   : "impossible";
        log_event(std::string("self-check ") + name + " calls=" + std::to_string(result->calls) +
                  " librepo=" + state.librepo + " xattrs=" + xattr_prefix + "*" +
                  " ms=" + milliseconds + " dir=" + result->directory.string() +
                  (result->detail.empty() ? "" : " detail=" + result->detail));
        if (result->verdict == Verdict::Different) {
            warn(state.librepo +
                 " does not behave as librepo 1.14.5 (or 1.19) in its checksum functions (" +
                 result->detail + "); checksums are left to librepo");
        } else if (result->verdict == Verdict::Impossible) {
            warn(state.librepo + " is not a build this library was verified against, and it " +
                 "could not be checked (" + result->detail + "); checksums are left to librepo");
        }
    });
    return verdict.same;
}

gboolean compare(int type, int fd, const char* expected, gboolean caching, gboolean* matches,
                 gchar** calculated, GError** err, const std::string& function) {
    Setup& state = setup();
    if (checking) {
        // librepo's lr_checksum_fd_cmp, called by the self-check, calling its own compare.
        return state.original_compare(type, fd, expected, caching, matches, calculated, err);
    }
    const auto fall_through = [&](const std::string& reason) -> gboolean {
        log_event("fallthrough " + function + " type=" + std::to_string(type) + " " + reason);
        if (state.original_compare == nullptr) {
            *matches = FALSE;
            set_checksum_error(err, abi::kLreBadFuncArg,
                               "librepo's lr_checksum_fd_compare is not loaded");
            return FALSE;
        }
        return state.original_compare(type, fd, expected, caching, matches, calculated, err);
    };
    if (!state.serve) {
        return fall_through(state.fallthrough_reason);
    }
    if (!engine_type(type)) {
        return fall_through("unknown-type");
    }
    if (!librepo_checked(state, fd)) {
        return fall_through("librepo-differs");
    }
    if (auto served =
            serve(state.mode, type, fd, expected, caching, matches, calculated, err, function)) {
        return *served;
    }
    return fall_through("engine-error");
}

}  // namespace
}  // namespace rpmirror

extern "C" gboolean lr_checksum_fd_compare(int type, int fd, const char* expected, gboolean caching,
                                           gboolean* matches, gchar** calculated, GError** err) {
    return rpmirror::compare(type, fd, expected, caching, matches, calculated, err,
                             "lr_checksum_fd_compare");
}

extern "C" gboolean lr_checksum_fd_cmp(int type, int fd, const char* expected, gboolean caching,
                                       gboolean* matches, GError** err) {
    return rpmirror::compare(type, fd, expected, caching, matches, nullptr, err,
                             "lr_checksum_fd_cmp");
}
