// --repo, --enablerepo, --disablerepo and --enable-source-repos: which repositories are synced
// (select_repos).
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "config/common.hpp"
#include "config/load_internal.hpp"
#include "config/repo_files.hpp"
#include "rpmirror/config/config.hpp"

namespace rpmirror {
namespace {

using config::glob_matches;
using config::kRepofrompath;
using config::located_error;
using config::warn;

// dnf's RepoDict.get_matching: a pattern with glob characters matches by fnmatch, any other by
// equality.
bool repo_matches(const std::string& pattern, const std::string& id) {
    if (pattern.find_first_of("*?[") != std::string::npos) {
        return glob_matches(pattern, id);
    }
    return pattern == id;
}

// dnf's enable_source_repos() name: `X-source-rpms` for `X-rpms`, else `R-source`.
std::string source_repo_name(const std::string& id) {
    constexpr std::string_view kRpms = "-rpms";
    if (id.ends_with(kRpms)) {
        return id.substr(0, id.size() - kRpms.size()) + "-source-rpms";
    }
    return id + "-source";
}

Result<std::vector<RepoConfig>> checked_selection(std::vector<RepoConfig> selected) {
    for (const RepoConfig& repo : selected) {
        if (repo.baseurls.empty() && !repo.mirrorlist && !repo.metalink) {
            return located_error(
                repo.defined_at,
                fmt::format("repo '{}' has no baseurl, mirrorlist or metalink", repo.id));
        }
    }
    return selected;
}

}  // namespace

Result<std::vector<RepoConfig>> select_repos(std::vector<RepoConfig> repos,
                                             const RepoSelection& selection,
                                             std::vector<ConfigWarning>& warnings) {
    struct Operation {
        bool enable;
        std::string pattern;
        std::string_view option;
    };
    std::vector<Operation> operations;
    const bool has_repo_option = !selection.repo_patterns.empty();
    for (const RepoSelection::Toggle& toggle : selection.toggles) {
        operations.push_back(
            {toggle.enable, toggle.pattern, toggle.enable ? "--enablerepo" : "--disablerepo"});
    }
    if (!has_repo_option) {
        for (const RepoConfig& repo : repos) {
            if (repo.defined_at.file == kRepofrompath) {
                operations.push_back({true, repo.id, kRepofrompath});
            }
        }
    }
    if (has_repo_option) {
        // dnf reposync's configure(), after dnf has applied the toggles: every repository
        // disabled, then --repo's enabled.
        operations.push_back({false, "*", "--repo"});
    }
    for (const std::string& pattern : selection.repo_patterns) {
        operations.push_back({true, pattern, "--repo"});
    }
    for (const Operation& operation : operations) {
        bool is_matched = false;
        for (RepoConfig& repo : repos) {
            if (repo_matches(operation.pattern, repo.id)) {
                is_matched = true;
                repo.enabled = operation.enable;
            }
        }
        if (is_matched) {
            continue;
        }
        if (operation.enable) {
            return make_error(ErrorCode::BadInput,
                              fmt::format("Unknown repo: '{}'", operation.pattern),
                              std::string(operation.option));
        }
        warn(warnings, ConfigWarningKind::NoMatch, ConfigLocation{std::string(operation.option), 0},
             operation.pattern, fmt::format("No repository match: {}", operation.pattern));
    }
    if (selection.enable_source_repos) {
        std::vector<std::string> source_names;
        for (const RepoConfig& repo : repos) {
            if (repo.enabled) {
                source_names.push_back(source_repo_name(repo.id));
            }
        }
        for (const std::string& name : source_names) {
            for (RepoConfig& repo : repos) {
                if (repo_matches(name, repo.id)) {
                    repo.enabled = true;
                }
            }
        }
    }
    std::vector<RepoConfig> selected;
    for (RepoConfig& repo : repos) {
        if (repo.enabled) {
            selected.push_back(std::move(repo));
        }
    }
    return checked_selection(std::move(selected));
}

Result<std::vector<RepoConfig>> select_repos(std::vector<RepoConfig> repos,
                                             std::span<const std::string> patterns) {
    std::vector<RepoConfig> selected;
    if (patterns.empty()) {
        for (RepoConfig& repo : repos) {
            if (repo.enabled) {
                selected.push_back(std::move(repo));
            }
        }
    } else {
        for (const std::string& pattern : patterns) {
            const bool is_matched =
                std::any_of(repos.begin(), repos.end(),
                            [&](const RepoConfig& r) { return glob_matches(pattern, r.id); });
            if (!is_matched) {
                return make_error(ErrorCode::BadInput,
                                  fmt::format("no repository matches '{}'", pattern), "--repo");
            }
        }
        for (RepoConfig& repo : repos) {
            const bool is_wanted = std::any_of(
                patterns.begin(), patterns.end(),
                [&](const std::string& pattern) { return glob_matches(pattern, repo.id); });
            if (is_wanted) {
                repo.enabled = true;
                selected.push_back(std::move(repo));
            }
        }
    }
    return checked_selection(std::move(selected));
}

}  // namespace rpmirror
