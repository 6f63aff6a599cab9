// Reading repositories from every source dnf reads them from (its config file, the reposdirs'
// `.repo` files, --repofrompath), then --setopt (command_line.cpp); --repo selection is in
// select_repos.cpp.
#include <algorithm>
#include <map>
#include <set>
#include <system_error>

#include <fmt/format.h>

#include "config/common.hpp"
#include "config/load_internal.hpp"
#include "config/repo_files.hpp"
#include "config/repo_options.hpp"
#include "config/variables_internal.hpp"
#include "rpmirror/config/config.hpp"
#include "util/ini.hpp"
#include "util/text.hpp"

namespace rpmirror {

namespace config {

Result<void> apply_value(RepoConfig& repo, const config::RepoOption& option, std::string_view key,
                         std::string_view raw, const ConfigLocation& where, std::string_view owner,
                         std::string_view prefix, const VariableContext& vars) {
    const config::UndefinedPolicy policy =
        option.is_url ? config::UndefinedPolicy::Fail : config::UndefinedPolicy::Keep;
    auto value = config::substitute(raw, vars, policy);
    if (!value) {
        const config::SubstitutionFailure& failure = value.error();
        if (failure.variable.empty()) {
            return located_error(
                where, fmt::format("{}key '{}' of {}: {}", prefix, key, owner, failure.detail));
        }
        const std::string_view hint =
            failure.variable.starts_with("releasever") ? " (set it with --releasever)" : "";
        return located_error(where, fmt::format("{}key '{}' of {} uses undefined variable '{}'{}",
                                                prefix, key, owner, failure.variable, hint));
    }
    if (auto set = option.set(repo, key, *value); !set) {
        return located_error(where, fmt::format("{}{}", prefix, set.error()));
    }
    repo.set_at.insert_or_assign(std::string(key), where);
    return {};
}

}  // namespace config

namespace {

const std::vector<std::filesystem::path> kDefaultReposdirs = {
    "/etc/yum.repos.d", "/etc/yum/repos.d", "/etc/distro.repos.d"};

using config::apply_parsed_setopts;
using config::apply_value;
using config::located_error;
using config::parse_setopts;
using config::read_ini_file;
using config::Setopt;
using config::warn;
using text::trim;

// Warns when a section gives a key again (under any of its spellings); dnf keeps the later value.
class DuplicateKeys {
  public:
    // `owner` completes "key 'x' <owner> given again": "in [main]", "of repo 'id'".
    explicit DuplicateKeys(std::string owner) : owner_(std::move(owner)) {}

    void check(const ini::IniEntry& entry, const config::RepoOption* option,
               const ConfigLocation& where, std::vector<ConfigWarning>& warnings) {
        const std::string canonical = option != nullptr ? std::string(option->key) : entry.key;
        if (const auto [it, inserted] = first_line_of_key_.emplace(canonical, entry.line);
            !inserted) {
            warn(warnings, ConfigWarningKind::DuplicateKey, where, entry.key,
                 fmt::format("key '{}' {} given again (first at line {}); the later value wins",
                             entry.key, owner_, it->second));
        }
    }

