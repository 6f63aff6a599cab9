// The publish stage: repository metadata is swapped in last and atomically, and packages the
// selection no longer lists are removed only after that.
//
// A client reading the mirror sees either the previous repodata/ or the new one, complete, and
// never metadata that lists a package the mirror lacks: the caller publishes only after every
// selected package is present and verified.
#pragma once

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "rpmirror/util/error.hpp"

namespace rpmirror {

// A staging directory for one repository's new metadata, beside the live `repodata/`:
// `<metadata_dir>/.repodata.staging-XXXXXX`. Fill it, then publish(); if it is destroyed without
// being published, it is removed with everything in it (the live metadata is untouched).
// Move-only. Not thread-safe.
class MetadataStage {
  public:
    // Creates the staging directory under `metadata_dir` (created with parents if missing).
    // Returns Error{Io} with errno iff it cannot be created.
    static Result<MetadataStage> create(const std::filesystem::path& metadata_dir);

    MetadataStage(MetadataStage&& other) noexcept;
    MetadataStage& operator=(MetadataStage&& other) noexcept;
    MetadataStage(const MetadataStage&) = delete;
    MetadataStage& operator=(const MetadataStage&) = delete;
    ~MetadataStage();

    // The staging directory; files written here become `<metadata_dir>/repodata/...`.
    const std::filesystem::path& dir() const { return staging_dir_; }

    // Makes the staged directory the live `repodata/`:
    //   1. syncfs() of the filesystem holding the mirror, so every package and metadata file
    //      written so far reaches the disk before any metadata that names it can be seen
    //      (one flush for the whole sync instead of an fsync per file);
    //   2. renameat2(RENAME_EXCHANGE) of the staging directory with `repodata/` (or a plain
    //      rename when there is no `repodata/` yet): readers see the old or the new directory,
    //      never a mix. Where the filesystem refuses the flag (NFS, CIFS, FUSE), the staged
    //      records are renamed into `repodata/` first, then repomd.xml (its old .asc removed
    //      before, the new one renamed in after), and records listed by neither the new nor the
    //      replaced repomd.xml are removed: at every instant repodata/repomd.xml is complete and
    //      every record it lists is there (see fs/swap.hpp);
    //   3. fsync() of the directories changed, so the swap itself is durable;
    //   4. removal of the old metadata (now under the staging name) or the merge's leftovers.
    // Returns Error{Io} with errno iff the swap fails (the live metadata is then unchanged), or
    // Error{Unsafe} iff `repodata` exists but is not a directory (a symlink is not followed).
    // Failing to remove the old copy after a successful swap is not an error.
    // With `flush` false, step 1 is left out: the files' contents are not flushed here (the
    // caller flushes them before anything reads them, SyncOptions::dnf_cache).
    Result<void> publish(bool flush = true);

    // How publish() put the metadata in place.
    enum class Method {
        None,       // not published (yet)
        Exchanged,  // renameat2(RENAME_EXCHANGE) with the live repodata/
        Created,    // there was no repodata/: the staging directory was renamed to it
        Merged,     // plain renames into repodata/ (NFS, CIFS, FUSE: no RENAME_EXCHANGE)
    };
    Method method() const { return method_; }
    // True iff publish() had to merge by plain renames.
    bool merged() const { return method_ == Method::Merged; }

  private:
    MetadataStage(std::filesystem::path metadata_dir, std::filesystem::path staging_dir);
    std::filesystem::path metadata_dir_;
    std::filesystem::path staging_dir_;
    bool published_ = false;
    Method method_ = Method::None;
};

// Returns the staging directories left by interrupted runs (`.repodata.staging-*` directories,
// not symlinks, under `metadata_dir`), sorted; empty iff there are none or it cannot be read.
std::vector<std::filesystem::path> find_stale_stages(const std::filesystem::path& metadata_dir);

// Removes the staging directories left by interrupted runs, except `except` (the stage of the
// running sync). Returns how many were removed. Never follows symlinks.
std::size_t remove_stale_stages(const std::filesystem::path& metadata_dir,
                                const std::filesystem::path& except = {});

}  // namespace rpmirror
