// The table of repository options rpmirror honours, the dnf options it knowingly ignores, and the
// value parsers (booleans, byte rates, durations, lists) with dnf's spellings.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <tl/expected.hpp>

#include "rpmirror/config/config.hpp"

namespace rpmirror::config {

// Parses `value` (already variable-substituted) into `repo`. `key` is the key as written, for
// messages. Returns the message detail ("invalid boolean 'x' for key 'enabled' (...)") on failure.
using OptionSetter = tl::expected<void, std::string> (*)(RepoConfig& repo, std::string_view key,
                                                         std::string_view value);

struct RepoOption {
    std::string_view key;  // canonical name ("excludepkgs" for "exclude")
    bool is_url;           // undefined variables are errors (baseurl, mirrorlist, metalink, gpgkey)
    bool is_main_default;  // honoured in [main] as a default for every repo
    bool is_global;        // allowed in `--setopt KEY=VALUE` without a repo id
    OptionSetter set;
};

// Returns the honoured option named `key` (lower-case; aliases resolved), or nullptr iff none.
const RepoOption* find_repo_option(std::string_view key);

// Returns true iff `key` is a dnf repo option rpmirror does not use (priority, metadata_expire,
// ...).
bool is_ignored_repo_key(std::string_view key);

// Returns true iff `key` is a dnf [main] option rpmirror does not use (installonly_limit, ...).
bool is_ignored_main_key(std::string_view key);

// Parses a byte count: "123", "1.5k", "2M", "1G" (binary multiples, case-insensitive), as
// libdnf's strToBytes. Returns nullopt iff `text` is not one.
std::optional<std::uint64_t> parse_bytes(std::string_view text);

// Splits a dnf list value at commas and whitespace (newlines included), dropping empty items.
std::vector<std::string> split_list(std::string_view value);

}  // namespace rpmirror::config
