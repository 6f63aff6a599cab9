// The package-index stage: decompress repository metadata by content, stream primary.xml through
// a SAX parser into a compact in-memory index, and select the packages to mirror the way
// `dnf reposync` does (--arch, --source, --newest-only, includepkgs/excludepkgs, a build-time
// floor), one download per location.
//
// Pipeline: Decompressor (bounded 256 KiB buffers) -> PrimaryParser (libxml2 push parser) ->
// PackageIndex (string arena + fixed-width records) -> select_packages().
// The XML is never held whole in memory; see bench/primary for throughput and peak RSS.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "rpmirror/checksum/checksum.hpp"
#include "rpmirror/index/selection.hpp"
#include "rpmirror/index/updateinfo.hpp"
#include "rpmirror/util/error.hpp"

namespace rpmirror {

// ---------------------------------------------------------------------------------------------
// Decompression by content

enum class Compression { None, Gzip, Xz, Zstd, Bzip2, Zchunk };

// Returns "none", "gzip", "xz", "zstd", "bzip2" or "zchunk".
std::string_view compression_name(Compression compression);

// Returns the compression whose magic bytes start `head` (gzip 1f 8b, xz fd 37 7a 58 5a 00,
// zstd 28 b5 2f fd, bzip2 "BZh", zchunk "\0ZCK1"), or None iff `head` starts with none of them
// (including when `head` is shorter than a magic). The file name is never consulted.
Compression detect_compression(std::span<const char> head);

// Default ceiling on the decompressed size of one metadata file: no real primary.xml comes
// close (Fedora's largest is ~700 MB), a decompression bomb is stopped here.
inline constexpr std::uint64_t kDefaultDecompressedCeiling = std::uint64_t{4} << 30;
inline constexpr std::size_t kDefaultDecompressBufferSize = 256 * 1024;

struct DecompressOptions {
    // The exact decompressed size when the caller knows it (repomd.xml's <open-size>).
    // More output than this is Error{Unsafe}; less at the end of the stream is Error{Corrupt}.
    std::optional<std::uint64_t> expected_size;
    // Output beyond this many bytes is Error{Unsafe}, whatever `expected_size` says.
    std::uint64_t ceiling = kDefaultDecompressedCeiling;
    // Size of the compressed-input buffer and of the largest chunk read() returns.
    std::size_t buffer_size = kDefaultDecompressBufferSize;
};

// A streaming reader that yields the decompressed content of one file, whatever its compression
// (detected from the first bytes). Memory use is two buffers of `buffer_size` plus the codec's
// own state (xz and zstd windows), independent of the file's size.
// Concatenated gzip members, xz streams, zstd frames and bzip2 streams are read as one stream,
// as the command-line tools do. Not thread-safe; move-only.
class Decompressor {
  public:
    // Opens `path` and detects its compression from its content.
    // Returns Error{NotFound}/Error{Io} iff it cannot be opened or read, Error{Corrupt} iff it is
    // zchunk and its header does not verify (libzck's message follows the description).
    static Result<Decompressor> open(const std::filesystem::path& path,
                                     const DecompressOptions& options = {});

    Decompressor(Decompressor&&) noexcept;
    Decompressor& operator=(Decompressor&&) noexcept;
    ~Decompressor();

    // Returns the next chunk of decompressed bytes (at most buffer_size; valid until the next
    // call), or an empty span iff the stream ended cleanly and its size was checked.
    // Errors, each naming the file in `subject`: Error{Corrupt} iff the compressed data is
    // invalid, truncated (ends before the codec's end-of-stream marker) or decompresses to fewer
    // bytes than `expected_size`; Error{Unsafe} iff the output exceeds `expected_size` or the
    // ceiling (a decompression bomb: reading stops there); Error{Io} iff a read fails.
    // After an error, every later call returns the same error.
    Result<std::span<const char>> read();

    Compression compression() const;
    // Decompressed bytes returned so far.
    std::uint64_t bytes_out() const;
    // Compressed bytes read from the file so far (zchunk: the file's length, once opened).
    std::uint64_t bytes_in() const;

