// Helpers for the metadata tests: running the real tools (createrepo_c, sha256sum,
// scripts/make-sample-repo) and reading the files they write.
#pragma once

#include <filesystem>
#include <string>

#include "support/child_process.hpp"
#include "support/source_tree.hpp"

namespace rpmirror::test {

// Returns the first word `tool` (e.g. "sha256sum") prints for `file`: an independent digest.
inline std::string tool_digest(const std::string& tool, const std::filesystem::path& file,
                               const std::filesystem::path& scratch) {
    const std::filesystem::path log = scratch / (tool + ".out");
    if (run_command({tool, file.string()}, log) != 0) {
        return {};
    }
    const std::string output = read_file(log);
    return output.substr(0, output.find(' '));
}

}  // namespace rpmirror::test
