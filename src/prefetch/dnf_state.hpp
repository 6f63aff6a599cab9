// What dnf keeps on disk that decides a prefetch, read as dnf reads it: the repositories it was
// told to refresh, whether its cached metadata is fresh, the module streams an installroot
// enables, and the packages `dnf install @GROUP` takes from a comps document. Thread-safe.
#pragma once

#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "rpmirror/util/error.hpp"

namespace rpmirror {

// The repository ids dnf was told to refresh (`dnf clean expire-cache` writes them).
std::set<std::string> expired_repo_ids(const std::filesystem::path& cachedir);

// True iff dnf would use the metadata in `repo_cache` without asking the server: its repomd.xml
// lists a primary that is there, younger than `expire_seconds` (libdnf's age: now minus the
// primary's mtime) and than the file that defines the repository (dnf's check_config_file_age).
bool metadata_is_fresh(const std::filesystem::path& repo_cache, std::int64_t expire_seconds,
                       const std::string& repo_file);

// The module streams dnf's state in `installroot` enables (`dnf module enable`): "NAME:STREAM" of
// each section of <installroot>/etc/dnf/modules.d/*.module whose state is enabled. A file that
// cannot be read or parsed is a line in `warnings` (its streams then count as not enabled).
std::vector<std::string> enabled_module_streams(const std::filesystem::path& installroot,
                                                std::vector<std::string>& warnings);

// Adds to `packages` the mandatory and default packages (what `dnf install @GROUP` installs) of
// each group of the comps `text` whose id is one of `groups`, or whose untranslated name is one
// case-insensitively; `found` receives each entry of `groups` a group matched.
Result<void> add_group_packages(const std::string& text, const std::string& shown,
                                const std::vector<std::string>& groups,
                                std::set<std::string>& packages, std::set<std::string>& found);

}  // namespace rpmirror
