// Which packages of a repository are mirrored (SelectionOptions: --arch, --source,
// --newest-only, includepkgs/excludepkgs, --min-buildtime, --as-of, --advisories, a dependency
// closure), and the parsers of the options that set it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/index/updateinfo.hpp"
#include "rpmirror/util/error.hpp"

namespace rpmirror {

struct SelectionOptions {
    // Exact arch names (--arch, repeatable); empty = every arch, including src.
    // "noarch" is not implied. Ignored when `source_only` is set, as in dnf.
    std::vector<std::string> arches;
    bool source_only = false;  // --source: only arch "src"
    // --newest-only / --keep-versions N: the `keep_versions` highest EVRs per name.arch (all
    // packages of a kept EVR, ties included). Off: every version.
    bool newest_only = false;
    std::uint32_t keep_versions = 1;  // >= 1; only read with newest_only (-n is 1)
    // includepkgs / excludepkgs: fnmatch globs matched against the forms dnf's Subject accepts:
    // name, name.arch, name-version, name-version-release, name-version-release.arch and
    // name-epoch:version-release.arch. A non-empty include list keeps only matching packages;
    // an exclude match always removes. Applied before newest_only, as dnf applies repo excludes
    // to the sack before the query.
    std::vector<std::string> include_globs;
    std::vector<std::string> exclude_globs;
    // --min-buildtime: keep packages with build_time >= this (seconds since the epoch).
    std::optional<std::int64_t> min_build_time;
    // --as-of (parse_as_of): the repository as it stood then: packages with build_time <= this,
    // applied before newest_only (the newest as of that date); advisories issued by then.
    std::optional<std::int64_t> as_of;
    // --advisories, --advisory-severity: only packages that an advisory they select (issued by
    // `as_of`, when set) lists, by NEVRA; applied before newest_only. Needs the repository's
    // updateinfo (RepoPackageSource::updateinfo_path).
    AdvisoryFilter advisories;
    // --with-dependencies: exactly these packages ("name-epoch:version-release.arch", as
    // the closure solver writes them), the repository's share of a
    // dependency closure; every other filter is then off. nullopt: no closure.
    std::optional<std::vector<std::string>> only_nevras;
};

// Returns the selection in the words of the command line, e.g. "--arch x86_64,noarch
// --newest-only", or "every package" iff it selects everything.
std::string describe_selection(const SelectionOptions& selection);

// Parses a --keep-versions value: a whole number from 1 to 1000000. Returns Error{BadInput}
// naming "--keep-versions <text>" iff it is anything else (0, negative, junk, too large).
Result<std::uint32_t> parse_keep_versions(std::string_view text);

// Parses a --min-buildtime value: a date YYYY-MM-DD (UTC midnight, as dnf; month and day may be
// unpadded, 2008-1-1) or seconds since the epoch. Returns Error{BadInput} naming
// "--min-buildtime <text>" iff it is neither.
Result<std::int64_t> parse_min_build_time(std::string_view text);

}  // namespace rpmirror
