// The NEVRA text of a package (index/index.hpp): a file of its own, so that the fuzz build
// (fuzz/CMakeLists.txt) need not link the rest of the index.
#include <fmt/format.h>

#include "index/index.hpp"

namespace rpmirror {

std::string closure_nevra(std::string_view name, std::string_view epoch, std::string_view version,
                          std::string_view release, std::string_view arch) {
    return fmt::format("{}-{}:{}-{}.{}", name, epoch.empty() ? "0" : epoch, version, release, arch);
}

}  // namespace rpmirror
