// One repository's package list, read and selected the same way for `sync` and `verify`.
#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "index/index.hpp"
#include "index/updateinfo.hpp"

namespace rpmirror {

Result<RepoPackages> read_repo_packages(const RepoPackageSource& source,
                                        const SelectionOptions& options) {
    std::shared_ptr<const PackageIndex> index = source.primary_parsed;
    if (!index) {
        PrimaryParseOptions parse_options;
        parse_options.decompress.expected_size = source.primary_open_size;
        parse_options.display_name = source.primary_name;
        auto parsed = parse_primary_file(source.primary_path, parse_options);
        if (!parsed) {
            return tl::unexpected(std::move(parsed.error()));
        }
        index = std::make_shared<const PackageIndex>(std::move(*parsed));
    }
    std::vector<ModuleStreamBuild> modules;
    if (options.newest_only && source.modules_path) {
        auto parsed = parse_modules_file(*source.modules_path, source.modules_name);
        if (!parsed) {
            return tl::unexpected(std::move(parsed.error()));
        }
        modules = std::move(*parsed);
    }
    std::vector<Advisory> advisories;
    std::vector<std::string> unknown_ids;
    // A closure's selection (only_nevras) was made from the advisories already.
    if (options.advisories.active() && !options.only_nevras) {
        if (!source.updateinfo_path) {
            return make_error(ErrorCode::BadInput,
                              "the repository publishes no advisories (no updateinfo record in "
                              "repomd.xml): --advisories and --advisory-severity cannot select "
                              "from it",
                              source.primary_name);
        }
        auto parsed = parse_updateinfo_file(*source.updateinfo_path, source.updateinfo_name);
        if (!parsed) {
            return tl::unexpected(std::move(parsed.error()));
        }
        advisories = std::move(*parsed);
        for (const std::string& id : options.advisories.ids) {
            if (std::none_of(advisories.begin(), advisories.end(),
                             [&](const Advisory& advisory) { return advisory.id == id; })) {
                unknown_ids.push_back(id);
            }
        }
    }
    RepoPackages packages;
    packages.selection = select_packages(*index, options, modules, advisories);
    for (const std::string& id : unknown_ids) {
        packages.warnings.push_back(
            fmt::format("--advisories: {} lists no advisory {}", source.updateinfo_name, id));
    }
    packages.module_streams = modules.size();
    for (const IndexIssue& issue : index->issues()) {
        if (issue.skipped_package.empty()) {
            packages.warnings.push_back(issue.message);
        } else {
            packages.skipped.push_back(issue);
        }
    }
    // A hostile primary.xml may list thousands: the first few say enough.
    const std::vector<std::string>& conflicts = packages.selection.conflicts;
    for (std::size_t shown = 0; shown < conflicts.size() && shown < kConflictsShown; ++shown) {
        packages.warnings.push_back(conflicts[shown]);
    }
    if (conflicts.size() > kConflictsShown) {
        packages.warnings.push_back(
            fmt::format("... and {} more duplicate entries with different checksums or sizes",
                        conflicts.size() - kConflictsShown));
    }
    if (packages.selection.duplicate_locations > 0) {
        packages.warnings.push_back(fmt::format(
            "{} duplicate <package> entries for locations already listed (the first: '{}'); "
            "each location is downloaded once",
            packages.selection.duplicate_locations, packages.selection.first_duplicate_href));
    }
    packages.index = std::move(index);
    return packages;
}

}  // namespace rpmirror
