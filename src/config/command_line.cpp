// The repositories' command-line options: --setopt (parsed, then applied to the repositories it
// names) and --repofrompath.
#include <algorithm>
#include <cctype>
#include <system_error>

#include <fmt/format.h>

#include "config/common.hpp"
#include "config/load_internal.hpp"
#include "config/repo_files.hpp"
#include "config/repo_options.hpp"
#include "rpmirror/config/config.hpp"
#include "util/text.hpp"

namespace rpmirror {

namespace config {
namespace {

constexpr std::string_view kSetopt = "--setopt";

using text::trim;

Result<Setopt> parse_setopt(std::string_view argument, std::vector<ConfigWarning>& warnings) {
    const ConfigLocation where{std::string(kSetopt), 0};
    Setopt setopt;
    setopt.argument = std::string(argument);
    const std::size_t equals = argument.find('=');
    if (equals == std::string_view::npos) {
        return located_error(where,
                             fmt::format("'{}': expected KEY=VALUE or REPOID.KEY=VALUE", argument));
    }
    const std::string_view name = trim(argument.substr(0, equals));
    setopt.value = std::string(trim(argument.substr(equals + 1)));
    const std::size_t dot = name.rfind('.');
    std::string_view key = name;
    if (dot != std::string_view::npos) {
        setopt.repo_glob = std::string(name.substr(0, dot));
        key = name.substr(dot + 1);
        if (setopt.repo_glob->empty()) {
            return located_error(where, fmt::format("'{}': empty repo id before '.'", argument));
        }
    }
    for (const char c : key) {
        setopt.key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    if (setopt.key.empty()) {
        return located_error(where, fmt::format("'{}': missing key before '='", argument));
    }
    setopt.option = config::find_repo_option(setopt.key);
    if (setopt.option != nullptr) {
        if (!setopt.repo_glob && !setopt.option->is_global) {
            return located_error(
                where, fmt::format("'{}': key '{}' needs a repo id (REPOID.{}=VALUE)", argument,
                                   setopt.key, setopt.key));
        }
        return setopt;
    }
    if (!setopt.repo_glob && setopt.key == "reposdir") {
        return setopt;
    }
    if (config::is_ignored_repo_key(setopt.key) ||
        (!setopt.repo_glob && config::is_ignored_main_key(setopt.key))) {
        warn(warnings, ConfigWarningKind::IgnoredKey, where, setopt.key,
             fmt::format("'{}': key '{}' is not used by rpmirror; ignored", argument, setopt.key));
        return setopt;
    }
    return located_error(where, fmt::format("'{}': unknown {}key '{}'", argument,
                                            setopt.repo_glob ? "repo " : "", setopt.key));
}

}  // namespace

Result<std::vector<Setopt>> parse_setopts(std::span<const std::string> arguments,
                                          std::vector<ConfigWarning>& warnings) {
    std::vector<Setopt> setopts;
    for (const std::string& argument : arguments) {
        auto setopt = parse_setopt(argument, warnings);
        if (!setopt) {
            return tl::unexpected(std::move(setopt.error()));
        }
        setopts.push_back(std::move(*setopt));
    }
    return setopts;
}

Result<void> apply_parsed_setopts(std::vector<RepoConfig>& repos,
                                  const std::vector<Setopt>& setopts, const VariableContext& vars,
                                  std::vector<ConfigWarning>& warnings) {
    const ConfigLocation where{std::string(kSetopt), 0};
    for (const Setopt& setopt : setopts) {
        if (setopt.option == nullptr) {
            continue;
        }
        bool matched = false;
        const std::string prefix = fmt::format("'{}': ", setopt.argument);
        for (RepoConfig& repo : repos) {
            if (setopt.repo_glob && !glob_matches(*setopt.repo_glob, repo.id)) {
                continue;
            }
            matched = true;
            const std::string owner = fmt::format("repo '{}'", repo.id);
            if (auto applied = apply_value(repo, *setopt.option, setopt.key, setopt.value, where,
                                           owner, prefix, vars);
                !applied) {
                return applied;
            }
        }
        if (!matched && setopt.repo_glob) {
            warn(warnings, ConfigWarningKind::NoMatch, where, setopt.key,
                 fmt::format("'{}': no repository matches '{}'; ignored", setopt.argument,
                             *setopt.repo_glob));
        }
    }
    return {};
}

}  // namespace config

namespace {

using config::apply_parsed_setopts;
using config::kRepofrompath;
using config::located_error;
using config::parse_setopts;

}  // namespace

Result<RepoConfig> repo_from_path(std::string_view id_comma_url,
                                  const std::filesystem::path& working_directory) {
    const ConfigLocation where{std::string(kRepofrompath), 0};
    const std::size_t comma = id_comma_url.find(',');
    if (comma == std::string_view::npos) {
        return located_error(where,
                             fmt::format("'{}': expected ID,URL (or ID,PATH)", id_comma_url));
    }
    const std::string id(id_comma_url.substr(0, comma));
    const std::string_view location = id_comma_url.substr(comma + 1);
    if (!is_valid_repo_id(id)) {
        return located_error(where, fmt::format("'{}': invalid repo id '{}' (allowed: letters, "
                                                "digits, '-', '_', '.', ':'; not '.' or '..')",
                                                id_comma_url, id));
    }
    if (location.empty()) {
        return located_error(where, fmt::format("'{}': empty URL", id_comma_url));
    }
    RepoConfig repo;
    repo.id = id;
    repo.name = id;
    repo.enabled = true;
    repo.gpgcheck = false;
    repo.defined_at = where;
    if (location.find("://") != std::string_view::npos) {
        repo.baseurls.emplace_back(location);
    } else {
        std::filesystem::path path(location);
        if (path.is_relative()) {
            std::error_code error;
            const std::filesystem::path base = working_directory.empty()
                                                   ? std::filesystem::current_path(error)
                                                   : working_directory;
            if (error) {
                return make_errno_error("cannot determine the current directory",
                                        std::string(kRepofrompath), error.value());
            }
            path = base / path;
        }
        repo.baseurls.push_back("file://" + path.lexically_normal().string());
    }
    return repo;
}

Result<void> apply_setopts(std::vector<RepoConfig>& repos, std::span<const std::string> setopts,
                           const VariableContext& vars, std::vector<ConfigWarning>& warnings) {
    auto parsed = parse_setopts(setopts, warnings);
    if (!parsed) {
        return tl::unexpected(std::move(parsed.error()));
    }
    return apply_parsed_setopts(repos, *parsed, vars, warnings);
}

}  // namespace rpmirror
