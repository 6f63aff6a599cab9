// What the repository loader (load.cpp), the command-line options --setopt and --repofrompath
// (command_line.cpp) and the repositories' selection (select_repos.cpp) share (private).
#pragma once

#include <fnmatch.h>

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config/repo_files.hpp"
#include "config/repo_options.hpp"
#include "rpmirror/config/config.hpp"

namespace rpmirror::config {

constexpr std::string_view kRepofrompath = "--repofrompath";

inline bool glob_matches(const std::string& pattern, const std::string& text) {
    return ::fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
}

// Substitutes variables in `raw` and stores the value of `option` in `repo`. `owner` names what
// is configured in messages ("repo 'fedora'", "[main]"); `prefix` starts each message (the
// --setopt argument, or nothing).
Result<void> apply_value(RepoConfig& repo, const config::RepoOption& option, std::string_view key,
                         std::string_view raw, const ConfigLocation& where, std::string_view owner,
                         std::string_view prefix, const VariableContext& vars);

struct Setopt {
    std::string argument;
    std::optional<std::string> repo_glob;
    std::string key;  // lower-case, as written
    std::string value;
    const config::RepoOption* option = nullptr;  // nullptr: reposdir or an ignored key
};

Result<std::vector<Setopt>> parse_setopts(std::span<const std::string> arguments,
                                          std::vector<ConfigWarning>& warnings);

Result<void> apply_parsed_setopts(std::vector<RepoConfig>& repos,
                                  const std::vector<Setopt>& setopts, const VariableContext& vars,
                                  std::vector<ConfigWarning>& warnings);

}  // namespace rpmirror::config
