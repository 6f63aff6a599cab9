// `dnf install ...` read as dnf 4 reads it, for a prefetch (rpmirror/prefetch/prefetch.hpp).
#include <algorithm>
#include <array>
#include <filesystem>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "config/repo_files.hpp"
#include "config/repo_options.hpp"
#include "prefetch/prefetch.hpp"
#include "resolve/resolve.hpp"
#include "rpmirror/prefetch/prefetch.hpp"

namespace rpmirror {

namespace {

// dnf's options that change nothing a prefetch models: flags, then options taking a value.
constexpr std::array<std::string_view, 18> kHarmlessFlags = {
    "-y",
    "--assumeyes",
    "-v",
    "--verbose",
    "--nogpgcheck",
    "-b",
    "--best",
    "--nobest",
    "--allowerasing",
    "--skip-broken",
    "--noplugins",
    "--nodocs",
    "--noautoremove",
    "--downloadonly",
    "-4",
    "-6",
    "--obsoletes",
    "--showduplicates",
};
constexpr std::array<std::string_view, 10> kHarmlessValued = {
    "-d",
    "--debuglevel",
    "-e",
    "--errorlevel",
    "--rpmverbosity",
    "--color",
    "--comment",
    "--enableplugin",
    "--disableplugin",
    "--downloaddir",
};

bool contains(std::span<const std::string_view> list, std::string_view word) {
    return std::find(list.begin(), list.end(), word) != list.end();
}

tl::unexpected<Error> unsupported(std::string_view word, std::string_view why) {
    return make_error(ErrorCode::Unsupported, fmt::format("{}: {}", word, why), std::string(word));
}

}  // namespace

Result<DnfInstallCommand> parse_dnf_install_command(std::span<const std::string> argv) {
    if (argv.empty()) {
        return unsupported("", "no command");
    }
    const std::string program = std::filesystem::path(argv[0]).filename().string();
    if (program != "dnf" && program != "dnf-3" && program != "yum") {
        return unsupported(argv[0], "not dnf (the prefetch reads dnf's command line)");
    }
    DnfInstallCommand command;
    std::vector<std::string> positional;
    bool options_done = false;
    for (std::size_t index = 1; index < argv.size(); ++index) {
        const std::string& word = argv[index];
        if (options_done || word.empty() || word[0] != '-' || word == "-") {
            positional.push_back(word);
            continue;
        }
        if (word == "--") {
            options_done = true;
            continue;
        }
        // The option's name and, for "--name=value" / "-cVALUE", its attached value.
        std::string name = word;
        std::optional<std::string> attached;
        if (word.starts_with("--")) {
            if (const std::size_t equals = word.find('='); equals != std::string::npos) {
                name = word.substr(0, equals);
                attached = word.substr(equals + 1);
            }
        } else if (word.size() > 2) {
            name = word.substr(0, 2);
            attached = word.substr(2);
        }
        const auto value = [&]() -> Result<std::string> {
            if (attached) {
                return *attached;
            }
            if (index + 1 >= argv.size()) {
                return unsupported(word, "needs a value");
            }
            return argv[++index];
        };
        if (name == "-q" || name == "--quiet") {
            command.quiet = true;
        } else if (name == "--refresh") {
            command.refresh = true;
        } else if (name == "-C" || name == "--cacheonly") {
            return unsupported(word, "dnf will download nothing");
        } else if (name == "--assumeno") {
            return unsupported(word, "dnf will install nothing");
        } else if (!attached && contains(kHarmlessFlags, name)) {
            continue;
        } else if (contains(kHarmlessValued, name)) {
            if (auto skipped = value(); !skipped) {
                return tl::unexpected(std::move(skipped.error()));
            }
        } else {
            const bool takes_value =
                name == "--installroot" || name == "-c" || name == "--config" ||
                name == "--setopt" || name == "--releasever" || name == "--forcearch" ||
                name == "-x" || name == "--exclude" || name == "--excludepkgs" ||
                name == "--disableexcludes" || name == "--disableexcludepkgs" ||
                name == "--repofrompath" || name == "--repo" || name == "--repoid" ||
                name == "--enablerepo" || name == "--disablerepo";
            if (!takes_value) {
                return unsupported(word, "an option the prefetch does not know");
            }
            auto given = value();
            if (!given) {
                return tl::unexpected(std::move(given.error()));
            }
            if (name == "--installroot") {
                command.installroot = *given;
            } else if (name == "-c" || name == "--config") {
                command.config_file = *given;
            } else if (name == "--setopt") {
                command.setopts.push_back(*given);
            } else if (name == "--releasever") {
                command.releasevers.push_back(*given);
            } else if (name == "--forcearch") {
                command.forcearch = *given;
            } else if (name == "-x" || name == "--exclude" || name == "--excludepkgs") {
                command.excludes.push_back(*given);
            } else if (name == "--disableexcludes" || name == "--disableexcludepkgs") {
                command.disable_excludes.push_back(*given);
            } else if (name == "--repofrompath") {
                command.repofrompath.push_back(*given);
            } else if (name == "--repo" || name == "--repoid") {
                for (std::string& pattern : config::split_list(*given)) {
                    command.selection.repo_patterns.push_back(std::move(pattern));
                }
            } else {
                for (std::string& pattern : config::split_list(*given)) {
                    command.selection.toggles.push_back(
                        {name == "--enablerepo", std::move(pattern)});
                }
            }
        }
    }
    if (positional.empty() || (positional.front() != "install" && positional.front() != "in")) {
        return unsupported(positional.empty() ? std::string_view(argv[0]) : positional.front(),
                           "not `dnf install` (the only command prefetched)");
    }
    for (std::size_t index = 1; index < positional.size(); ++index) {
        const std::string& spec = positional[index];
        if (spec.starts_with("@^")) {
            return unsupported(spec, "environment groups are not prefetched");
        }
        if (spec.starts_with('@') &&
            (spec.find_first_of(":/") != std::string::npos || spec.size() == 1)) {
            return unsupported(spec, "module specs are not prefetched");
        }
        if (spec.starts_with('@')) {
            command.groups.push_back(spec.substr(1));
            continue;
        }
        if (spec.find("://") != std::string::npos ||
            (spec.ends_with(".rpm") && spec.find('/') != std::string::npos)) {
            return unsupported(spec, "a local file or URL");
        }
        command.packages.push_back(spec);
    }
    if (command.packages.empty() && command.groups.empty()) {
        return unsupported("install", "no package named");
    }
    return command;
}

Result<PrefetchReport> prefetch_for_dnf_install(const DnfInstallCommand& install,
                                                std::stop_token stop) {
    RepoSourceRequest sources;
    sources.config_file = install.config_file;
    sources.setopts = install.setopts;
    sources.releasevers = install.releasevers;
    sources.forcearch = install.forcearch;
    sources.excludes = install.excludes;
    sources.disable_excludes = install.disable_excludes;
    sources.repofrompath = install.repofrompath;
    sources.installroot = install.installroot;
    auto loaded = resolve_repo_sources(sources);
    if (!loaded) {
        return tl::unexpected(std::move(loaded.error()));
    }
    std::vector<ConfigWarning> warnings;
    auto repos = load_repo_configs(loaded->sources, loaded->variables, warnings);
    if (!repos) {
        return tl::unexpected(std::move(repos.error()));
    }
    auto selected = select_repos(std::move(*repos), install.selection, warnings);
    if (!selected) {
        return tl::unexpected(std::move(selected.error()));
    }
    auto main = load_dnf_main_settings(loaded->sources, loaded->variables);
    if (!main) {
        return tl::unexpected(std::move(main.error()));
    }
    PrefetchRequest request;
    request.repos = std::move(*selected);
    request.cachedir = main->cachedir;
    request.packages = install.packages;
    request.groups = install.groups;
    request.installroot = loaded->sources.installroot;
    request.arch =
        closure_arch(install.forcearch.empty() ? std::vector<std::string>{}
                                               : std::vector<std::string>{install.forcearch});
    request.weak_dependencies = main->install_weak_deps;
    request.refresh = install.refresh;
    return prefetch_for_dnf(request, stop);
}

}  // namespace rpmirror
