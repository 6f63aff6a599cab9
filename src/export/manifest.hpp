// A bundle's manifest (manifest.json): what a bundle made by `rpmirror export` holds and the
// state it brings a destination to. A bundle is a directory holding the manifest, its detached
// signature (manifest.json.asc, when signed) and chunk files: the carried files' bytes laid end to
// end, in manifest order, cut into chunks of at most the chunk size (a file may span chunks).
// A syncable bundle (layout "trees") has one chunk per carried file instead, named
// repos/<id>/<key>: each repository is a plain tree dnf reads through file://.
//
//   {"format": "rpmirror-bundle", "version": 1, "tool_version": "...", "name": "...",
//    "kind": "complete" | "incremental", "layout": "chunks" | "trees",
//    "snapshot": null | "<the exporting side's snapshot of the exported state>",
//    "base": null | {"name": "...", "repositories": {"<id>": "<repomd.xml sha256>" | null}},
//    "repositories": [{"id", "repomd_sha256",
//                      "files": [{"key", "size", "sha256"[, "chunk", "offset"]}],
//                      "removed": ["<key>"]}],
//    "chunks": [{"name", "size", "sha256"}]}
//
// A repository's `files` is its whole state after the import; those with "chunk" and "offset"
// are carried in this bundle (at that offset of that chunk), the others are the base's. A base
// repository of null is one the destination must not hold yet. "layout" and "snapshot" may be
// absent (bundles of earlier versions): "chunks" and null.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/util/error.hpp"

namespace rpmirror::bundle {

inline constexpr int kFormatVersion = 1;
inline constexpr std::string_view kManifestName = "manifest.json";
inline constexpr std::string_view kSignatureName = "manifest.json.asc";
// Where a syncable bundle's repository trees are: <bundle>/repos/<id>/.
inline constexpr std::string_view kTreesDir = "repos";
// The snapshot `rpmirror export` keeps of the state it exported into the bundle `bundle_name`.
std::string export_snapshot_name(std::string_view bundle_name);

// How the carried files are laid out in a bundle.
enum class Layout {
    Chunks,  // end to end in chunk-NNNNNN files
    Trees,   // one file each, at repos/<id>/<key> (--format syncable)
};

// Where a carried file's bytes are.
struct Placement {
    std::size_t chunk = 0;     // index into Manifest::chunks
    std::uint64_t offset = 0;  // within that chunk
};

struct BundleFile {
    std::string key;  // relative to the repository
    std::uint64_t size = 0;
    std::string sha256;  // lowercase hex
    std::optional<Placement> carried;
};

struct BundleRepository {
    std::string id;
    std::string repomd_sha256;         // of its repodata/repomd.xml (one of `files`)
    std::vector<BundleFile> files;     // the whole state, sorted by key
    std::vector<std::string> removed;  // the base's keys this state lacks, sorted
};

struct Chunk {
    std::string name;  // a file name in the bundle ("chunk-000000")
    std::uint64_t size = 0;
    std::string sha256;
};

// The base an incremental bundle applies to: each repository's repomd.xml SHA-256 there (nullopt:
// the base holds no such repository).
struct BaseIdentity {
    std::string name;  // the snapshot or bundle it was given as
    std::map<std::string, std::optional<std::string>> repositories;
};

struct Manifest {
    std::string tool_version;
    std::string name;                  // the bundle's name: the snapshot an import records
    std::optional<BaseIdentity> base;  // nullopt: complete
    Layout layout = Layout::Chunks;
    // The snapshot the exporting side kept of the exported state (each repository's), named by
    // export_snapshot_name; nullopt: none (an earlier version's bundle).
    std::optional<std::string> snapshot;
    std::vector<BundleRepository> repositories;
    std::vector<Chunk> chunks;
};

// The manifest as JSON (the form above), ending in a newline.
std::string format_manifest(const Manifest& manifest);

// Parses and checks the manifest `text` read from `shown` (named in every error): the format and
// version, every field's type, valid repository ids and keys (store::check_key) each once, SHA-256
// digests, repodata/repomd.xml among each repository's files with its repomd_sha256, carried files
// inside their chunk and the chunks holding exactly the carried bytes, end to end in manifest
// order (in layout Trees each carried file is the whole of its own chunk, repos/<id>/<key>), and
// a complete bundle carrying every file. Error{BadInput} "<what>: <why>" otherwise.
Result<Manifest> parse_manifest(std::string_view text, std::string_view shown);

// The identity of the base a bundle's `repositories` bring a destination to (what an incremental
// bundle made against it names): each repository's repomd_sha256.
BaseIdentity identity_after(const Manifest& manifest);

}  // namespace rpmirror::bundle
