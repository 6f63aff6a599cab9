// Where tests find the source tree (scripts, specs, data) and the repositories that ctest's
// fixtures build once per run.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

namespace rpmirror::test {

// The root of the source tree (set by tests/CMakeLists.txt).
inline std::filesystem::path source_root() {
    return RPMIRROR_SOURCE_DIR;
}

// Returns the whole contents of `path` ("" iff it cannot be read).
inline std::string read_file(const std::filesystem::path& path) {
    std::ifstream stream(path, std::ios::binary);
    std::ostringstream contents;
    contents << stream.rdbuf();
    return contents.str();
}

// Returns the test repository `name` (e.g. "index-repo") that a ctest fixture built before the
// unit tests ran, or nullopt iff the tests run outside ctest (then each suite builds its own).
// Such repositories are shared by every test process: read them, never change them.
inline std::optional<std::filesystem::path> prebuilt_test_repo(std::string_view name) {
    const char* base = std::getenv("RPMIRROR_TEST_REPOS");
    if (base == nullptr) {
        return std::nullopt;
    }
    std::filesystem::path repo = std::filesystem::path(base) / name;
    if (!std::filesystem::exists(repo / "repodata" / "repomd.xml")) {
        return std::nullopt;
    }
    return repo;
}

}  // namespace rpmirror::test
