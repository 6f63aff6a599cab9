// The options checked once for the command line and for jobs: where a repository and its
// packages go (--upstream-layout, --mirror-url, --flatten-hrefs, --treeinfo), and what a
// dependency closure (--packages, --packages-file, --with-dependencies) takes.
#include <cerrno>
#include <fstream>
#include <span>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "config/repo_files.hpp"
#include "rpmirror/config/config.hpp"
#include "rpmirror/sync/sync_options.hpp"
#include "sync/sync_options.hpp"

namespace rpmirror {

std::string_view download_policy_name(DownloadPolicy policy) {
    switch (policy) {
        case DownloadPolicy::OnDemand:
            return "on-demand";
        case DownloadPolicy::Streamed:
            return "streamed";
        case DownloadPolicy::Immediate:
            break;
    }
    return "immediate";
}

Result<DownloadPolicy> parse_download_policy(std::string_view text, std::string_view shown) {
    for (const DownloadPolicy policy :
         {DownloadPolicy::Immediate, DownloadPolicy::OnDemand, DownloadPolicy::Streamed}) {
        if (text == download_policy_name(policy)) {
            return policy;
        }
    }
    return make_error(ErrorCode::BadInput,
                      fmt::format("unknown download policy '{}' (expected immediate, on-demand or "
                                  "streamed)",
                                  text),
                      std::string(shown));
}

Result<Prefetch> parse_prefetch(std::string_view text, std::string_view shown) {
    Prefetch prefetch;
    const std::string value(text);
    std::vector<std::string> words = split_lists(std::span<const std::string>(&value, 1));
    const auto bad = [&](std::string why) -> Result<Prefetch> {
        return make_error(ErrorCode::BadInput,
                          fmt::format("invalid prefetch '{}': {} (expected newest, closure, or "
                                      "package names or globs separated by commas)",
                                      text, why),
                          std::string(shown));
    };
    if (words.empty()) {
        return bad("empty");
    }
    for (std::string& word : words) {
        if (word == "newest") {
            prefetch.newest = true;
            continue;
        }
        if (word == "closure") {
            prefetch.closure = true;
            continue;
        }
        for (const char c : word) {
            if (c == '/' || c == '"' || c == '\'' || c == '\\' ||
                static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
                return bad(fmt::format("'{}' is no package name or glob", word));
            }
        }
        prefetch.globs.push_back(std::move(word));
    }
    if (prefetch.newest && !prefetch.globs.empty()) {
        return bad("newest is not combined with package names");
    }
    if (prefetch.closure && (prefetch.newest || !prefetch.globs.empty())) {
        return bad("closure is not combined with anything");
    }
    return prefetch;
}

SelectionOptions prefetch_selection(const Prefetch& prefetch, const SelectionOptions& selection) {
    SelectionOptions chosen;
    chosen.arches = selection.arches;
    chosen.source_only = selection.source_only;
    if (prefetch.closure) {
        chosen.only_nevras = prefetch.nevras.value_or(std::vector<std::string>{});
    } else if (prefetch.newest) {
        chosen.include_globs = selection.include_globs;
        chosen.exclude_globs = selection.exclude_globs;
        chosen.newest_only = true;
        chosen.keep_versions = 1;
    } else {
        chosen.include_globs = prefetch.globs;
    }
    return chosen;
}

Result<void> check_placement_options(const SyncOptions& options) {
    const std::string destination = options.download_path.string();
    if (options.prefetch.active() && options.download_policy != DownloadPolicy::OnDemand) {
        return make_error(ErrorCode::BadInput,
                          fmt::format("prefetch needs download-policy on-demand (not {}): the "
                                      "packages it fetches are kept beside those fetched on "
                                      "demand",
                                      download_policy_name(options.download_policy)),
                          "--prefetch");
    }
    if (options.download_policy != DownloadPolicy::Immediate) {
        const std::string_view policy = download_policy_name(options.download_policy);
        if (!options.download_metadata) {
            return make_error(ErrorCode::BadInput,
                              fmt::format("{} needs --download-metadata (job key "
                                          "download-metadata = 1): `rpmirror serve` fetches "
                                          "packages by the metadata the sync publishes",
                                          policy),
                              "--download-policy");
        }
        if (options.upstream_layout || options.flatten_hrefs || options.treeinfo) {
            return make_error(ErrorCode::BadInput,
                              fmt::format("{} is not combined with --upstream-layout, "
                                          "--flatten-hrefs or --treeinfo (served packages are "
                                          "fetched at the published href beneath the repository)",
                                          policy),
                              "--download-policy");
        }
    }
    if (!options.mirror_url.empty()) {
        if (!options.upstream_layout) {
            return make_error(ErrorCode::BadInput,
                              "--mirror-url needs --upstream-layout (it names where clients reach "
                              "the upstream layout this mirror keeps)",
                              options.mirror_url);
        }
        const std::string& url = options.mirror_url;
        const bool web = url.starts_with("http://") || url.starts_with("https://");
        if ((!web && !url.starts_with("file:///")) ||
            url.find_first_of(" \t\r\n") != std::string::npos ||
            (web && url.find('/', url.find("//") + 2) == url.find("//") + 2)) {
            return make_error(ErrorCode::BadInput,
                              "--mirror-url: not an http://, https:// or file:/// URL with a host",
                              url);
        }
    }
    if (options.keep_releases > 0 && (!options.upstream_layout || !options.delete_unlisted)) {
        return make_error(ErrorCode::BadInput,
                          "needs --upstream-layout and --delete (it removes the releases beyond "
                          "the N synced most recently beneath the layout root)",
                          "--keep-releases");
    }
    if (options.skip_bad_images && !options.treeinfo) {
        return make_error(ErrorCode::BadInput, "--skip-bad-images needs --treeinfo", destination);
    }
    if (options.treeinfo) {
        if (options.metadata_path || options.upstream_layout || options.flatten_hrefs) {
            return make_error(ErrorCode::BadInput,
                              "--treeinfo mirrors the tree's repositories where the tree has them: "
                              "not with --metadata-path, --upstream-layout or --flatten-hrefs",
                              destination);
        }
    }
    if (options.packages_by_file_name && (options.download_metadata || options.upstream_layout ||
                                          options.flatten_hrefs || options.treeinfo)) {
        return make_error(ErrorCode::BadInput,
                          "packages placed by file name are not combined with "
                          "--download-metadata, --upstream-layout, --flatten-hrefs or --treeinfo "
                          "(no metadata names them there)",
                          destination);
    }
    if (options.flatten_hrefs && options.upstream_layout) {
        return make_error(ErrorCode::BadInput,
                          "--flatten-hrefs with --upstream-layout: one keeps upstream's hrefs, the "
                          "other rewrites them (choose one)",
                          destination);
    }
    if (options.flatten_hrefs && options.upstream_metadata) {
        return make_error(ErrorCode::BadInput,
                          "--flatten-hrefs with --upstream-metadata: upstream's metadata names the "
                          "packages outside the mirror (leave --upstream-metadata out)",
                          destination);
    }
    if (!options.upstream_layout) {
        return {};
    }
    if (options.metadata_path) {
        return make_error(ErrorCode::BadInput,
                          "--upstream-layout with --metadata-path: the metadata must stay where "
                          "its package hrefs resolve from (leave --metadata-path out)",
                          options.metadata_path->string());
    }
    if (options.safe_write_path) {
        return make_error(ErrorCode::BadInput,
                          "--upstream-layout with --safe-write-path: the layout decides where "
                          "packages may live (leave --safe-write-path out)",
                          options.safe_write_path->string());
    }
    return {};
}

Result<void> check_closure_options(const SyncOptions& options) {
    const auto refused = [](std::string_view option, std::string_view why) {
        return make_error(ErrorCode::BadInput,
                          fmt::format("cannot be combined with --with-dependencies: {}", why),
                          std::string(option));
    };
    const SelectionOptions& selection = options.selection;
    if (selection.source_only) {
        return refused("--source", "source packages are not installed, so have no closure");
    }
    if (selection.min_build_time) {
        return refused("--min-buildtime", "the closure picks each package's version");
    }
    if (options.treeinfo) {
        return refused("--treeinfo", "an installation tree is mirrored whole");
    }
    if (options.upstream_layout) {
        return refused("--upstream-layout",
                       "a closure over several releases of one repository is not built yet");
    }
    return {};
}

Result<std::vector<std::string>> read_package_list(const std::filesystem::path& path) {
    std::ifstream stream(path, std::ios::binary);
    if (!stream) {
        return make_errno_error("cannot read the package list", path.string(), errno);
    }
    std::vector<std::string> specs;
    for (std::string line; std::getline(stream, line);) {
        line = line.substr(0, line.find('#'));
        std::istringstream words(line);
        for (std::string word; words >> word;) {
            specs.push_back(std::move(word));
        }
    }
    if (stream.bad()) {
        return make_errno_error("cannot read the package list", path.string(), errno);
    }
    if (specs.empty()) {
        return make_error(ErrorCode::BadInput, "the package list names no package", path.string());
    }
    return specs;
}

}  // namespace rpmirror
