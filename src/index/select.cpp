// Package selection with dnf reposync's semantics (dnf-plugins-core reposync.py get_pkglist):
//   repo excludes (includepkgs/excludepkgs) -> query.latest() if --newest-only (_get_latest with
//   module streams; the N newest with --keep-versions N) ->
//   arch == src if --source, else arch in --arch -> (rpmirror) build-time floor ->
//   one download per location.
#include <fnmatch.h>

#include <charconv>
#include <ctime>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "checksum/hasher.hpp"
#include "index/index.hpp"
#include "index/updateinfo.hpp"

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
    const std::string nevra = closure_nevra(package.name, std::to_string(package.epoch),
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

// hawkey's Query::latest(), generalised to `versions` EVRs: per (name, arch), every package whose
// EVR is one of the `versions` highest distinct EVRs (latest() is versions = 1).
std::vector<std::size_t> keep_newest(const PackageIndex& index,
                                     const std::vector<std::size_t>& positions,
                                     std::uint32_t versions) {
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
        std::uint32_t evrs_seen = 0;
        Evr previous = newest.evr();
        while (cursor < sorted.size()) {
            const PackageView candidate = index[sorted[cursor]];
            if (candidate.name != newest.name || candidate.arch != newest.arch) {
                break;
            }
            if (evrs_seen == 0 || compare_evr(candidate.evr(), previous) != 0) {
                ++evrs_seen;  // sorted newest first: a different EVR is the next older one
                previous = candidate.evr();
            }
            if (evrs_seen <= versions) {
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

// dnf 4 reposync's _get_latest (dnf-plugins-core reposync.py), extended to `versions` (N): the
// union of
//  - the N newest EVRs per name.arch of the packages no module stream lists;
//  - per name:stream, every package of its N highest versions and of the highest version holding
//    each of the stream's N newest EVRs per name.arch (a version's contexts all count).
// Only packages in `positions` (the repository's packages after include/exclude) are returned.
std::vector<std::size_t> keep_newest_modular(const PackageIndex& index,
                                             const std::vector<std::size_t>& positions,
                                             std::span<const ModuleStreamBuild> modules,
                                             std::uint32_t versions) {
    std::unordered_map<std::string, std::vector<std::size_t>> by_nevra;
    for (const std::size_t position : positions) {
        by_nevra[index[position].strict_nevra()].push_back(position);
    }
    // name:stream -> version -> builds; artifact -> name:stream -> highest version holding it.
    std::map<std::string, std::map<std::uint64_t, std::vector<const ModuleStreamBuild*>>> streams;
    std::unordered_map<std::string, std::unordered_map<std::string, std::uint64_t>> highest_with;
    std::unordered_set<std::string> modular;
    for (const ModuleStreamBuild& build : modules) {
        const std::string name_stream = build.name + ":" + build.stream;
        streams[name_stream][build.version].push_back(&build);
        for (const std::string& artifact : build.artifacts) {
            modular.insert(artifact);
            std::uint64_t& highest = highest_with[artifact][name_stream];
            highest = std::max(highest, build.version);
        }
    }
    std::vector<std::size_t> non_modular;
    for (const std::size_t position : positions) {
        if (!modular.contains(index[position].strict_nevra())) {
            non_modular.push_back(position);
        }
    }
    std::vector<bool> keep(index.size(), false);
    for (const std::size_t position : keep_newest(index, non_modular, versions)) {
        keep[position] = true;
    }
    const auto positions_of = [&by_nevra](const std::string& artifact) {
        const auto found = by_nevra.find(artifact);
        return found == by_nevra.end() ? std::vector<std::size_t>() : found->second;
    };
    for (const auto& [name_stream, stream_versions] : streams) {
        std::set<std::uint64_t> chosen;
        for (auto newest = stream_versions.rbegin();
             newest != stream_versions.rend() && chosen.size() < versions; ++newest) {
            chosen.insert(newest->first);
        }
        std::vector<std::size_t> stream_packages;
        for (const auto& [version, builds] : stream_versions) {
            for (const ModuleStreamBuild* build : builds) {
                for (const std::string& artifact : build->artifacts) {
                    const std::vector<std::size_t> found = positions_of(artifact);
                    stream_packages.insert(stream_packages.end(), found.begin(), found.end());
                }
            }
        }
        std::sort(stream_packages.begin(), stream_packages.end());
        stream_packages.erase(std::unique(stream_packages.begin(), stream_packages.end()),
                              stream_packages.end());
        for (const std::size_t newest : keep_newest(index, stream_packages, versions)) {
            chosen.insert(highest_with[index[newest].strict_nevra()][name_stream]);
        }
        for (const std::uint64_t version : chosen) {
            for (const ModuleStreamBuild* build : stream_versions.at(version)) {
                for (const std::string& artifact : build->artifacts) {
                    for (const std::size_t position : positions_of(artifact)) {
                        keep[position] = true;
                    }
                }
            }
        }
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

Result<std::uint32_t> parse_keep_versions(std::string_view text) {
    constexpr std::uint32_t kMostVersions = 1'000'000;
    std::uint32_t versions = 0;
    const auto [number_end, error] =
        std::from_chars(text.data(), text.data() + text.size(), versions);
    if (text.empty() || error != std::errc() || number_end != text.data() + text.size() ||
        versions < 1 || versions > kMostVersions) {
        return make_error(ErrorCode::BadInput,
                          fmt::format("expected the number of versions to keep per name.arch, "
                                      "a whole number from 1 to {}",
                                      kMostVersions),
                          "--keep-versions " + std::string(text));
    }
    return versions;
}

Result<std::int64_t> parse_min_build_time(std::string_view text) {
    const std::string copy(text);
    std::tm date{};
    const char* end = ::strptime(copy.c_str(), "%Y-%m-%d", &date);
    if (end != nullptr && *end == '\0' && copy.size() >= 8 && copy[4] == '-') {
        return static_cast<std::int64_t>(::timegm(&date));
    }
    std::int64_t seconds = 0;
    const auto [number_end, error] =
        std::from_chars(text.data(), text.data() + text.size(), seconds);
    if (!text.empty() && error == std::errc() && number_end == text.data() + text.size()) {
        return seconds;
    }
    return make_error(ErrorCode::BadInput, "expected YYYY-MM-DD or seconds since the epoch",
                      "--min-buildtime " + copy);
}

Selection select_packages(const PackageIndex& index, const SelectionOptions& options,
                          std::span<const ModuleStreamBuild> modules,
                          std::span<const Advisory> advisories) {
    std::unordered_set<std::string> advised;  // the NEVRAs the selected advisories list
    if (options.advisories.active()) {
        for (const Advisory& advisory : advisories) {
            if (advisory_selected(advisory, options.advisories, options.as_of)) {
                advised.insert(advisory.nevras.begin(), advisory.nevras.end());
            }
        }
    }
    std::vector<std::size_t> positions;
    positions.reserve(index.size());
    if (options.only_nevras) {
        // A dependency closure: exactly its packages, whatever their arch or version.
        const std::unordered_set<std::string> wanted(options.only_nevras->begin(),
                                                     options.only_nevras->end());
        for (std::size_t position = 0; position < index.size(); ++position) {
            const PackageView package = index[position];
            if (wanted.contains(closure_nevra(package.name, std::to_string(package.epoch),
                                              package.version, package.release, package.arch))) {
                positions.push_back(position);
            }
        }
    }
    for (std::size_t position = 0; !options.only_nevras && position < index.size(); ++position) {
        const PackageView package = index[position];
        if (!options.include_globs.empty() && !matches_any(options.include_globs, package)) {
            continue;
        }
        if (!options.exclude_globs.empty() && matches_any(options.exclude_globs, package)) {
            continue;
        }
        if (options.as_of && package.build_time > *options.as_of) {
            continue;
        }
        if (options.advisories.active() && !advised.contains(package.strict_nevra())) {
            continue;
        }
        positions.push_back(position);
    }

    if (options.newest_only && !options.only_nevras) {
        const std::uint32_t versions = std::max<std::uint32_t>(options.keep_versions, 1);
        positions = modules.empty() ? keep_newest(index, positions, versions)
                                    : keep_newest_modular(index, positions, modules, versions);
    }

    Selection selection;
    // Location -> position of the first selected entry there.
    std::unordered_map<std::string, std::size_t> first_at_location;
    first_at_location.reserve(positions.size());
    for (const std::size_t position : positions) {
        const PackageView package = index[position];
        if (options.only_nevras) {
            // The closure's packages, whatever their arch or build time.
        } else if (options.source_only) {
            if (package.arch != "src") {
                continue;
            }
        } else if (!options.arches.empty() &&
                   std::find(options.arches.begin(), options.arches.end(), package.arch) ==
                       options.arches.end()) {
            continue;
        }
        if (!options.only_nevras && options.min_build_time &&
            package.build_time < *options.min_build_time) {
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
