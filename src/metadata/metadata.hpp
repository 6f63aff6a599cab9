// The metadata-record stage: reading a repository's entry points (mirrorlist, metalink,
// repomd.xml), checking downloaded metadata files against their records, making hrefs safe to
// use as local paths, and joining hrefs to mirror URLs.
//
// Everything here is pure (no network) except verify_metadata_file, which reads one local file.
// All functions are thread-safe: they share no state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/checksum/checksum.hpp"
#include "rpmirror/util/error.hpp"

namespace rpmirror {

// ---------------------------------------------------------------------------------------------
// Mirrorlist

// Parses a mirrorlist: one URL a line (LF or CRLF), `#` starts a comment line, blank lines,
// surrounding whitespace and a leading UTF-8 byte order mark are ignored; only lines containing
// "://" or starting with "/" are kept (anything else, e.g. a relative path or a stray word, is
// dropped, as libdnf does). Returns the base URLs in file order, or Error{BadInput} "mirrorlist
// <name> lists no mirrors" (subject = `name`, the URL or file it came from) iff no line was kept.
Result<std::vector<std::string>> parse_mirrorlist(std::string_view text, std::string_view name);

// ---------------------------------------------------------------------------------------------
// Metalink 3.0 (MirrorManager)

struct MetalinkHash {
    ChecksumType type = ChecksumType::Sha256;
    std::string hex;  // lowercase
};

// One acceptable version of repomd.xml: the current one, or an alternate (mirrors lag behind).
struct MetalinkFileVersion {
    std::optional<std::int64_t> timestamp;  // <mm0:timestamp>
    std::optional<std::uint64_t> size;      // <size>
    std::vector<MetalinkHash> hashes;       // known types only, in document order
};

struct MetalinkUrl {
    std::string url;       // the repomd.xml URL as listed
    std::string base_url;  // `url` minus a trailing "repodata/repomd.xml", else `url` itself
    std::string protocol;  // the `protocol` attribute ("https"), or the URL scheme if absent
    std::string location;  // the `location` attribute (country code), may be empty
    int preference = 0;    // the `preference` attribute (0..100), 0 if absent
};

struct Metalink {
    MetalinkFileVersion repomd;                   // the main <file name="repomd.xml"> entry
    std::vector<MetalinkFileVersion> alternates;  // <mm0:alternates>, in document order
    std::vector<MetalinkUrl> urls;                // highest preference first, ties in file order

    // Returns the base URLs of `urls`, in order, keeping only the protocols the downloader can
    // fetch (http, https, ftp, file; MirrorManager also lists rsync).
    std::vector<std::string> base_urls() const;
};

// Parses a metalink document. `name` (its URL or file) is used in errors. Elements are matched
// by local name (the mm0: prefix is not checked); hash types are case-insensitive and "sha-256"
// (Metalink 4 spelling) is accepted as "sha256".
// Returns Error{BadInput} naming `name` (and the line where known) iff the XML is malformed or
// truncated, the root is not <metalink>, a <file> has no name, there is no
// <file name="repomd.xml"> entry, that entry has no hash of a known type (hashes of unknown types
// are ignored when a known one exists), a known-type hash is not valid hex of its type's length,
// or it lists no (non-empty) <url>. Numbers are read as librepo reads them: the leading integer
// of the text ("1641000000.5" is 1641000000), no value when there is none (or a negative size),
// and a preference outside 0..100 is 0.
// An alternate without a hash of a known type is dropped (a size alone proves nothing). A URL's
// base is the URL without a trailing "repodata/repomd.xml", or the URL itself (as librepo).
Result<Metalink> parse_metalink(std::string_view document, std::string_view name);

// Checks downloaded repomd.xml bytes against a metalink.
// Returns success iff for the main entry or any alternate: the size (when listed) equals the
// byte count and every listed hash matches. Otherwise Error{Corrupt} with subject "repomd.xml",
// naming the actual size and sha256 and how many alternates were tried. A version without any
// hash never matches. Pure; each needed digest type is computed once.
Result<void> verify_repomd_against_metalink(std::span<const std::byte> repomd_bytes,
                                            const Metalink& metalink);

// ---------------------------------------------------------------------------------------------
// repomd.xml

struct RecordChecksum {
    ChecksumType type = ChecksumType::Sha256;
    std::string hex;  // lowercase
};

// One <data type="..."> record.
struct RepomdRecord {
    std::string type;                               // "primary", "filelists_db", "group_gz", ...
    RecordChecksum checksum;                        // of the file as stored (compressed)
    std::optional<RecordChecksum> open_checksum;    // of its decompressed content
    std::optional<RecordChecksum> header_checksum;  // zchunk header
    std::string location_href;                      // "repodata/<digest>-primary.xml.gz"
    std::optional<std::string> location_base;       // xml:base of <location>, if any
    std::optional<std::int64_t> timestamp;
    std::optional<std::uint64_t> size;
    std::optional<std::uint64_t> open_size;
    std::optional<std::uint64_t> header_size;
    std::optional<int> database_version;  // sqlite records
    long line = 0;                        // line of <data> in repomd.xml, for messages
};

struct RepomdDistroTag {
    std::string cpeid;  // may be empty
    std::string name;
};

struct Repomd {
    std::optional<std::string> revision;
    std::vector<std::string> content_tags;
    std::vector<std::string> repo_tags;
    std::vector<RepomdDistroTag> distro_tags;
    std::vector<RepomdRecord> records;  // in document order

