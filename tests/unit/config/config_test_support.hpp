// Helpers for the configuration tests: the data directory in the tree and a fixed set of variables.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "config/repo_files.hpp"
#include "rpmirror/config/config.hpp"
#include "support/source_tree.hpp"

namespace rpmirror::test {

// tests/data/config in the source tree.
inline std::filesystem::path config_data_dir() {
    return source_root() / "tests" / "data" / "config";
}

// Variables as on a Fedora 40 x86_64 host, without reading the machine or environment.
inline VariableContext fedora_vars() {
    VariableContext vars;
    vars.values = {{"arch", "x86_64"},
                   {"basearch", "x86_64"},
                   {"releasever", "40"},
                   {"releasever_major", "40"},
                   {"releasever_minor", ""}};
    return vars;
}

// Sources that read nothing from /etc: no default config file, no default repos directories.
inline ConfigSources isolated_sources() {
    ConfigSources sources;
    sources.default_config_file.reset();
    sources.reposdirs = std::vector<std::filesystem::path>{};
    return sources;
}

inline std::vector<std::string> repo_ids(const std::vector<RepoConfig>& repos) {
    std::vector<std::string> ids;
    for (const RepoConfig& repo : repos) {
        ids.push_back(repo.id);
    }
    return ids;
}

inline std::size_t count_warnings(const std::vector<ConfigWarning>& warnings,
                                  ConfigWarningKind kind) {
    return static_cast<std::size_t>(
        std::count_if(warnings.begin(), warnings.end(),
                      [kind](const ConfigWarning& warning) { return warning.kind == kind; }));
}

}  // namespace rpmirror::test
