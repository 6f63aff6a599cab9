// Where an installation tree's own files are kept (--treeinfo: .treeinfo and its images, those
// of its [checksums] and those [images-*] name without one), written once over the tree's
// store::ObjectStore (a directory, or a prefix of a bucket) and the record of what rpmirror
// stored there (sync/stored_record.hpp: the catalogue .treeinfo-images in the state directory,
// the state object .rpmirror/treeinfo.json in a bucket). sync_tree (sync/tree.cpp) runs the
// sequence: which files are held, the missing ones fetched and stored, .treeinfo published once
// everything it names is stored, then --delete's collection of the images rpmirror stored that
// .treeinfo no longer names.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "download/download.hpp"
#include "rpmirror/util/error.hpp"
#include "store/mirror_root.hpp"
#include "store/spool.hpp"
#include "sync/stored_record.hpp"
#include "sync/sync.hpp"
#include "sync/tree.hpp"

namespace rpmirror {

class TreeFiles {
    struct Key {
        explicit Key() = default;
    };

  public:
    // The tree at `root` (repo_directory's: a directory or an s3:// URL), whose lock the caller
    // holds (`lock`, confirmed before each write; null: none). Its record is read; the store's
    // error (Error{BadInput} for an s3:// URL or settings that do not resolve).
    static Result<std::unique_ptr<TreeFiles>> open(const std::filesystem::path& root,
                                                   const SyncOptions& options, RepoLock* lock,
                                                   std::stop_token stop);
    ~TreeFiles();
    TreeFiles(const TreeFiles&) = delete;
    TreeFiles& operator=(const TreeFiles&) = delete;

    // Per file of `files`, true iff the tree holds it as listed: recorded with that checksum and
    // unchanged since, or (a record without checksums, a file not recorded) its content hashed
    // to it (the checksum cache believed for what the record vouches for).
    std::vector<bool> held(std::span<const TreeInfo::File> files);

    // Per path of `paths` (relative to the tree): true iff rpmirror stored the file there and it
    // is still as stored (an image without a checksum in .treeinfo: nothing else vouches for it).
    std::vector<bool> held_as_stored(std::span<const std::string> paths);

    // True iff the tree's published .treeinfo is exactly `text`.
    bool publishes(std::string_view text);

    // Fetches `requests` (each file's href and path relative to the tree) through `downloader`,
    // into the store's staging area (ObjectStore::stage: in place on disk, all at once; a spool
    // otherwise, one at a time), and commits each one that verified, durably, recording it as
    // rpmirror's. Returns the downloads' report, one FileResult per request (Downloaded or
    // AlreadyPresent only once stored; a file that could not be stored is Failed with the
    // store's error), or the error that stopped it.
    Result<DownloadReport> fetch(Downloader& downloader,
                                 const std::vector<DownloadRequest>& requests,
                                 ProgressSink* progress, const std::stop_token& stop);

    // Publishes `text` as the tree's .treeinfo (staged and committed as an image is), after
    // what it names is durable and readable. Returns false iff the tree already had exactly that
    // .treeinfo (nothing written).
    Result<bool> publish(std::string_view text);

    // --delete: removes every file rpmirror stored that `listed` (paths relative to the tree)
    // does not name and that is still as stored; one that changed since is left in place with
    // a line in `warnings`. Returns the paths removed.
    Result<std::vector<std::string>> collect(const std::set<std::string>& listed,
                                             std::vector<std::string>& warnings);

    // Keeps the record of what rpmirror stored when it changed (best effort: a failure is a
    // warning), with what the user should know about the spool.
    void save(std::vector<std::string>& warnings);

    // Through open() only: Key is private.
    TreeFiles(Key, store::MirrorRoot root, StoredRecord record, const SyncOptions& options,
              RepoLock* lock, std::stop_token stop);

  private:
    // The local directory staged files and copies pass through (created on first use).
    Result<std::filesystem::path> scratch();
    // Records `key` as stored now, verified against `type` `digest`.
    Result<void> record(const std::string& key, ChecksumType type, std::string digest);
    // The staging options of the tree's files (durable: .treeinfo vouches for them).
    store::StageOptions stage_options(const std::stop_token& stop) const;
    // A staging area of the tree's store; its warning (once) kept for save().
    Result<std::unique_ptr<store::Staging>> stage(const std::stop_token& stop);
    // Commits through `staging` each of `items` (indices of `requests` and of total.files) that
    // was downloaded into it, and records it; a failure to do so makes its result (and one more
    // of `total`'s) failed.
    void commit(store::Staging& staging, const std::vector<DownloadRequest>& requests,
                std::span<const std::size_t> items, DownloadReport& total);

    store::MirrorRoot root_;
    store::ObjectStore& objects_;
    StoredRecord record_;
    const SyncOptions& options_;
    RepoLock* lock_;
    std::stop_token stop_;
    std::optional<store::S3Spool> spool_;
    std::vector<std::string> warnings_;  // for save()
    bool changed_ = false;               // the record, since it was read or saved
};

}  // namespace rpmirror