  private:
    std::string owner_;
    std::map<std::string, std::size_t> first_line_of_key_;
};

// What the main config file's [main] section contributes.
struct MainSettings {
    RepoConfig defaults;                   // inheritable options, applied before each repo's own
    std::vector<std::string> excludepkgs;  // prepended to every repo's excludepkgs
    std::optional<std::vector<std::filesystem::path>> reposdirs;
    std::vector<std::string> disable_excludes;  // disable_excludes=
};

Result<void> read_main_section(const ini::IniSection& section, const std::string& file,
                               const VariableContext& vars, MainSettings& main,
                               std::vector<ConfigWarning>& warnings) {
    DuplicateKeys duplicates("in [main]");
    for (const ini::IniEntry& entry : section.entries) {
        const ConfigLocation where{file, entry.line};
        const config::RepoOption* option = config::find_repo_option(entry.key);
        duplicates.check(entry, option, where, warnings);
        if (entry.key == "reposdir") {
            auto value = config::substitute(entry.value, vars, config::UndefinedPolicy::Keep);
            std::vector<std::filesystem::path> directories;
            for (std::string& item : config::split_list(*value)) {
                directories.emplace_back(std::move(item));
            }
            main.reposdirs = std::move(directories);
        } else if (entry.key == "disable_excludes" || entry.key == "disableexcludes") {
            auto value = config::substitute(entry.value, vars, config::UndefinedPolicy::Keep);
            main.disable_excludes = config::split_list(*value);
        } else if (option != nullptr && option->key == "excludepkgs") {
            auto value = config::substitute(entry.value, vars, config::UndefinedPolicy::Keep);
            main.excludepkgs = config::split_list(*value);
        } else if (option != nullptr && option->is_main_default) {
            if (auto applied = apply_value(main.defaults, *option, entry.key, entry.value, where,
                                           "[main]", "", vars);
                !applied) {
                return applied;
            }
        } else if (option != nullptr && option->key == "includepkgs") {
            warn(warnings, ConfigWarningKind::IgnoredKey, where, entry.key,
                 "includepkgs in [main] (a global filter in dnf) is not applied by rpmirror; set "
                 "it in each repo; ignored");
        } else if (option != nullptr && !config::is_ignored_main_key(entry.key)) {
            warn(warnings, ConfigWarningKind::UnknownKey, where, entry.key,
                 fmt::format("key '{}' has no meaning in [main]; ignored", entry.key));
        } else if (config::is_ignored_main_key(entry.key) ||
                   config::is_ignored_repo_key(entry.key)) {
            warn(warnings, ConfigWarningKind::IgnoredKey, where, entry.key,
                 fmt::format("key '{}' in [main] is not used by rpmirror; ignored", entry.key));
        } else {
            warn(warnings, ConfigWarningKind::UnknownKey, where, entry.key,
                 fmt::format("unknown key '{}' in [main]; ignored", entry.key));
        }
    }
    return {};
}

Result<RepoConfig> build_repo(const ini::IniSection& section, const std::string& file,
                              const MainSettings& main, const VariableContext& vars,
                              std::vector<ConfigWarning>& warnings) {
    const ConfigLocation section_location{file, section.line};
    if (!is_valid_repo_id(section.name)) {
        return located_error(section_location,
                             fmt::format("invalid repo id '{}' (allowed: letters, digits, '-', "
                                         "'_', '.', ':'; not '.' or '..')",
                                         section.name));
    }
    RepoConfig repo = main.defaults;
    repo.id = section.name;
    repo.defined_at = section_location;
    const std::string owner = fmt::format("repo '{}'", repo.id);
    DuplicateKeys duplicates("of " + owner);
    for (const ini::IniEntry& entry : section.entries) {
        const ConfigLocation where{file, entry.line};
        const config::RepoOption* option = config::find_repo_option(entry.key);
        duplicates.check(entry, option, where, warnings);
        if (option != nullptr) {
            if (auto applied =
                    apply_value(repo, *option, entry.key, entry.value, where, owner, "", vars);
                !applied) {
                return tl::unexpected(std::move(applied.error()));
            }
        } else if (config::is_ignored_repo_key(entry.key) ||
                   config::is_ignored_main_key(entry.key)) {
            // A [main] key in a repository section (ci-dnf-stack writes localpkg_gpgcheck
            // there): dnf ignores it without a word, so only -v mentions it.
            warn(warnings, ConfigWarningKind::IgnoredKey, where, entry.key,
                 fmt::format("key '{}' of {} is not used by rpmirror; ignored", entry.key, owner));
        } else {
            warn(warnings, ConfigWarningKind::UnknownKey, where, entry.key,
                 fmt::format("unknown key '{}' in {}; ignored", entry.key, owner));
        }
    }
    if (repo.name.empty()) {
        repo.name = repo.id;
    }
    return repo;  // [main]'s excludepkgs are added last (apply_excludes)
}

// Builds the repos of one parsed file. In the main config file [main] was already read; in a
// `.repo` file it is ignored with a warning, as dnf ignores it.
Result<void> read_repo_sections(const std::vector<ini::IniSection>& sections,
                                const std::string& file, bool is_main_config,
                                const MainSettings& main, const VariableContext& vars,
                                std::vector<RepoConfig>& repos,
                                std::vector<ConfigWarning>& warnings) {
    for (const ini::IniSection& section : sections) {
        if (section.name == config::kMainSection) {
            if (!is_main_config) {
                warn(warnings, ConfigWarningKind::IgnoredKey, ConfigLocation{file, section.line},
                     "[main]",
                     "a [main] section in a .repo file is ignored (as dnf does); use the -c "
                     "config file");
            }
            continue;
        }
        auto repo = build_repo(section, file, main, vars, warnings);
        if (!repo) {
            return tl::unexpected(std::move(repo.error()));
        }
        repos.push_back(std::move(*repo));
    }
    return {};
}

// Returns an error naming both places iff two repos share an id.
Result<void> check_unique_ids(const std::vector<RepoConfig>& repos) {
    std::map<std::string_view, const RepoConfig*> first_definition;
    for (const RepoConfig& repo : repos) {
        const auto [it, inserted] = first_definition.emplace(repo.id, &repo);
        if (!inserted) {
            return located_error(repo.defined_at,
                                 fmt::format("repo id '{}' is already defined at {}", repo.id,
                                             it->second->defined_at.to_string()));
        }
    }
    return {};
}

// Returns the `*.repo` regular files (symlinks followed) of `directory` sorted by name; an empty
// list iff the directory does not exist.
Result<std::vector<std::filesystem::path>> list_repo_files(const std::filesystem::path& directory) {
    std::vector<std::filesystem::path> files;
    std::error_code error;
    const std::filesystem::file_status status = std::filesystem::status(directory, error);
    if (status.type() == std::filesystem::file_type::not_found) {
        return files;
    }
    if (error) {
        return make_errno_error("cannot access repos directory", directory.string(), error.value());
    }
    if (status.type() != std::filesystem::file_type::directory) {
        return make_error(ErrorCode::BadInput, "repos directory is not a directory",
                          directory.string());
    }
    std::filesystem::directory_iterator entries(directory, error);
    if (error) {
        return make_errno_error("cannot list repos directory", directory.string(), error.value());
    }
    for (const std::filesystem::directory_entry& entry : entries) {
        if (entry.path().extension() == ".repo" && entry.is_regular_file(error)) {
            files.push_back(entry.path());
        }
    }
    std::sort(files.begin(), files.end(),
              [](const std::filesystem::path& left, const std::filesystem::path& right) {
                  return left.filename().string() < right.filename().string();
              });
    return files;
}

// Applies --disableexcludes / disable_excludes and adds [main]'s excludepkgs (with -x) to each
// repository's, as dnf applies them.
Result<void> apply_excludes(std::vector<RepoConfig>& repos, const MainSettings& main,
                            std::span<const std::string> disable_excludes) {
    const std::string_view option = "--disableexcludes";
    for (const std::string& value : disable_excludes) {
        if (value != "all" && value != "main" && !is_valid_repo_id(value)) {
            return make_error(
                ErrorCode::BadInput,
                fmt::format("invalid value '{}' (expected all, main or a repo id)", value),
                std::string(option));
        }
    }
    const auto is_disabled = [&](std::string_view name) {
        return std::find(disable_excludes.begin(), disable_excludes.end(), name) !=
               disable_excludes.end();
    };
    const bool main_disabled = is_disabled("all") || is_disabled("main");
    for (RepoConfig& repo : repos) {
        if (is_disabled("all") || is_disabled(repo.id)) {
            repo.includepkgs.clear();
            repo.excludepkgs.clear();
        }
        if (!main_disabled) {
            repo.excludepkgs.insert(repo.excludepkgs.begin(), main.excludepkgs.begin(),
                                    main.excludepkgs.end());
        }
    }
    return {};
}

// `path` beneath `root` ("/" leaves it as it is).
std::filesystem::path beneath(const std::filesystem::path& root,
                              const std::filesystem::path& path) {
    if (root.empty() || root == "/") {
        return path;
    }
    return root / path.relative_path();
}

bool exists_beneath(const std::filesystem::path& root, const std::filesystem::path& path) {
    std::error_code error;
    return std::filesystem::exists(beneath(root, path), error);
}

// The config file to read: -c as given, else the default one, beneath the installroot first.
std::optional<std::filesystem::path> config_file_to_read(const ConfigSources& sources) {
    if (sources.config_file) {
        return sources.config_file;
    }
    if (!sources.default_config_file) {
        return std::nullopt;
    }
    if (exists_beneath(sources.installroot, *sources.default_config_file)) {
        return beneath(sources.installroot, *sources.default_config_file);
    }
    std::error_code error;
    if (std::filesystem::exists(*sources.default_config_file, error)) {
        return sources.default_config_file;
    }
    return std::nullopt;
}

// dnf's _search_inside_installroot for reposdir: the list moves beneath the installroot as a
// whole iff any of its directories exists there. Returns the directories and whether they moved.
std::pair<std::vector<std::filesystem::path>, bool> reposdirs_beneath_installroot(
    const std::filesystem::path& installroot, std::vector<std::filesystem::path> reposdirs) {
    if (installroot.empty() || installroot == "/") {
        return {std::move(reposdirs), false};
    }
    const bool any_inside = std::any_of(
        reposdirs.begin(), reposdirs.end(),
        [&](const std::filesystem::path& dir) { return exists_beneath(installroot, dir); });
    if (!any_inside) {
        return {std::move(reposdirs), false};
    }
    for (std::filesystem::path& dir : reposdirs) {
        dir = beneath(installroot, dir);
    }
    return {std::move(reposdirs), true};
}

bool has_setopt_reposdir(std::span<const std::string> setopts) {
    return std::any_of(setopts.begin(), setopts.end(), [](const std::string& setopt) {
        const std::string_view name = trim(std::string_view(setopt).substr(0, setopt.find('=')));
        return name == "reposdir";
    });
}
}  // namespace

Result<std::filesystem::path> variables_root(const ConfigSources& sources) {
    const std::filesystem::path& root = sources.installroot;
    if (root.empty() || root == "/") {
        return std::filesystem::path("/");
    }
    if (sources.reposdirs || has_setopt_reposdir(sources.setopts)) {
        return root;  // reposdir from the command line: dnf takes vars from the installroot
    }
    std::vector<std::filesystem::path> reposdirs = kDefaultReposdirs;
    if (const auto config_file = config_file_to_read(sources)) {
        auto sections = read_ini_file(*config_file);
        if (!sections) {
            if (sections.error().code == ErrorCode::NotFound) {
                return std::filesystem::path("/");  // load_repo_configs reports it
            }
            return tl::unexpected(std::move(sections.error()));
        }
        for (const ini::IniSection& section : *sections) {
            if (section.name != config::kMainSection) {
                continue;
            }
            for (const ini::IniEntry& entry : section.entries) {
                if (entry.key == "reposdir") {
                    reposdirs.clear();
                    for (std::string& item : config::split_list(entry.value)) {
                        reposdirs.emplace_back(std::move(item));
                    }
                }
            }
        }
    }
    const bool moved = reposdirs_beneath_installroot(root, std::move(reposdirs)).second;
    return moved ? root : std::filesystem::path("/");
}

std::string ConfigLocation::to_string() const {
    return line > 0 ? fmt::format("{}:{}", file, line) : file;
}

std::string ConfigWarning::to_string() const {
    return fmt::format("{}: {}", where.to_string(), message);
}

bool is_valid_repo_id(std::string_view id) {
    if (id.empty() || id == "." || id == "..") {
        return false;
    }
    return std::all_of(id.begin(), id.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '-' || c == '_' || c == '.' || c == ':';
    });
}

