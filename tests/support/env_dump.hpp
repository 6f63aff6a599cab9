// Reads what `env > FILE` wrote, for tests of commands rpmirror runs (on-change hooks).
// Header-only.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace rpmirror::test {

// The hooks' variables.
inline const std::vector<std::string> kHookVariables{
    "RPMIRROR_JOB", "RPMIRROR_REPO_ID", "RPMIRROR_DESTINATION", "RPMIRROR_METADATA_DIR"};

// Returns the variables named in `names` of the `env` output `env_dump` (one NAME=value a line;
// values without newlines).
inline std::map<std::string, std::string> variables_of(
    std::string_view env_dump, const std::vector<std::string>& names = kHookVariables) {
    std::map<std::string, std::string> variables;
    while (!env_dump.empty()) {
        const std::size_t newline = env_dump.find('\n');
        const std::string_view line = env_dump.substr(0, newline);
        env_dump =
            newline == std::string_view::npos ? std::string_view() : env_dump.substr(newline + 1);
        const std::size_t equals = line.find('=');
        for (const std::string& name : names) {
            if (line.substr(0, equals) == name) {
                variables[name] = std::string(line.substr(equals + 1));
            }
        }
    }
    return variables;
}

}  // namespace rpmirror::test
