// What `rpmirror exec` needs to preload the librepo accelerator (librpmirror-librepo-accel.so):
// its modes, where the library is installed, and the system's librepo it would accelerate.
#pragma once

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "rpmirror/util/error.hpp"

namespace rpmirror {

// The environment variable that chooses the accelerator's mode (parse_librepo_accel_mode).
inline constexpr const char* kLibrepoAccelModeVariable = "RPMIRROR_LIBREPO_ACCEL";

// How the accelerator computes a checksum. Each mode adds one idea of the librepo patches the
// project grew from to the previous one (the benchmark table's rows):
enum class LibrepoAccelMode {
    Off,      // every call goes to librepo's own function
    Plain,    // librepo 1.14.5's algorithm re-done: read() 2 KiB at a time, fsync per file
    Buffer,   // + a 128 KiB buffer (librepo PR #295)
    Mmap,     // + mmap(MAP_POPULATE) + madvise for files under 1.25 MiB, as PR #296 merged
    NoFsync,  // + no fsync per file (PR #297): the cache entry is written unsynced, as upstream
    // rpmirror's engine (mmap/pread, EVP), no fsync of a file whose cache entry is not written;
    // a file whose entry is written is fdatasync'ed first, and the entry is there when the call
    // returns: librepo's two promises (visible at once; never vouching for data a crash could
    // lose) at the cost of one flush per cached file.
    Full,
    // rpmirror's engine, cache entries queued and written after one syncfs of their filesystem
    // (every 1,024 entries and at exit): no flush per file, durable entries, but an entry is not
    // there when the call returns (librepo's own checksum tests fail on that).
    Deferred,
};

// Deferred: both of librepo's promises hold only with a flush per cached file, which costs as much
// as librepo's own fsync (doc/exec.md); the default keeps the safe one (no
// entry for data a crash could lose) and lets an entry appear at exit. Full keeps both.
inline constexpr LibrepoAccelMode kDefaultLibrepoAccelMode = LibrepoAccelMode::Deferred;

// Returns the mode named `name` ("off", "plain", "buffer", "mmap", "nofsync", "full",
// "deferred"), or nullopt iff it names none.
std::optional<LibrepoAccelMode> parse_librepo_accel_mode(std::string_view name);

// Returns the name of `mode` as parse_librepo_accel_mode accepts it.
std::string_view librepo_accel_mode_name(LibrepoAccelMode mode);

// A shared object mapped into this process.
struct LoadedObject {
    std::filesystem::path path;  // as the dynamic loader recorded it
    std::string build_id;        // lowercase hex; empty iff the object has no GNU build-id note
};

// Loads librepo.so.0 the way the dynamic loader would for a program started with this process's
// environment (LD_LIBRARY_PATH, ld.so.cache), identifies it, and unloads it again.
// Returns Error{NotFound} naming librepo.so.0 and dlerror() iff it cannot be loaded.
Result<LoadedObject> find_system_librepo();

// Returns the accelerator library `rpmirror exec` preloads: $RPMIRROR_LIBREPO_ACCEL_LIBRARY if set,
// else librpmirror-librepo-accel.so beside `executable` (a build tree), else in
// `<executable's dir>/../<install libdir>/rpmirror/` (an installed tree). Returns Error{NotFound}
// listing every place tried iff none holds a regular file.
Result<std::filesystem::path> find_librepo_accel_library(const std::filesystem::path& executable);

}  // namespace rpmirror