namespace {

// The repositories of one `.repo` file's `sections` (read_repo_file, read_repo_text).
Result<std::vector<RepoConfig>> repos_of_file(const std::vector<ini::IniSection>& sections,
                                              const std::string& shown, const VariableContext& vars,
                                              std::vector<ConfigWarning>& warnings) {
    std::vector<RepoConfig> repos;
    const MainSettings no_main;
    if (auto read = read_repo_sections(sections, shown, /*is_main_config=*/false, no_main, vars,
                                       repos, warnings);
        !read) {
        return tl::unexpected(std::move(read.error()));
    }
    if (auto unique = check_unique_ids(repos); !unique) {
        return tl::unexpected(std::move(unique.error()));
    }
    return repos;
}

}  // namespace

Result<std::vector<RepoConfig>> read_repo_file(const std::filesystem::path& path,
                                               const VariableContext& vars,
                                               std::vector<ConfigWarning>& warnings) {
    auto sections = read_ini_file(path);
    if (!sections) {
        return tl::unexpected(std::move(sections.error()));
    }
    return repos_of_file(*sections, path.string(), vars, warnings);
}

Result<std::vector<RepoConfig>> read_repo_text(std::string_view content, const std::string& shown,
                                               std::vector<ConfigWarning>& warnings) {
    auto sections = ini::parse_ini(content, shown);
    if (!sections) {
        return tl::unexpected(std::move(sections.error()));
    }
    return repos_of_file(*sections, shown, VariableContext{}, warnings);
}

