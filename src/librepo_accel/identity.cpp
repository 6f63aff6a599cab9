// Modes, verified librepo builds, build-ids of loaded objects, and where the accelerator lives.
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "checksum/evp.hpp"
#include "librepo_accel/librepo_accel.hpp"
#include "rpmirror/librepo_accel/librepo_accel.hpp"

#ifndef RPMIRROR_INSTALL_LIBDIR
#define RPMIRROR_INSTALL_LIBDIR "lib"
#endif

namespace rpmirror {

namespace {

constexpr std::array<std::pair<LibrepoAccelMode, std::string_view>, 7> kModeNames = {{
    {LibrepoAccelMode::Off, "off"},
    {LibrepoAccelMode::Plain, "plain"},
    {LibrepoAccelMode::Buffer, "buffer"},
    {LibrepoAccelMode::Mmap, "mmap"},
    {LibrepoAccelMode::NoFsync, "nofsync"},
    {LibrepoAccelMode::Full, "full"},
    {LibrepoAccelMode::Deferred, "deferred"},
}};

// Verified with tests/integration/librepo_accel (every test passes with the build loaded).
constexpr std::array<VerifiedLibrepoBuild, 1> kVerifiedBuilds = {{
    {"21b5b2d9b432f337ab5481d244d9633a11797eb2", "librepo 1.14.5-3 (Debian 12, amd64)"},
}};

// The GNU build-id in the PT_NOTE segment [notes, notes + size), or empty iff there is none.
std::string build_id_in_notes(const unsigned char* notes, std::size_t size) {
    std::size_t at = 0;
    while (at + sizeof(ElfW(Nhdr)) <= size) {
        ElfW(Nhdr) header{};
        std::memcpy(&header, notes + at, sizeof(header));
        const std::size_t name_at = at + sizeof(header);
        const std::size_t desc_at = name_at + ((header.n_namesz + 3) & ~std::size_t{3});
        const std::size_t next = desc_at + ((header.n_descsz + 3) & ~std::size_t{3});
        if (next > size || desc_at + header.n_descsz > size) {
            return {};
        }
        if (header.n_type == NT_GNU_BUILD_ID && header.n_namesz == 4 &&
            std::memcmp(notes + name_at, "GNU", 4) == 0) {
            return to_hex(std::span<const unsigned char>(notes + desc_at, header.n_descsz));
        }
        at = next;
    }
    return {};
}

struct Search {
    std::uintptr_t address = 0;
    std::optional<LoadedObject> found;
};

int visit_object(struct dl_phdr_info* info, std::size_t /*size*/, void* data) {
    auto* search = static_cast<Search*>(data);
    bool contains = false;
    for (ElfW(Half) index = 0; index < info->dlpi_phnum && !contains; ++index) {
        const ElfW(Phdr)& segment = info->dlpi_phdr[index];
        const std::uintptr_t start = info->dlpi_addr + segment.p_vaddr;
        contains = segment.p_type == PT_LOAD && search->address >= start &&
                   search->address < start + segment.p_memsz;
    }
    if (!contains) {
        return 0;
    }
    LoadedObject object;
    object.path = info->dlpi_name != nullptr ? info->dlpi_name : "";
    for (ElfW(Half) index = 0; index < info->dlpi_phnum && object.build_id.empty(); ++index) {
        const ElfW(Phdr)& segment = info->dlpi_phdr[index];
        if (segment.p_type == PT_NOTE) {
            object.build_id = build_id_in_notes(
                reinterpret_cast<const unsigned char*>(info->dlpi_addr + segment.p_vaddr),
                segment.p_memsz);
        }
    }
    search->found = std::move(object);
    return 1;
}

bool names_regular_file(const std::filesystem::path& path) {
    std::error_code error;
    return std::filesystem::is_regular_file(path, error);
}

}  // namespace

std::optional<LibrepoAccelMode> parse_librepo_accel_mode(std::string_view name) {
    for (const auto& [mode, mode_name] : kModeNames) {
        if (name == mode_name) {
            return mode;
        }
    }
    return std::nullopt;
}

std::string_view librepo_accel_mode_name(LibrepoAccelMode mode) {
    for (const auto& [known, name] : kModeNames) {
        if (known == mode) {
            return name;
        }
    }
    return "unknown";
}

std::span<const VerifiedLibrepoBuild> verified_librepo_builds() {
    return kVerifiedBuilds;
}

const VerifiedLibrepoBuild* find_verified_librepo_build(std::string_view build_id) {
    const auto found = std::find_if(
        kVerifiedBuilds.begin(), kVerifiedBuilds.end(),
        [build_id](const VerifiedLibrepoBuild& build) { return build.build_id == build_id; });
    return found == kVerifiedBuilds.end() ? nullptr : &*found;
}

Result<LoadedObject> loaded_object_containing(const void* address) {
    Search search;
    search.address = reinterpret_cast<std::uintptr_t>(address);
    ::dl_iterate_phdr(visit_object, &search);
    if (!search.found) {
        return make_error(ErrorCode::NotFound, "no loaded object contains this address",
                          "dl_iterate_phdr");
    }
    return std::move(*search.found);
}

Result<LoadedObject> find_system_librepo() {
    struct Closer {
        void operator()(void* handle) const { ::dlclose(handle); }
    };
    std::unique_ptr<void, Closer> handle(::dlopen("librepo.so.0", RTLD_LAZY | RTLD_LOCAL));
    if (!handle) {
        const char* reason = ::dlerror();
        return make_error(ErrorCode::NotFound,
                          std::string("cannot load: ") + (reason != nullptr ? reason : "?"),
                          "librepo.so.0");
    }
    void* function = ::dlsym(handle.get(), "lr_checksum_fd_compare");
    if (function == nullptr) {
        return make_error(ErrorCode::Unsupported, "has no lr_checksum_fd_compare", "librepo.so.0");
    }
    return loaded_object_containing(function);
}

Result<std::filesystem::path> find_librepo_accel_library(const std::filesystem::path& executable) {
    const std::string name(kLibrepoAccelLibraryName);
    if (const char* configured = std::getenv(kLibrepoAccelPathVariable)) {  // NOLINT
        if (names_regular_file(configured)) {
            // LD_PRELOAD wants a path that does not depend on the command's working directory.
            return std::filesystem::absolute(configured);
        }
        return make_error(ErrorCode::NotFound,
                          std::string("no such file (set by ") + kLibrepoAccelPathVariable + ")",
                          configured);
    }
    const std::filesystem::path dir = executable.parent_path();
    const std::array<std::filesystem::path, 2> candidates = {
        dir / name,
        (dir / ".." / RPMIRROR_INSTALL_LIBDIR / "rpmirror" / name).lexically_normal(),
    };
    std::string tried;
    for (const std::filesystem::path& candidate : candidates) {
        if (names_regular_file(candidate)) {
            return candidate;
        }
        tried += (tried.empty() ? "" : ", ") + candidate.string();
    }
    return make_error(ErrorCode::NotFound,
                      "not found (tried " + tried + "; set " + kLibrepoAccelPathVariable + ")",
                      name);
}

}  // namespace rpmirror
