// What `rpmirror import` checks before the destination changes at all: the manifest and its
// signature, every chunk (with a resume record of those already checked), and the base.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "export/manifest.hpp"
#include "rpmirror/export/export.hpp"
#include "rpmirror/util/error.hpp"
#include "store/mirror_root.hpp"
#include "store/object_store.hpp"

namespace rpmirror::bundle {

// Reads and parses the manifest of the bundle `dir`; with `keyring` (an armored public key file),
// its signature (manifest.json.asc) must be a good one by a key of it. Errors name the file.
Result<Manifest> read_manifest(const std::filesystem::path& dir,
                               const std::optional<std::filesystem::path>& keyring);

// Where the resume records of imports are kept: the store of `state_dir`/imports/ (one file per
// bundle directory and manifest).
std::unique_ptr<store::ObjectStore> resume_records(const std::filesystem::path& state_dir);

// Checks every chunk of `manifest` in the bundle `dir` (check_chunk), skipping those the bundle's
// resume record in `records` lists with the same SHA-256, size and mtime, and adding each one
// checked to it (replaced whole after each chunk; best effort: a record that cannot be written
// only costs checking again). Counts both in `report`. The first chunk's error.
Result<void> check_chunks(const std::filesystem::path& dir, const Manifest& manifest,
                          store::ObjectStore& records, ImportReport& report);

// Removes the resume record of the bundle `dir` from `records` (its import completed). Best
// effort.
void forget_checked_chunks(const std::filesystem::path& dir, const Manifest& manifest,
                           store::ObjectStore& records);

// The SHA-256 of each repository's current repodata/repomd.xml in `root` (nullopt: none).
Result<std::map<std::string, std::optional<std::string>>> current_indexes(store::MirrorRoot& root,
                                                                          const Manifest& manifest);

// Error{BadInput} naming both identities unless each repository of an incremental `manifest` is
// at its base in `current` (or already at the bundle's state).
Result<void> check_base(const Manifest& manifest, store::MirrorRoot& root,
                        const std::map<std::string, std::optional<std::string>>& current);

}  // namespace rpmirror::bundle
