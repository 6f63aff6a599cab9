// Repository sources as dnf's command line gives them (rpmirror/config/config.hpp).
#include <algorithm>

#include <fmt/format.h>

#include "config/repo_files.hpp"
#include "config/repo_options.hpp"
#include "rpmirror/config/config.hpp"

namespace rpmirror {

std::vector<std::string> split_lists(std::span<const std::string> values) {
    std::vector<std::string> items;
    for (const std::string& value : values) {
        std::vector<std::string> split = config::split_list(value);
        std::move(split.begin(), split.end(), std::back_inserter(items));
    }
    return items;
}

std::filesystem::path installroot_of(const RepoSourceRequest& request) {
    if (request.installroot.empty()) {
        return "/";
    }
    return std::filesystem::absolute(request.installroot).lexically_normal();
}

Result<ResolvedSources> resolve_repo_sources(const RepoSourceRequest& request) {
    VariableOptions variable_options;
    if (!request.forcearch.empty()) {
        const bool is_arch_name =
            std::all_of(request.forcearch.begin(), request.forcearch.end(), [](char c) {
                return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '_';
            });
        if (!is_arch_name) {
            return make_error(ErrorCode::BadInput,
                              fmt::format("'{}' is not an architecture name", request.forcearch),
                              "--forcearch");
        }
        variable_options.machine = request.forcearch;
    }
    if (request.releasevers.size() > 1) {
        return make_error(ErrorCode::BadInput,
                          fmt::format("given {} times: only `rpmirror sync --upstream-layout` "
                                      "mirrors several releases in one run",
                                      request.releasevers.size()),
                          "--releasever");
    }
    if (!request.releasevers.empty() && !request.releasevers.front().empty()) {
        variable_options.releasever = request.releasevers.front();
    }
    if (!request.basearch.empty()) {
        variable_options.basearch = request.basearch;
    }
    ConfigSources sources;
    if (!request.config_file.empty()) {
        sources.config_file = request.config_file;
    }
    if (!request.reposdirs.empty()) {
        sources.reposdirs.emplace(request.reposdirs.begin(), request.reposdirs.end());
    }
    sources.repofrompath = request.repofrompath;
    sources.setopts = request.setopts;
    sources.exclude_globs = split_lists(request.excludes);
    sources.disable_excludes = split_lists(request.disable_excludes);
    sources.installroot = installroot_of(request);
    if (!request.varsdirs.empty()) {
        // Given on the command line: the host's directories, as dnf.
        variable_options.varsdirs.assign(request.varsdirs.begin(), request.varsdirs.end());
    } else {
        auto root = variables_root(sources);
        if (!root) {
            return tl::unexpected(std::move(root.error()));
        }
        if (*root != "/") {
            for (std::filesystem::path& directory : variable_options.varsdirs) {
                directory = *root / directory.relative_path();
            }
        }
    }
    auto variables = make_variable_context(variable_options);
    if (!variables) {
        return tl::unexpected(std::move(variables.error()));
    }
    return ResolvedSources{std::move(sources), std::move(*variables)};
}

Result<std::vector<RepoConfig>> load_repo_sources(const RepoSourceRequest& request,
                                                  std::vector<ConfigWarning>& warnings) {
    auto resolved = resolve_repo_sources(request);
    if (!resolved) {
        return tl::unexpected(std::move(resolved.error()));
    }
    return load_repo_configs(resolved->sources, resolved->variables, warnings);
}

}  // namespace rpmirror
