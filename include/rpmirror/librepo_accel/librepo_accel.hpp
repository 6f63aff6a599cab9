// What `rpmirror exec` and the preloadable librepo accelerator (librpmirror-librepo-accel.so,
// src/librepo_accel/preload/) share: the accelerator's modes, where the library is installed, and
// which librepo builds its semantics were verified against.
//
// librepo exports no version function and no symbol versions (Debian's librepo.so.0 1.14.5-3
// versions every symbol as "Base"), so the only thing that pins down the exact checksum semantics
// in a process is the binary itself: its GNU build-id (a hash over the linked object, written by
// the linker into a PT_NOTE segment). A build is "verified" iff its build-id is in
// kVerifiedLibrepoBuilds, i.e. the tests in tests/integration/librepo_accel passed against it;
// the accelerator serves such a build at once. Any other build it checks at run time, before
// serving its first call (src/librepo_accel/preload/self_check.hpp), and serves it only if its
// checksum functions behave as 1.14.5's.
#pragma once

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "rpmirror/util/error.hpp"

namespace rpmirror {

// The accelerator's file name (installed under <libdir>/rpmirror/, built next to `rpmirror`).
inline constexpr std::string_view kLibrepoAccelLibraryName = "librpmirror-librepo-accel.so";

// The environment variables the accelerator reads.
inline constexpr const char* kLibrepoAccelModeVariable = "RPMIRROR_LIBREPO_ACCEL";
inline constexpr const char* kLibrepoAccelLogVariable = "RPMIRROR_LIBREPO_ACCEL_LOG";
// "always": check at run time even a listed librepo build before serving it (see below).
inline constexpr const char* kLibrepoAccelSelfCheckVariable = "RPMIRROR_LIBREPO_ACCEL_SELF_CHECK";
// Overrides where `rpmirror exec` looks for the library.
inline constexpr const char* kLibrepoAccelPathVariable = "RPMIRROR_LIBREPO_ACCEL_LIBRARY";

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
// as librepo's own fsync (bench/librepo_table, doc/exec.md); the default keeps the safe one (no
// entry for data a crash could lose) and lets an entry appear at exit. Full keeps both.
inline constexpr LibrepoAccelMode kDefaultLibrepoAccelMode = LibrepoAccelMode::Deferred;

// Returns the mode named `name` ("off", "plain", "buffer", "mmap", "nofsync", "full",
// "deferred"), or nullopt
// iff it names none.
std::optional<LibrepoAccelMode> parse_librepo_accel_mode(std::string_view name);

// Returns the name of `mode` as parse_librepo_accel_mode accepts it.
std::string_view librepo_accel_mode_name(LibrepoAccelMode mode);

// A librepo build whose checksum semantics the accelerator reproduces (tests passed against it).
struct VerifiedLibrepoBuild {
    std::string_view build_id;     // GNU build-id, lowercase hex
    std::string_view description;  // "librepo 1.14.5-3 (Debian 12, amd64)"
};

// Every verified build.
std::span<const VerifiedLibrepoBuild> verified_librepo_builds();

// Returns the verified build whose build-id is `build_id`, or nullptr iff it is none.
const VerifiedLibrepoBuild* find_verified_librepo_build(std::string_view build_id);

// A shared object mapped into this process.
struct LoadedObject {
    std::filesystem::path path;  // as the dynamic loader recorded it
    std::string build_id;        // lowercase hex; empty iff the object has no GNU build-id note
};

// Returns the object mapped into this process that contains `address` (e.g. a function obtained
// with dlsym), read from its program headers in memory (not from the file, which may have been
// replaced since it was loaded). Returns Error{NotFound} iff no loaded object contains it.
Result<LoadedObject> loaded_object_containing(const void* address);

// Loads librepo.so.0 the way the dynamic loader would for a program started with this process's
// environment (LD_LIBRARY_PATH, ld.so.cache), identifies it, and unloads it again.
// Returns Error{NotFound} naming librepo.so.0 and dlerror() iff it cannot be loaded.
Result<LoadedObject> find_system_librepo();

// Returns the accelerator library `rpmirror exec` preloads: $RPMIRROR_LIBREPO_ACCEL_LIBRARY if set,
// else kLibrepoAccelLibraryName beside `executable` (a build tree), else in
// `<executable's dir>/../<install libdir>/rpmirror/` (an installed tree). Returns Error{NotFound}
// listing every place tried iff none holds a regular file.
Result<std::filesystem::path> find_librepo_accel_library(const std::filesystem::path& executable);

}  // namespace rpmirror
