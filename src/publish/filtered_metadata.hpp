// The publish stage, part 2: metadata for a filtered mirror.
//
// When the selection (-a, -n, --source, -x, includepkgs, ...) leaves packages out, upstream's
// primary/filelists/other would list packages the mirror does not have. These functions write
// new ones that list exactly the mirrored packages, each kept package's record copied byte for
// byte as upstream wrote it (the decompressed XML is streamed; only whole <package> spans are
// dropped and the root's packages="N" is updated), compressed as upstream compressed them, and a
// new repomd.xml describing them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "metadata/metadata.hpp"
#include "rpmirror/index/updateinfo.hpp"
#include "rpmirror/util/error.hpp"

namespace rpmirror {

// One package the mirror holds: its pkgid (the lowercase hex checksum primary.xml gives it),
// its <location href> as upstream wrote it (entities resolved) and its strict NEVRA
// ("name-epoch:version-release.arch", as modules.yaml lists rpm artifacts).
struct KeptPackage {
    std::string pkgid;
    std::string location_href;
    std::string nevra;
    // The href the published primary gives it instead of `location_href` (--flatten-hrefs);
    // "" = upstream's, byte for byte.
    std::string published_href = {};
};

// Streams the decompressed XML of one of primary.xml, filelists.xml, other.xml to `sink`,
// keeping only the <package> elements of `kept` (in primary: by pkgid and location href; in
// filelists and other: by the pkgid attribute, as many times as `kept` lists it) and writing
// packages="<kept.size()>" into the root element. Everything else (prolog, root element,
// whitespace, each kept package) is copied unchanged.
// Returns the number of packages kept, or Error{BadInput} naming `name` iff the XML is cut
// short or a <package> lacks its pkgid, or the error `source` or `sink` returned.
// `source` returns the next chunk of decompressed bytes (empty at the end).
// Not thread-safe per call; distinct calls may run concurrently.
class MetadataFilter {
  public:
    enum class Kind { Primary, Filelists, Other };

    MetadataFilter(Kind kind, std::span<const KeptPackage> kept, std::string name);
    MetadataFilter(const MetadataFilter&) = delete;
    MetadataFilter& operator=(const MetadataFilter&) = delete;
    ~MetadataFilter();

    // Feeds the next chunk of decompressed XML; kept bytes are appended to `out` (the caller
    // drains it). Returns Error{BadInput} naming the document iff a <package> has no pkgid.
    Result<void> feed(std::string_view chunk, std::string& out);
    // Signals the end; the tail is appended to `out`. Returns the number of packages kept, or
    // Error{BadInput} iff the document ended inside a <package> or before its root element.
    Result<std::uint64_t> finish(std::string& out);

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// A comps document trimmed for a filtered mirror, and what it left out.
struct TrimmedComps {
    std::string xml;
    // "group ID: its mandatory package NAME is not mirrored", "environment ID: one of its
    // groups is left out".
    std::vector<std::string> left_out;
};

// Trims the comps document `xml` (comps.xml, the `group` records) to what a filtered mirror
// can install. `filtered_out` holds the names of the packages upstream's repository has and the
// mirror keeps no package of (a package the repository never had, e.g. one of another
// repository, is not missing: comps often names them). A group with a mandatory package (type
// "mandatory", or none) of `filtered_out` is left out; the other packages of `filtered_out` are
// left out of the groups that stay; an environment whose <grouplist> names a group left out is
// left out, and its <optionlist> loses them; a category loses them, and goes when it has none
// left. Everything else is kept as it was (libxml2 writes it out again: the same elements,
// attributes and text). Returns nullopt iff nothing is left out. Returns Error{Unsafe} naming
// `display_name` iff the document declares an entity, Error{BadInput} iff it is not XML whose
// root is <comps>. Thread-safe.
Result<std::optional<TrimmedComps>> trim_comps_xml(
    std::string_view xml, const std::unordered_set<std::string>& filtered_out,
    std::string_view display_name);

// What write_filtered_metadata did, for the summary.
struct FilteredMetadata {
    std::vector<std::string> dropped_records;    // record types left out (*_db, *_zck, modules)
    std::vector<std::string> rewritten_records;  // primary, filelists, other, modules, group*
    std::string repomd_xml;                      // the new repomd.xml, not yet written
    std::vector<std::string> comps_left_out;     // TrimmedComps::left_out of the group records
    // TrimmedUpdateinfo::left_out of the updateinfo record.
    std::vector<std::string> advisories_left_out;
};

// Rewrites, in `stage_dir` (which holds upstream's records, named as their hrefs minus
// "repodata/", and nothing else of value), the primary, filelists and other records of
// `upstream` so that they list exactly `kept`; trims the modules record (modules.yaml) to the
// module streams with a kept rpm artifact (see trim_modules_yaml; kept verbatim iff nothing is
// dropped; left out iff no module keeps a stream); removes the sqlite (*_db) and zchunk (*_zck)
// records (they cannot be made consistent: dnf reads neither the databases nor, without zck,
// the chunks); trims the comps records (`group`, `group_gz`, ...: trim_comps_xml with
// `filtered_out`, the names of upstream's packages the mirror keeps none of); trims the
// `updateinfo` record (trim_updateinfo_xml with the kept NEVRAs, `advisories` and `as_of`; kept
// verbatim iff nothing changes); and returns the
// text of the new repomd.xml (the caller writes it, and signs it
// when asked): upstream's revision and tags, every other
// record as upstream listed it, and the rewritten ones with new checksums (of upstream's
// checksum type), open-checksums, sizes, open-sizes and timestamps. Record files named
// "<checksum>-..." upstream get their new checksum in the name; others keep their name.
// The rewrites run concurrently; memory is bounded by one <package> element (and the whole
// modules.yaml, held by libmodulemd) plus the
// codecs' buffers, whatever the repository's size.
// Returns Error{BadInput}/Error{Corrupt} naming the record iff upstream's XML cannot be read,
// Error{BadInput} iff primary does not list every kept package, Error{Io} naming the file iff
// writing fails (files already written stay in the stage, which the caller discards).
Result<FilteredMetadata> write_filtered_metadata(
    const std::filesystem::path& stage_dir, const Repomd& upstream,
    std::span<const KeptPackage> kept, const std::unordered_set<std::string>& filtered_out = {},
    const AdvisoryFilter& advisories = {}, std::optional<std::int64_t> as_of = std::nullopt);

}  // namespace rpmirror
