// Where an installation tree's own files are kept (--treeinfo: .treeinfo and its images, those
// of its [checksums] and those [images-*] name without one): a directory, or a prefix of a
// bucket. sync_tree (sync/tree.cpp) runs one sequence
// over either: which files are held, the missing ones fetched and stored, .treeinfo published
// once everything it names is stored, then --delete's collection of the images rpmirror stored
// that .treeinfo no longer names.
#pragma once

#include <filesystem>
#include <memory>
#include <set>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/download/download.hpp"
#include "rpmirror/sync/sync.hpp"
#include "rpmirror/util/error.hpp"
#include "sync/tree.hpp"

namespace rpmirror {

class TreeFiles {
  public:
    virtual ~TreeFiles() = default;

    // Per file of `files`, true iff the tree holds it as listed (its checksum verified in place,
    // or recorded and unchanged since).
    virtual std::vector<bool> held(std::span<const TreeInfo::File> files) = 0;

    // Per path of `paths` (relative to the tree): true iff rpmirror stored the file there and it
    // is still as stored (an image without a checksum in .treeinfo: nothing else vouches for it).
    virtual std::vector<bool> held_as_stored(std::span<const std::string> paths) = 0;

    // True iff the tree's published .treeinfo is exactly `text`.
    virtual bool publishes(std::string_view text) = 0;

    // Fetches `requests` (each file's href and path relative to the tree) through `downloader`
    // and stores each one that verified, recording it as rpmirror's. Returns the downloads'
    // report, one FileResult per request (Downloaded or AlreadyPresent only once stored; a file
    // that could not be stored is Failed with the store's error), or the error that stopped it.
    virtual Result<DownloadReport> fetch(Downloader& downloader,
                                         const std::vector<DownloadRequest>& requests,
                                         ProgressSink* progress, const std::stop_token& stop) = 0;

    // Publishes `text` as the tree's .treeinfo, after what it names is durable and readable.
    // Returns false iff the tree already had exactly that .treeinfo (nothing written).
    virtual Result<bool> publish(std::string_view text) = 0;

    // --delete: removes every file rpmirror stored that `listed` (paths relative to the tree)
    // does not name and that is still as stored; one that changed since is left in place with
    // a line in `warnings`. Returns the paths removed.
    virtual Result<std::vector<std::string>> collect(const std::set<std::string>& listed,
                                                     std::vector<std::string>& warnings) = 0;

    // Keeps the record of what rpmirror stored (best effort: a failure is a warning).
    virtual void save(std::vector<std::string>& warnings) = 0;
};

// The tree at the directory `root` (the caller holds its run lock).
std::unique_ptr<TreeFiles> open_local_tree_files(const std::filesystem::path& root,
                                                 const SyncOptions& options,
                                                 const std::stop_token& stop);

// The tree at `options`' s3:// location for `repo_id`, whose lease the caller holds (`lock`,
// confirmed before each write; null: none): its record (s3::kTreeStateKey) read and its prefix
// listed; files pass through a spool one at a time. `warnings` receives what the user should
// know (the spool's place).
Result<std::unique_ptr<TreeFiles>> open_s3_tree_files(const SyncOptions& options,
                                                      std::string_view repo_id, RepoLock* lock,
                                                      std::vector<std::string>& warnings);

}  // namespace rpmirror
