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
// serving its first call (preload/self_check.hpp), and serves it only if its
// checksum functions behave as 1.14.5's.
#pragma once

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "rpmirror/librepo_accel/librepo_accel.hpp"

namespace rpmirror {

// The environment variables the accelerator reads besides kLibrepoAccelModeVariable.
inline constexpr const char* kLibrepoAccelLogVariable = "RPMIRROR_LIBREPO_ACCEL_LOG";
// "always": check at run time even a listed librepo build before serving it (see above).
inline constexpr const char* kLibrepoAccelSelfCheckVariable = "RPMIRROR_LIBREPO_ACCEL_SELF_CHECK";
// Overrides where `rpmirror exec` looks for the library.
inline constexpr const char* kLibrepoAccelPathVariable = "RPMIRROR_LIBREPO_ACCEL_LIBRARY";

// The accelerator's file name (installed under <libdir>/rpmirror/, built next to `rpmirror`).
inline constexpr std::string_view kLibrepoAccelLibraryName = "librpmirror-librepo-accel.so";

// A librepo build whose checksum semantics the accelerator reproduces (tests passed against it).
struct VerifiedLibrepoBuild {
    std::string_view build_id;     // GNU build-id, lowercase hex
    std::string_view description;  // "librepo 1.14.5-3 (Debian 12, amd64)"
};

// Every verified build.
std::span<const VerifiedLibrepoBuild> verified_librepo_builds();

// Returns the verified build whose build-id is `build_id`, or nullptr iff it is none.
const VerifiedLibrepoBuild* find_verified_librepo_build(std::string_view build_id);

// Returns the object mapped into this process that contains `address` (e.g. a function obtained
// with dlsym), read from its program headers in memory (not from the file, which may have been
// replaced since it was loaded). Returns Error{NotFound} iff no loaded object contains it.
Result<LoadedObject> loaded_object_containing(const void* address);

}  // namespace rpmirror
