// Reading updateinfo.xml behind rpmirror/index/updateinfo.hpp: parsing its advisories, choosing
// the ones a filter selects, and trimming the file to the packages a mirror keeps.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "rpmirror/index/updateinfo.hpp"

namespace rpmirror {

// The advisory types dnf knows.
inline constexpr std::string_view kAdvisoryTypes[] = {"security", "bugfix", "enhancement",
                                                      "newpackage"};

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
