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

}  // namespace rpmirror
