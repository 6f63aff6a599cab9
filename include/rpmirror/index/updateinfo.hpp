// Advisories (updateinfo.xml): reading them, selecting packages by them (--advisories,
// --advisory-severity, --as-of), and trimming them to what a filtered mirror holds.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "rpmirror/util/error.hpp"

namespace rpmirror {

// One <update> of updateinfo.xml.
struct Advisory {
    std::string id;     // <id>, e.g. "FEDORA-2026-1f2e3d"
    std::string type;   // the type attribute: security, bugfix, ... as written ("" if absent)
    std::string title;  // <title>
    std::string severity = {};  // <severity>, "" iff none
    // <issued date=...>, seconds since the epoch (UTC); nullopt iff missing or unreadable.
    std::optional<std::int64_t> issued = {};
    // Its packages as strict NEVRAs ("name-epoch:version-release.arch", a missing epoch 0), every
    // collection's.
    std::vector<std::string> nevras = {};
};

// Which advisories a mirror carries (--advisories, --advisory-severity), as dnf's
// --security/--bugfix/--enhancement/--newpackage, --advisory and --advisory-severities select.
struct AdvisoryFilter {
    std::vector<std::string> types;       // security, bugfix, enhancement, newpackage
    std::vector<std::string> ids;         // advisory IDs, exactly
    std::vector<std::string> severities;  // Low, Moderate, Important, Critical (as given)

    // True iff any of the three is set: packages are then selected by their advisories.
    bool active() const { return !types.empty() || !ids.empty() || !severities.empty(); }
    bool operator==(const AdvisoryFilter&) const = default;
};

// The advisory types dnf knows.
inline constexpr std::string_view kAdvisoryTypes[] = {"security", "bugfix", "enhancement",
                                                      "newpackage"};

// Parses the words of --advisories (each a type of kAdvisoryTypes, lower case, or an advisory
// ID; separated by commas or spaces) into `filter`. Returns Error{BadInput} naming
// "--advisories" iff there is no word.
Result<void> parse_advisories(std::string_view text, AdvisoryFilter& filter);

// Parses --advisory-severity (Low, Moderate, Important, Critical, any case; separated by commas or
// spaces; an advisory of any of them is selected, so "Important,Critical" is "Important and up").
// Returns Error{BadInput} naming "--advisory-severity <word>" iff a word is none of them.
Result<void> parse_advisory_severities(std::string_view text, AdvisoryFilter& filter);

// Parses --as-of: a date YYYY-MM-DD (that whole day, UTC, is included) or seconds since the
// epoch. Returns the last second included, or Error{BadInput} naming "--as-of <text>".
Result<std::int64_t> parse_as_of(std::string_view text);

// Parses the updateinfo.xml at `path` (compression detected by content, at most `ceiling` bytes
// decompressed), streaming. `display_name` names the file in errors. Returns the advisories in
// document order, or Error{BadInput} naming `display_name` and the line iff the XML is malformed
// or an <update> has no <id>, or the decompressor's error (Corrupt, Unsafe, Io, NotFound).
// Thread-safe.
Result<std::vector<Advisory>> parse_updateinfo_file(const std::filesystem::path& path,
                                                    std::string_view display_name,
                                                    std::uint64_t ceiling = std::uint64_t{4} << 30);

// True iff `advisory` passes `filter` (a type or an ID it names, and a severity it names; an
// unset part passes everything) and was issued no later than `as_of` (when set; an advisory
// without an issued date is then not).
bool advisory_selected(const Advisory& advisory, const AdvisoryFilter& filter,
                       std::optional<std::int64_t> as_of);

// updateinfo.xml trimmed for a filtered mirror, and the advisories it left out.
struct TrimmedUpdateinfo {
    std::string xml;
    // One line per advisory left out: "ID: not selected (--advisories)", "ID: issued after the
    // --as-of date", "ID: no package of it is mirrored".
    std::vector<std::string> left_out;
};

// Trims updateinfo.xml `xml` to what a filtered mirror holds: advisories that `filter` or `as_of`
// does not select are left out; the others lose every <package> not in `kept_nevras` (strict
// NEVRAs), collections left without a package go, and an advisory left without a package goes.
// Everything else is kept byte for byte (each element left out takes its indentation along);
// memory is the document and its copy. Returns nullopt iff nothing changes (upstream's file stays,
// byte for byte). Returns Error{Unsafe} naming `display_name` iff the document declares an
// entity, Error{BadInput} iff it is not XML whose root is <updates>. Thread-safe.
Result<std::optional<TrimmedUpdateinfo>> trim_updateinfo_xml(
    std::string_view xml, const std::unordered_set<std::string>& kept_nevras,
    const AdvisoryFilter& filter, std::optional<std::int64_t> as_of, std::string_view display_name);

}  // namespace rpmirror