  private:
    struct State;
    explicit Decompressor(std::unique_ptr<State> state);
    std::unique_ptr<State> state_;
};

// Feeds the whole decompressed content of `path` to `sink`, chunk by chunk, stopping at the
// first error of the decompressor or of `sink` (which is returned unchanged).
// Returns the number of decompressed bytes iff everything succeeded.
Result<std::uint64_t> decompress_file(
    const std::filesystem::path& path, const DecompressOptions& options,
    const std::function<Result<void>(std::span<const char>)>& sink);

// The whole decompressed content of `path` (a small file: modules.yaml, comps), as
// decompress_file reads it. Errors as decompress_file's.
Result<std::string> decompress_file_to_string(const std::filesystem::path& path,
                                              const DecompressOptions& options);

// ---------------------------------------------------------------------------------------------
// EVR comparison (librpm's rpmvercmp)

// Compares two version (or release) strings with librpm's rpmvercmp: alphanumeric segments,
// numeric segments compared as numbers (leading zeros ignored) and newer than alphabetic ones,
// '~' sorts before everything (1.0~rc1 < 1.0), '^' after the base but before any further
// segment (1.0 < 1.0^git1 < 1.0.1). Returns <0, 0 or >0. Thread-safe.
int compare_versions(std::string_view left, std::string_view right);

struct Evr {
    std::uint32_t epoch = 0;  // a missing epoch is 0
    std::string_view version;
    std::string_view release;
};

// Compares epoch numerically, then version, then release with compare_versions.
// Returns <0, 0 or >0. Thread-safe.
int compare_evr(const Evr& left, const Evr& right);

// ---------------------------------------------------------------------------------------------
// The package index

// Package sizes above this (2^53, the largest integer a JSON report carries exactly) are absurd:
// such a package is reported and skipped.
inline constexpr std::uint64_t kMaxPackageSize = std::uint64_t{1} << 53;

// One package as the index holds it. Every view points into the PackageIndex that produced it and
// stays valid until that index is destroyed, moved from, or add() is called on it.
struct PackageView {
    std::string_view name;
    std::string_view arch;  // "src" for source packages
    std::uint32_t epoch = 0;
    std::string_view version;
    std::string_view release;
    ChecksumType checksum_type = ChecksumType::Sha256;
    std::span<const std::uint8_t> digest;  // raw bytes of the pkgid checksum
    std::uint64_t package_size = 0;        // <size package=>: bytes; kUnknownSize if absent
    std::int64_t build_time = 0;           // <time build=>, seconds since the epoch; 0 if absent
    std::int64_t file_time = 0;            // <time file=>; 0 if absent or no number
    std::string_view location_href;        // as written, e.g. "Packages/a/a-1-1.x86_64.rpm"
    std::string_view location_base;        // xml:base, usually empty
    std::string_view source_rpm;           // <rpm:sourcerpm>, empty for source packages

    Evr evr() const { return {epoch, version, release}; }
    // Returns the lowercase hex form of `digest`.
    std::string checksum_hex() const;
    // Returns "name-[epoch:]version-release.arch" (the epoch only when non-zero).
    std::string nevra() const;
    // Returns "name-epoch:version-release.arch" (the epoch always), as modules.yaml spells its
    // rpm artifacts (see ModuleStreamBuild::artifacts).
    std::string strict_nevra() const;
};

// A problem found in the metadata that did not stop the parse (a skipped package, a count
// mismatch). `message` is complete, in the form of Error::to_string():
// "repodata/x-primary.xml.gz: line 88: <package> 'foo' without <checksum>; skipped".
struct IndexIssue {
    long line = 0;
    std::string message;
    // The package left out of the index ("name-version-release.arch", or "<package>" when it
    // has no name); "" iff the issue skipped no package (a count mismatch).
    std::string skipped_package;
};

// The packages of one primary.xml, stored compactly: all strings in one arena (each
// NUL-terminated), arches and xml:base values interned, checksums as raw bytes, fixed-width
// integers — about 100 bytes per package plus its strings (see bench/primary).
// Not thread-safe for writing; const access from several threads is safe.
class PackageIndex {
  public:
    PackageIndex();
    PackageIndex(PackageIndex&&) noexcept;
    PackageIndex& operator=(PackageIndex&&) noexcept;
    ~PackageIndex();

    std::size_t size() const;
    bool empty() const { return size() == 0; }
    // Returns package `position` (< size()), in document order.
    PackageView operator[](std::size_t position) const;

    // Copies `package` into the index. Returns Error{BadInput} iff its digest length does not
    // match its checksum type or the index would exceed its 4 GiB string arena.
    // Invalidates every PackageView obtained before.
    Result<void> add(const PackageView& package);

    // Problems reported while the index was built (skipped packages, count mismatch).
    std::span<const IndexIssue> issues() const;
    void add_issue(IndexIssue issue);

    // The <metadata packages="N"> attribute, iff present and numeric.
    std::optional<std::uint64_t> declared_count() const;
    void set_declared_count(std::optional<std::uint64_t> count);

    // Reserves room for `packages` records and `string_bytes` of strings (no effect on contents).
    void reserve(std::size_t packages, std::size_t string_bytes);

    // Heap bytes held (records, arena, interned tables), for benchmarks and logs.
    std::size_t memory_bytes() const;
    // Releases spare capacity left by growth.
    void shrink_to_fit();