Result<std::vector<RepoConfig>> load_repo_configs(const ConfigSources& sources,
                                                  const VariableContext& vars,
                                                  std::vector<ConfigWarning>& warnings) {
    // Setopts first: a malformed one fails before any file is read, and reposdir may come from one.
    auto setopts = parse_setopts(sources.setopts, warnings);
    if (!setopts) {
        return tl::unexpected(std::move(setopts.error()));
    }

    std::vector<RepoConfig> repos;
    MainSettings main;
    const std::optional<std::filesystem::path> config_file = config_file_to_read(sources);
    if (config_file) {
        auto sections = read_ini_file(*config_file);
        if (!sections) {
            if (sections.error().code == ErrorCode::NotFound) {
                sections.error().message = "config file not found";
            }
            return tl::unexpected(std::move(sections.error()));
        }
        const std::string file = config_file->string();
        for (const ini::IniSection& section : *sections) {
            if (section.name == config::kMainSection) {
                if (auto read = read_main_section(section, file, vars, main, warnings); !read) {
                    return tl::unexpected(std::move(read.error()));
                }
            }
        }
        if (auto read = read_repo_sections(*sections, file, /*is_main_config=*/true, main, vars,
                                           repos, warnings);
            !read) {
            return tl::unexpected(std::move(read.error()));
        }
    }

    main.excludepkgs.insert(main.excludepkgs.end(), sources.exclude_globs.begin(),
                            sources.exclude_globs.end());
    std::vector<std::filesystem::path> reposdirs =
        sources.reposdirs ? *sources.reposdirs
                          : reposdirs_beneath_installroot(
                                sources.installroot, main.reposdirs.value_or(kDefaultReposdirs))
                                .first;
    for (const Setopt& setopt : *setopts) {
        if (setopt.option == nullptr && !setopt.repo_glob && setopt.key == "reposdir") {
            reposdirs.clear();
            auto value = config::substitute(setopt.value, vars, config::UndefinedPolicy::Keep);
            for (std::string& item : config::split_list(*value)) {
                reposdirs.emplace_back(std::move(item));
            }
        }
    }
    for (const std::filesystem::path& directory : reposdirs) {
        auto files = list_repo_files(directory);
        if (!files) {
            return tl::unexpected(std::move(files.error()));
        }
        for (const std::filesystem::path& file : *files) {
            auto sections = read_ini_file(file);
            if (!sections) {
                return tl::unexpected(std::move(sections.error()));
            }
            if (auto read = read_repo_sections(*sections, file.string(), /*is_main_config=*/false,
                                               main, vars, repos, warnings);
                !read) {
                return tl::unexpected(std::move(read.error()));
            }
        }
    }

    for (const std::string& argument : sources.repofrompath) {
        auto parsed = repo_from_path(argument, sources.working_directory);
        if (!parsed) {
            return tl::unexpected(std::move(parsed.error()));
        }
        RepoConfig repo = main.defaults;
        repo.id = parsed->id;
        repo.name = parsed->name;
        repo.enabled = true;
        repo.gpgcheck = false;
        repo.defined_at = parsed->defined_at;
        repo.excludepkgs.clear();
        const config::RepoOption* baseurl = config::find_repo_option("baseurl");
        if (auto applied = apply_value(repo, *baseurl, "baseurl", parsed->baseurls.front(),
                                       repo.defined_at, fmt::format("repo '{}'", repo.id),
                                       fmt::format("'{}': ", argument), vars);
            !applied) {
            return tl::unexpected(std::move(applied.error()));
        }
        repos.push_back(std::move(repo));
    }

    if (auto unique = check_unique_ids(repos); !unique) {
        return tl::unexpected(std::move(unique.error()));
    }
    if (auto applied = apply_parsed_setopts(repos, *setopts, vars, warnings); !applied) {
        return tl::unexpected(std::move(applied.error()));
    }
    if (auto applied = apply_excludes(
            repos, main,
            sources.disable_excludes.empty() ? main.disable_excludes : sources.disable_excludes);
        !applied) {
        return tl::unexpected(std::move(applied.error()));
    }
    return repos;
}