    // Returns the record of `type`, or nullptr iff there is none.
    const RepomdRecord* find(std::string_view type) const;
};

// Parses repomd.xml. `name` (its URL or path) is used in errors. What it accepts follows
// librepo's parser (tests/integration/differential compares the two; doc/sync.md lists where
// they still differ and why):
// - numbers (<timestamp>, <size>, <open-size>, <header-size>, <database_version>) never refuse
//   the document: the leading integer of the text is kept ("1355315696.84" is 1355315696), no
//   digits (or a negative size) is no value;
// - a <data> without a type is the record "unknown"; an empty <revision/> is no revision;
// - an <open-checksum> or <header-checksum> of an unknown type or that is not a digest is
//   dropped (the file is still verified by <checksum>);
// - prefixed elements (<rpm:data>, <foo:checksum>) are not repomd's and are skipped with what
//   they contain; other unknown elements are ignored.
// Returns Error{BadInput} naming `name` and the line iff the XML is malformed or truncated, the
// root is not <repomd>, a <data> has no <checksum> or no <location href>, or a <checksum> is not
// valid hex of its type's length.
// Records sharing a type are all kept (find() returns the first).
// Returns Error{Unsupported} naming `name`, the line, the record and the type iff a <checksum>
// type is unknown (librepo refuses such a record when it verifies it, too).
Result<Repomd> parse_repomd(std::string_view document, std::string_view name);

// Returns where the file of `record` is kept, relative to the repository's repodata/ directory,
// iff rpmirror can mirror it (what a sync checks for every record it fetches). Errors:
//   Error{Unsupported} (subject `repo_name`) iff its href is not under "repodata/": metadata is
//     published by swapping repodata/ whole, and a file outside it could not be published with it;
//   Error{Unsafe} (subject `repomd_url`) iff it has an xml:base that is not an http(s) URL
//     (is_http_url: upstream metadata must not make rpmirror read local files);
//   Error{Unsafe} (subject = the record's type) iff the rest of its href is not a safe relative
//     path (safe_relative_path: traversal, absolute, control bytes, over the length limits).
// Pure; thread-safe.
Result<std::filesystem::path> record_destination(const RepomdRecord& record,
                                                 std::string_view repo_name,
                                                 std::string_view repomd_url);

// The location hrefs of the records `repomd_xml` lists ("repodata/<sum>-primary.xml.gz", ...),
// in key order; empty iff it does not parse. What a publication must keep while that index is
// live (the local swap, the s3 publish, a snapshot's published name).
std::vector<std::string> record_hrefs(std::string_view repomd_xml);

// Verifies the local file `path` against `record`: its size (when the record has one) and its
// checksum, hashed with hash_file (the xattr cache is used).
// Returns success iff both match; Error{Corrupt} (subject = path) naming expected and actual size
// or digest otherwise; Error{NotFound}/Error{Io}/Error{BadInput} as hash_file reports them.
Result<void> verify_metadata_file(const std::filesystem::path& path, const RepomdRecord& record);

// ---------------------------------------------------------------------------------------------
// Href path safety

struct PathPolicy {
    // A directory that may also hold the files hrefs name, besides the repository root itself:
    // relative to the repository root (e.g. "../../../../blobstore" for Amazon Linux's
    // "../../../../blobstore/<hash>/name.rpm" layout), or absolute (then `repo_root` must be set,
    // or nothing outside the root is accepted). It is normalized lexically.
    std::optional<std::filesystem::path> safe_write_path;
    // The absolute repository root, needed only to compare an absolute `safe_write_path` or a
    // relative one that climbs to a different depth than the href does.
    std::optional<std::filesystem::path> repo_root;
    // --flatten-hrefs: an href that climbs above the root is placed inside it instead, its
    // leading ".." segments dropped ("../../blobstore/ab/x.rpm" gives "blobstore/ab/x.rpm").
    bool flatten = false;
    // Every href is placed at its file name in the root, whatever directories it names (dnf's
    // cache keeps packages as packages/<file name>): "../../blobstore/ab/x.rpm" gives "x.rpm".
    // The href is checked as ever (an href that climbs above the filesystem's root is refused).
    bool file_name_only = false;
};

inline constexpr std::size_t kMaxPathSegmentBytes = 255;
inline constexpr std::size_t kMaxPathBytes = 4096;

// Turns `href` (from primary.xml or repomd.xml) into a relative path under the repository root,
// lexically (no filesystem access, so symlinks are the caller's concern). hrefs are literal:
// percent-escapes are NOT decoded ("%2e%2e" is a file name of six characters, and a literal '%'
// is fine), because createrepo_c writes file names verbatim; "." segments are dropped and "a/.."
// pairs cancel. Backslashes are ordinary file name bytes on Linux and are accepted.
// Returns the normalized relative path (starting with ".." only when it lies inside
// `policy.safe_write_path`; an href that climbs out and back into the root, when
// `policy.repo_root` is known, gets the path inside it: "../x86_64/Packages/a.rpm" from
// "/m/x86_64" is "Packages/a.rpm"), or Error{Unsafe} with subject = `package_name_for_errors` and
// message "href '<href>' <reason>" (control bytes shown as \xNN) iff the href
//   is empty ("empty href"), longer than 4096 bytes ("is longer than 4096 bytes"),
//   contains a NUL byte ("contains a NUL byte") or another control character 0x01-0x1f, 0x7f
//   ("contains control character 0xNN"), is absolute ("is an absolute path"), has an empty
//   segment ("has an empty path segment"), ends in '/' ("ends with '/'"), has a segment longer
//   than 255 bytes ("has a path segment longer than 255 bytes"), names the root itself
//   ("names the repository root, not a file"), or climbs above the root ("escapes the repository
//   root") and is not inside the safe write path ("escapes the repository root and is not inside
//   safe_write_path '<path>'") nor flattened (`policy.flatten`). Containment compares path
//   components, never string prefixes, so "/x/a2/p.rpm" is not inside "/x/a". Pure;
//   thread-safe.
Result<std::filesystem::path> safe_relative_path(std::string_view href,
                                                 std::string_view package_name_for_errors,
                                                 const PathPolicy& policy = {});

// ---------------------------------------------------------------------------------------------
// URLs

// Returns `base` and `href` joined with exactly one '/' between them (an empty base gives href
// as is). With `percent_encode`, every byte of href outside RFC 3986's unreserved set
// (A-Z a-z 0-9 - . _ ~) and '/' is written as %XX (uppercase): '+' becomes %2B (some CDNs answer
// a raw '+' with 403), ' ' becomes %20, and a literal '%' becomes %25 (hrefs are not
// pre-encoded). `base` is used verbatim. Pure; thread-safe.
std::string join_url(std::string_view base, std::string_view href, bool percent_encode = true);

// Returns the base a href must be fetched from: `xml_base` when present and non-empty (the
// <location xml:base> of the record or package), else `mirror_base`.
std::string_view pick_base_url(std::string_view mirror_base,
                               const std::optional<std::string>& xml_base);

// Returns true iff `url` is an http:// or https:// URL (the scheme in any case). These are the
// only URLs rpmirror takes from upstream (mirrorlist lines, metalink <url>s, xml:base,
// redirects): a file:// URL there would have rpmirror read local files for a server. Pure.
bool is_http_url(std::string_view url);

// Returns the mirrors rpmirror may use among `listed`, the entries (in order) of the mirrorlist
// or metalink fetched from `list_url`: the http:// and https:// ones; ftp:// and rsync:// ones
// are skipped (MirrorManager lists those for other clients). A list that is the user's own file
// (`list_url` is file://) may also name file:// mirrors and local paths.
// Returns Error{Unsafe} (subject `list_url`) naming the entry iff a list from upstream names
// anything else: file://, a local path, another scheme. Pure.
Result<std::vector<std::string>> usable_listed_mirrors(const std::vector<std::string>& listed,
                                                       std::string_view list_url);

// Returns the percent-encoding of `text` as join_url encodes hrefs.
std::string percent_encode_path(std::string_view text);

}  // namespace rpmirror
