// The differential tests: rpmirror's metadata parsers against librepo's (python3-librepo, what
// dnf downloads with) and libsolv's (libsolv-tools, what dnf resolves with), on a corpus the
// tests write themselves. The same documents go in; the accept/refuse verdicts and the extracted
// fields must agree, except where rpmirror deliberately differs. Each such difference is one
// Disagreement below, listed with its reason in doc/sync.md ("Metadata dnf reads, and what
// rpmirror refuses"); every case says which ones it expects, so a difference that appears,
// or one that goes away, fails the test.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "support/child_process.hpp"
#include "support/source_tree.hpp"

namespace rpmirror::test::differential {

enum class Disagreement {
    // rpmirror refuses, librepo accepts: each protects the mirror.
    Unverifiable,       // a record without <checksum>: librepo takes the file unchecked
    SizeMismatch,       // <size> is not the file's size: librepo never checks sizes
    OutsideRepodata,    // a record outside repodata/: the publish swaps repodata/ whole
    UnsafeXmlBase,      // xml:base is not http(s) (file://): upstream must not name local files
    UnsafeHref,         // an href not in normal form ("a//b"): it names another key in a bucket
    UnsafeMirror,       // a mirrorlist from upstream names a local path or file:// URL
    UnfetchableMirror,  // ftp:// and rsync:// mirrors are skipped (no FTP/rsync client)
    EveryHashChecked,   // repomd.xml must match every hash a metalink gives, not the best one
    IncompletePackage,  // a package without name, arch, version or location: the repository fails
    MalformedNumber,    // an epoch, package size or build time no decimal number in range: fails
    XmlVersion,         // <?xml version="abc"?>: not XML 1.x, libxml2 refuses (libsolv reads it)
    // rpmirror accepts, librepo refuses.
    UppercaseDigest,  // librepo compares digests as strings, case-sensitively
    PaddedDigest,     // whitespace around a digest: librepo compares it with the whitespace
    DuplicateRecord,  // two records of one type: librepo checks one's file against the other's
    // Both accept; a field differs.
    TrimmedText,       // rpmirror trims the text of <revision>, tags, URLs
    NumberBase,        // "0x10", "010": librepo's strtoll base 0 reads hex and octal
    NegativeSize,      // a negative <size> is no size to rpmirror
    MirrorOrder,       // metalink mirrors: rpmirror tries the highest preference first
    CarriageReturn,    // mirrorlist CRLF: librepo keeps the '\r' in the URL
    LongLine,          // a mirrorlist line over 4095 bytes: librepo cuts it (fgets)
    EscapedAmpersand,  // "&amp;" in an attribute: libxml2 hands librepo "&#38;", not "&"
};

std::string_view name(Disagreement disagreement);

// One observed difference between the two readers of one case.
struct Difference {
    std::optional<Disagreement> kind;  // nullopt: not a known disagreement (a bug)
    std::string detail;
};

// Returns the categories of `differences` ("Unclassified" stands for nullopt), for messages.
std::set<std::string> kinds_of(const std::vector<Difference>& differences);
std::set<std::string> names_of(const std::set<Disagreement>& expected);
std::string describe(const std::vector<Difference>& differences);

// Runs tests/integration/differential/librepo_dump.py over `manifest` (a JSON list of cases)
// with Debian's python3 (python3-librepo installs into it, whatever python3 comes first in
// PATH) and returns its output. On failure (the dumper missing, librepo not importable) the
// returned object holds "error" with the dumper's log, and the caller fails the test.
nlohmann::json run_librepo(const nlohmann::json& manifest, const std::filesystem::path& scratch);

// The random half of the differential tests: `count` mutations from the seed `seed` (the same
// documents every run; RPMIRROR_DIFFERENTIAL_SEED and RPMIRROR_DIFFERENTIAL_CASES choose another
// or a longer campaign).
struct RandomCampaign {
    std::uint32_t seed;
    std::size_t count;
};
RandomCampaign random_campaign();

// Returns `document` changed by one to three random edits: an element's text or an attribute's
// value replaced by a token real and hostile documents carry, a line deleted or duplicated, a
// byte changed, a token inserted.
std::string mutate_document(std::string document, std::mt19937& random);

// Text helpers of the corpora and comparisons: `text` with every `from` replaced by `to`;
// `text` with a-z upper-cased; a JSON string's value ("" for anything else).
std::string replace_all(std::string text, std::string_view from, std::string_view to);
std::string upper(std::string text);
std::string text_of(const nlohmann::json& value);

}  // namespace rpmirror::test::differential