Result<DnfMainSettings> load_dnf_main_settings(const ConfigSources& sources,
                                               const VariableContext& vars) {
    std::optional<std::string> cachedir;
    std::optional<std::string> weak;
    std::string weak_where;
    std::string cachedir_where;
    bool cachedir_from_setopt = false;
    if (const std::optional<std::filesystem::path> file = config_file_to_read(sources)) {
        auto sections = read_ini_file(*file);
        if (!sections) {
            if (sections.error().code == ErrorCode::NotFound) {
                sections.error().message = "config file not found";
            }
            return tl::unexpected(std::move(sections.error()));
        }
        for (const ini::IniSection& section : *sections) {
            if (section.name != config::kMainSection) {
                continue;
            }
            for (const ini::IniEntry& entry : section.entries) {
                const std::string where = fmt::format("{}:{}", file->string(), entry.line);
                if (entry.key == "cachedir") {
                    cachedir = entry.value;
                    cachedir_where = where;
                } else if (entry.key == "install_weak_deps") {
                    weak = entry.value;
                    weak_where = where;
                }
            }
        }
    }
    for (const std::string& argument : sources.setopts) {
        const std::size_t equals = argument.find('=');
        if (equals == std::string::npos) {
            continue;  // load_repo_configs reports it
        }
        const std::string_view view(argument);
        const std::string key = text::to_lower(trim(view.substr(0, equals)));
        if (key == "cachedir") {
            cachedir = std::string(trim(view.substr(equals + 1)));
            cachedir_where = "--setopt " + argument;
            cachedir_from_setopt = true;
        } else if (key == "install_weak_deps") {
            weak = std::string(trim(view.substr(equals + 1)));
            weak_where = "--setopt " + argument;
        }
    }
    DnfMainSettings settings;
    settings.cachedir = "/var/cache/dnf";
    if (cachedir) {
        auto value = config::substitute(*cachedir, vars, config::UndefinedPolicy::Keep);
        if (!value || value->empty() || value->front() != '/') {
            return make_error(ErrorCode::BadInput,
                              fmt::format("cachedir '{}' is not an absolute path", *cachedir),
                              cachedir_where);
        }
        settings.cachedir = *value;
    }
    if (weak) {
        const std::optional<bool> parsed = parse_config_bool(*weak);
        if (!parsed) {
            return make_error(ErrorCode::BadInput,
                              fmt::format("install_weak_deps '{}' is not a boolean", *weak),
                              weak_where);
        }
        settings.install_weak_deps = *parsed;
    }
    if (!cachedir_from_setopt) {
        // dnf 4 prepends the installroot to the configured cachedir, then applies --setopt.
        settings.cachedir = beneath(sources.installroot, settings.cachedir);
    }
    return settings;
}

}  // namespace rpmirror