  private:
    struct Storage;
    std::unique_ptr<Storage> storage_;
};

struct PrimaryParseOptions {
    DecompressOptions decompress;
    // false: a bad package (missing or unknown checksum, bad digest, missing/negative/absurd size,
    //        missing name/arch/version/location, non-numeric epoch) is skipped and recorded in
    //        issues(); a packages="N" mismatch is recorded in issues().
    // true:  each of these is Error{BadInput} and the parse stops.
    bool strict = false;
    // How every message and error subject names the document (e.g. its URL when it was parsed
    // from a staging path); "" = the path it is read from.
    std::string display_name;
};

// A streaming primary.xml parser: feed it decompressed bytes in chunks of any size.
// Keeps only the fields mirroring needs; everything else (files, provides, requires,
// description, ...) is skipped without being copied. Not thread-safe; move-only.
class PrimaryParser {
  public:
    // `document_name` starts every message ("<document_name> line N: ...").
    explicit PrimaryParser(std::string document_name, bool strict = false);
    PrimaryParser(PrimaryParser&&) noexcept;
    PrimaryParser& operator=(PrimaryParser&&) noexcept;
    ~PrimaryParser();

    // Parses the next chunk. Returns Error{BadInput} "<document_name> line N: ..." iff the XML is
    // malformed, declares entities (billion laughs and XXE are refused), its root is not
    // <metadata>, or (strict) a package is bad. After an error, every later call fails.
    Result<void> feed(std::span<const char> chunk);

    // Ends the document. Returns the index iff the document was complete and well-formed, else
    // Error{BadInput} naming the document and line (e.g. a truncated file).
    Result<PackageIndex> finish();

