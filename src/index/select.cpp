// Package selection with dnf reposync's semantics (dnf-plugins-core reposync.py get_pkglist):
//   repo excludes (includepkgs/excludepkgs) -> query.latest() if --newest-only ->
//   arch == src if --source, else arch in --arch -> (rpmirror) build-time floor ->
//   one download per location.
#include <fnmatch.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <unordered_map>

#include <fmt/format.h>

#include "rpmirror/index.hpp"

namespace rpmirror {
namespace {

bool glob_matches(const std::string& pattern, const std::string& candidate) {
    return ::fnmatch(pattern.c_str(), candidate.c_str(), 0) == 0;
}

// True iff any pattern matches any of the NEVRA forms dnf's Subject tries for a package spec.
bool matches_any(const std::vector<std::string>& patterns, const PackageView& package) {
    const std::string name(package.name);
    const std::string name_arch = fmt::format("{}.{}", package.name, package.arch);
    const std::string name_version = fmt::format("{}-{}", package.name, package.version);
    const std::string nvr = fmt::format("{}-{}", name_version, package.release);
    const std::string nvra = fmt::format("{}.{}", nvr, package.arch);
    const std::string nevra = fmt::format("{}-{}:{}-{}.{}", package.name, package.epoch,
                                          package.version, package.release, package.arch);
    for (const std::string& pattern : patterns) {
        for (const std::string* candidate :
             {&name, &name_arch, &name_version, &nvr, &nvra, &nevra}) {
            if (glob_matches(pattern, *candidate)) {
                return true;
            }
        }
    }
    return false;
}

// hawkey's Query::latest(): per (name, arch), every package whose EVR equals the highest.
std::vector<std::size_t> keep_newest(const PackageIndex& index,
                                     const std::vector<std::size_t>& positions) {
    std::vector<std::size_t> sorted = positions;
    std::stable_sort(sorted.begin(), sorted.end(), [&](std::size_t left, std::size_t right) {
        const PackageView a = index[left];
        const PackageView b = index[right];
        if (a.name != b.name) {
            return a.name < b.name;
        }
        if (a.arch != b.arch) {
            return a.arch < b.arch;
        }
        return compare_evr(a.evr(), b.evr()) > 0;  // newest first within a name.arch
    });
    std::vector<bool> keep(index.size(), false);
    for (std::size_t group_start = 0; group_start < sorted.size();) {
        const PackageView newest = index[sorted[group_start]];
        std::size_t cursor = group_start;
        while (cursor < sorted.size()) {
            const PackageView candidate = index[sorted[cursor]];
            if (candidate.name != newest.name || candidate.arch != newest.arch) {
                break;
            }
            if (compare_evr(candidate.evr(), newest.evr()) == 0) {
                keep[sorted[cursor]] = true;
            }
            ++cursor;
        }
        group_start = cursor;
    }
    std::vector<std::size_t> result;
    for (const std::size_t position : positions) {
        if (keep[position]) {
            result.push_back(position);
        }
    }
    return result;
}

}  // namespace

Selection select_packages(const PackageIndex& index, const SelectionOptions& options) {
    std::vector<std::size_t> positions;
    positions.reserve(index.size());
    for (std::size_t position = 0; position < index.size(); ++position) {
        const PackageView package = index[position];
        if (!options.include_globs.empty() && !matches_any(options.include_globs, package)) {
            continue;
        }
        if (!options.exclude_globs.empty() && matches_any(options.exclude_globs, package)) {
            continue;
        }
        positions.push_back(position);
    }

    if (options.newest_only) {
        positions = keep_newest(index, positions);
    }

    Selection selection;
    // Location -> position of the first selected entry there.
    std::unordered_map<std::string, std::size_t> first_at_location;
    first_at_location.reserve(positions.size());
    for (const std::size_t position : positions) {
        const PackageView package = index[position];
        if (options.source_only) {
            if (package.arch != "src") {
                continue;
            }
        } else if (!options.arches.empty() &&
                   std::find(options.arches.begin(), options.arches.end(), package.arch) ==
                       options.arches.end()) {
            continue;
        }
        if (options.min_build_time && package.build_time < *options.min_build_time) {
            continue;
        }
        std::string location;
        location.reserve(package.location_base.size() + 1 + package.location_href.size());
        location.append(package.location_base).append(1, '\0').append(package.location_href);
        const auto [existing, inserted] = first_at_location.emplace(std::move(location), position);
        if (!inserted) {
            if (selection.duplicate_locations++ == 0) {
                selection.first_duplicate_href = package.location_href;
            }
            const PackageView first = index[existing->second];
            if (first.checksum_type != package.checksum_type ||
                !std::equal(first.digest.begin(), first.digest.end(), package.digest.begin(),
                            package.digest.end()) ||
                first.package_size != package.package_size) {
                selection.conflicts.push_back(fmt::format(
                    "{}: listed twice with different checksums or sizes ({} {} {} bytes and "
                    "{} {} {} bytes); the first entry is used",
                    package.location_href, checksum_type_name(first.checksum_type),
                    first.checksum_hex(), first.package_size,
                    checksum_type_name(package.checksum_type), package.checksum_hex(),
                    package.package_size));
            }
            continue;
        }
        selection.positions.push_back(position);
    }
    return selection;
}

}  // namespace rpmirror
