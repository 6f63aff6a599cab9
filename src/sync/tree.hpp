// --treeinfo: an installation tree (kickstart/PXE) mirrored whole: its .treeinfo read, the files
// of its [checksums] verified and fetched, each variant and addon repository synced as a
// repository beneath the tree, and .treeinfo published last.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "download/download.hpp"
#include "metadata/treeinfo.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "rpmirror/config/config.hpp"
#include "rpmirror/util/error.hpp"
#include "store/mirror_store.hpp"
#include "sync/sync.hpp"

namespace rpmirror {

// Syncs the tree whose root is `repo`'s URL into the repository directory of `options` (the
// caller holds its lock, `lock`: null with -u; a bucket's files confirm it before each write):
// .treeinfo fetched, every repository of it synced by `sync_one` (called
// with the repository's configuration and options, returning its report), every file of
// [checksums] verified in place or fetched, then .treeinfo published. The report sums the
// repositories' and names the tree.
using RepositorySync =
    std::function<RepoSyncReport(const RepoConfig& repo, const SyncOptions& options)>;
RepoSyncReport sync_tree(Downloader& downloader, const RepoConfig& repo, const SyncOptions& options,
                         const RepositorySync& sync_one, RepoLock* lock, ProgressSink* progress,
                         std::stop_token stop);

// SyncOptions::announce_tree: the warning for a repository synced without --treeinfo into
// `store` (null with -u: nothing said), whose mirror `base_url` serves a .treeinfo that parses,
// naming --treeinfo; nullopt otherwise: the store recorded an earlier sync (said then), none is
// served, or it cannot be read. One request to upstream, at a mirror's first sync only.
std::optional<std::string> tree_note(const SyncOptions& options, store::MirrorStore* store,
                                     std::string_view base_url, Downloader& downloader,
                                     std::stop_token stop);

}  // namespace rpmirror