  private:
    struct State;
    std::unique_ptr<State> state_;
};

// Decompresses (by content) and parses the primary.xml at `path`, streaming.
// Returns the index, or the first error of the decompressor (Corrupt, Unsafe, Io, NotFound,
// Unsupported) or of the parser (BadInput, with the line), each naming options.display_name (or
// `path` when it is empty).
// Thread-safe (each call has its own state).
Result<PackageIndex> parse_primary_file(const std::filesystem::path& path,
                                        const PrimaryParseOptions& options = {});

// ---------------------------------------------------------------------------------------------
// Selection, as `dnf reposync` does it (dnf-plugins-core reposync.py get_pkglist)

// True iff rpm knows `arch`: a name of its architecture tables (rpmrc's arch_canon,
// arch_compat and buildarch_compat entries, read once from rpm's own file), or noarch, src or
// nosrc. False for every other name, and for all but those three where rpm's tables cannot be
// read.
bool rpm_knows_arch(std::string_view arch);

// Error{BadInput} naming "--arch NAME" iff an architecture of `options` (not with --source or a
// closure) is neither one rpm knows nor one a package of `index` has: a typo ("x86-64") that
// would select nothing. The message lists the repository's architectures. `repo_id` is the
// subject.
Result<void> check_arches(const PackageIndex& index, const SelectionOptions& options,
                          std::string_view repo_id);

struct Selection {
    // Positions in the index of the packages to download, in document order, one per location
    // (xml:base + href): the first entry for a location wins.
    std::vector<std::size_t> positions;
    // Entries dropped because an earlier selected entry had the same location.
    std::size_t duplicate_locations = 0;
    // The href of the first entry dropped that way ("" iff none), for messages.
    std::string first_duplicate_href;
    // One message per duplicate location whose entries disagree on checksum or size.
    std::vector<std::string> conflicts;
};

// One module stream build (a `modulemd` document of modules.yaml): name, stream, version and
// context, and the packages it is made of.
struct ModuleStreamBuild {
    std::string name;
    std::string stream;
    std::uint64_t version = 0;
    std::string context;
    std::string arch;
    // rpm artifacts as "name-epoch:version-release.arch" (libmodulemd refuses any other form),
    // as dnf's nevra_strict matching compares them.
    std::vector<std::string> artifacts;
    // The module's modulemd-defaults document names this stream its default stream.
    bool is_default = false;
};

// Parses the modules.yaml at `path` (compression detected by content, at most `ceiling` bytes
// decompressed) with libmodulemd, naming it `display_name` in errors. Every module stream is
// read (upgraded to modulemd v2 when older), with whether it is its module's default stream
// (modulemd-defaults); obsoletes documents are ignored.
// Returns Error{BadInput} naming `display_name` iff the YAML is not valid module metadata (any
// refused document, e.g. an artifact without its epoch, refuses the file), or
// the decompressor's error (Corrupt, Unsafe, Io, NotFound) with `display_name` as its subject.
// Thread-safe (each call has its own state).
Result<std::vector<ModuleStreamBuild>> parse_modules_file(
    const std::filesystem::path& path, std::string_view display_name,
    std::uint64_t ceiling = kDefaultDecompressedCeiling);

// Trims the decompressed modules.yaml `yaml` to the packages a filtered mirror holds: keeps each
// module stream document (name:stream:version:context:arch) iff at least one of its rpm
// artifacts is in `kept_nevras` (strict NEVRAs, see PackageView::strict_nevra), and the
// defaults, obsoletes and translations of the modules that keep a stream; drops the modules
// that keep none. Returns the new YAML as libmodulemd emits it, an empty string iff no module
// keeps a stream, or nullopt iff nothing would be dropped (the caller keeps upstream's file).
// Returns Error{BadInput} naming `display_name` iff the YAML is not valid module metadata (as
// parse_modules_file) or libmodulemd cannot emit the trimmed index.
// Thread-safe (each call has its own state).
Result<std::optional<std::string>> trim_modules_yaml(
    const std::string& yaml, const std::unordered_set<std::string>& kept_nevras,
    std::string_view display_name);

// Selects packages from `index`: include/exclude globs, then --as-of, then the advisories
// (`advisories`, the repository's updateinfo, read iff options.advisories.active()), then
// newest-only, then --source or --arch, then the build-time floor, then one entry per location.
// With newest_only, keeps the `keep_versions` (N) highest EVRs per name.arch.
// With newest_only and `modules` (the repository's module streams), selects as dnf 4's reposync
// `_get_latest` does, extended to N: the N newest EVRs per name.arch among the packages no module
// lists, plus, for every name:stream, every package of its N highest versions and of the highest
// version that holds each of the stream's N newest EVRs per name.arch (all contexts of a chosen
// version); N = 1 is exactly dnf's -n. Without newest_only, `modules` does not change anything.
// Thread-safe for a const index.
Selection select_packages(const PackageIndex& index, const SelectionOptions& options,
                          std::span<const ModuleStreamBuild> modules = {},
                          std::span<const Advisory> advisories = {});

// ---------------------------------------------------------------------------------------------
// One repository's package list, as `sync` and `verify` both read it

// The metadata files to read, already verified by the caller (sizes and checksums).
struct RepoPackageSource {
    std::filesystem::path primary_path;
    std::string primary_name;  // how messages name primary.xml (its URL, or the mirror's path)
    std::optional<std::uint64_t> primary_open_size;  // repomd.xml's <open-size>
    // primary.xml as an earlier step over the same revision parsed it (RepoPackages::index):
    // selected from as it is, the file not read again (primary_path is then unused).
    std::shared_ptr<const PackageIndex> primary_parsed;
    // modules.yaml, iff the repository has one and the caller fetched it; read only with
    // newest_only (without it, modules do not change the selection).
    std::optional<std::filesystem::path> modules_path;
    std::string modules_name;
    // updateinfo.xml, iff the repository has one and the caller fetched it; read only when
    // selecting by advisories (options.advisories.active()), which is an error without it.
    std::optional<std::filesystem::path> updateinfo_path;
    std::string updateinfo_name;
};

// The packages of one repository and what `options` selects from them.
struct RepoPackages {
    std::shared_ptr<const PackageIndex> index;  // never null
    Selection selection;
    // Messages every caller shows as warnings: index issues that skipped no package, the first
    // kConflictsShown conflicting duplicate locations (then "... and N more ..."), and one line
    // counting duplicate locations.
    std::vector<std::string> warnings;
    // Packages primary.xml lists that cannot be mirrored (no checksum, absurd size...), each
    // with its message; `sync` fails the repository for them, `verify` warns.
    std::vector<IndexIssue> skipped;
    // The number of module stream builds that took part in the selection (0: not modular, or
    // not newest_only).
    std::size_t module_streams = 0;
};

inline constexpr std::size_t kConflictsShown = 10;

// Parses primary.xml (unless source.primary_parsed has it) and, with options.newest_only,
// modules.yaml from `source`, and selects with `options`. Every message names the files by
// source.primary_name / modules_name, never by the path they were read from. Returns the parser's
// or decompressor's first error, so named. Thread-safe (each call has its own state).
Result<RepoPackages> read_repo_packages(const RepoPackageSource& source,
                                        const SelectionOptions& options);

// The NEVRA text of a package ("name-epoch:version-release.arch", epoch "0" when empty), as
// SelectionOptions::only_nevras holds them and a dependency closure (rpmirror/resolve) gives them.
std::string closure_nevra(std::string_view name, std::string_view epoch, std::string_view version,
                          std::string_view release, std::string_view arch);

}  // namespace rpmirror
