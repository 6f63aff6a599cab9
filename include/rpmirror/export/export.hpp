// Bundles for disconnected sites: `rpmirror export` writes mirrored repositories (complete, or
// what changed since a base) into a bundle directory of checksummed chunks and a manifest;
// `rpmirror import` checks a bundle whole, then places it into a mirror (a directory or an s3://
// prefix) as a sync does: packages first, metadata last and atomically, the result recorded and
// kept as a snapshot named after the bundle.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/s3/s3.hpp"
#include "rpmirror/util/error.hpp"

namespace rpmirror {

// --base auto: the newest snapshot export-NAME every exported repository holds, i.e. the state the
// last bundle exported from here carried (none: a complete bundle). For timers; "auto" is
// therefore no snapshot name --base can give.
inline constexpr std::string_view kExportBaseAuto = "auto";

struct ExportOptions {
    std::string destination;                // -p: the mirror's root (a directory or s3:// URL)
    std::vector<std::string> repositories;  // --repo: ids; empty = every repository there
    std::filesystem::path bundle;           // -o: the bundle directory (must not exist)
    std::uint64_t chunk_size = 1ULL << 30;  // --chunk-size
    // --base: the snapshot name the far side holds (under `snapshot_dir`), the directory of the
    // bundle it imported last, or that bundle's name (the snapshot export-NAME its export kept);
    // kExportBaseAuto: the newest such snapshot (none: complete). nullopt = a complete bundle.
    std::optional<std::string> base;
    // --format syncable: each carried file whole at repos/<id>/<key> of the bundle (plain
    // repository trees dnf and `rpmirror sync` read through file://) rather than in chunks.
    // Complete bundles only.
    bool syncable = false;
    std::filesystem::path snapshot_dir;  // where snapshots/ is ("" = `destination`)
    // --copy: the snapshot export-<bundle> copies packages instead of hard-linking them (a
    // snapshot_dir on another filesystem; SnapshotCreateOptions::copy).
    bool copy = false;
    // --keep-exports: once the bundle is made, keep only the newest N snapshots export-* of each
    // repository exported (the one just taken always among them, and every published one), as
    // --keep-snapshots keeps a sync's. 0 = keep every one.
    std::size_t keep_exports = 0;
    std::string sign_key;             // --sign-key: signs the manifest ("" = unsigned)
    std::filesystem::path state_dir;  // "" = the default
    std::optional<s3::S3Overrides> s3;
};

struct ExportedRepository {
    std::string id;
    std::size_t files = 0;    // in its state
    std::size_t carried = 0;  // of them in the bundle
    std::uint64_t carried_bytes = 0;
    std::size_t removed = 0;
};

struct ExportReport {
    std::filesystem::path bundle;
    std::vector<ExportedRepository> repositories;
    std::size_t chunks = 0;
    std::uint64_t bytes = 0;  // the chunks'
    bool signed_manifest = false;
    std::string snapshot;  // the snapshot of each repository kept of the exported state
    std::string base;      // the base's name ("" = a complete bundle; --base auto finding none)
    // --keep-exports: "<repository>: export-NAME" of each older export snapshot removed.
    std::vector<std::string> pruned;
    // What could not be pruned (the bundle is made all the same), naming the snapshot.
    std::vector<std::string> warnings;
};

// Writes the bundle: each repository first kept as the snapshot export-<bundle name>
// (under `snapshot_dir`; the manifest names it), then that snapshot's files
// hashed (SHA-256) and those the base lacks or holds otherwise copied into chunks of at most
// `chunk_size` bytes (or whole, `syncable`), then the manifest (signed with `sign_key`), all in a
// temporary directory beside `bundle` renamed to it at the end (nothing is left under `bundle`,
// and no snapshot taken, on an error). Error{BadInput} naming what was wrong: `bundle` exists, a
// repository is not there (no repodata/repomd.xml), the snapshot export-<name> exists already,
// the base is neither a bundle nor a snapshot of every repository, `syncable` with a base;
// create_and_prune_snapshot's refusals (a mirror not completely synced; Error{Unsupported} when
// hard links cannot be made there, saying to use --copy); Error{Corrupt} naming a file that changed
// while it was read; the store's and gpg's errors.
Result<ExportReport> export_bundle(const ExportOptions& options);

// The configuration jobs whose repositories `rpmirror export --config-file F --job NAME` exports.
struct ExportJobs {
    std::filesystem::path config_file;  // "" = kDefaultJobsConfigFile
    std::vector<std::string> patterns;  // --job globs (comma lists split); empty = enabled jobs
};

// Points `options` at the repositories of the jobs `jobs` selects (rpmirror.conf's
// jobs, `--job` patterns), appending the configuration's warnings ("FILE:LINE: ...") to `warnings`:
// each job's repository directory is <root>/<id>, every job's under one root, which becomes
// `options.destination` (a -p given must be that root) with the ids as `options.repositories`;
// the jobs' state directory, snapshot directory and s3 settings fill those `options` leaves
// unset. Error{BadInput} naming the file, the pattern or the job: a configuration that does not
// load, a pattern matching no job, a job with a bad value, jobs under different roots or with
// different state or snapshot directories, --repo given as well.
Result<void> choose_export_jobs(const ExportJobs& jobs, ExportOptions& options,
                                std::vector<std::string>& warnings);

struct ImportOptions {
    std::filesystem::path bundle;                  // read only, never written
    std::string destination;                       // -p
    std::optional<std::filesystem::path> keyring;  // --keyring: the manifest must be signed by it
    std::filesystem::path state_dir;               // "" = the default
    std::optional<s3::S3Overrides> s3;
    std::optional<std::chrono::seconds> lock_wait;
};

struct ImportedRepository {
    std::string id;
    std::size_t placed = 0;  // files written
    std::uint64_t placed_bytes = 0;
    std::size_t removed = 0;
    bool already = false;  // the destination held the bundle's state already: nothing done
    std::string snapshot;  // the snapshot recorded ("" = none: see warnings)
};

struct ImportReport {
    std::string name;  // the bundle's
    std::vector<ImportedRepository> repositories;
    std::size_t chunks_checked = 0;
    std::size_t chunks_resumed = 0;  // already checked by an earlier, interrupted import
    std::vector<std::string> warnings;
};

// Imports the bundle into the mirror at `destination`. Before anything there changes: the
// manifest is parsed and checked, its signature verified against `keyring` (when given), every
// chunk's size and SHA-256 checked (those a resume record in the state directory says an earlier
// run checked, with the same size and mtime, are not read again), and an incremental bundle's
// base compared with each repository's current repomd.xml. Then each repository is placed as a
// sync places it (its lock held; packages through the store's staging area, checked as they are
// written; the metadata published last, atomically; the sync recorded; files the bundle's state
// lacks removed) and a snapshot named after the bundle is taken. Error{Unsafe} or Error{Corrupt}
// naming the manifest or its signature for a bad or missing signature; Error{Corrupt} or
// Error{NotFound} naming a damaged or missing chunk; Error{BadInput} naming both identities when
// the destination is not the bundle's base; the store's errors.
Result<ImportReport> import_bundle(const ImportOptions& options);

}  // namespace rpmirror
