// --treeinfo: an installation tree (kickstart/PXE) mirrored whole: its .treeinfo read, the files
// of its [checksums] verified and fetched, each variant and addon repository synced as a
// repository beneath the tree, and .treeinfo published last.
#pragma once

#include <filesystem>
#include <map>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/checksum.hpp"
#include "rpmirror/config.hpp"
#include "rpmirror/download.hpp"
#include "rpmirror/error.hpp"
#include "rpmirror/sync.hpp"

namespace rpmirror {

// What a .treeinfo says a tree holds.
struct TreeInfo {
    struct File {
        std::string path;  // relative to the tree, lexically normal
        ChecksumType type = ChecksumType::Sha256;
        std::string digest;  // lowercase hex
    };
    std::vector<File> files;  // [checksums], in order
    // The repositories (relative directories; "" for the tree's root), in order, without
    // duplicates: every [variant-*] and [addon-*] `repository` (productmd 1.x), [general]'s
    // (the older format); the root alone when none is named.
    std::vector<std::string> repositories;
};

// Parses the .treeinfo `text` (named `name` in messages) with the INI reader of the
// configuration (config/ini.hpp: Python's ConfigParser dialect, which productmd writes). Keys of
// [checksums] keep their case. Returns Error{BadInput} naming the file and line for a malformed
// line, an entry of [checksums] that is not TYPE:HEX of a known type, or a path (a file's or a
// repository's) that is absolute, climbs out of the tree or is otherwise unsafe.
Result<TreeInfo> parse_treeinfo(std::string_view text, const std::string& name);

// Syncs the tree whose root is `repo`'s URL into the repository directory of `options` (the
// caller holds its lock): .treeinfo fetched, every repository of it synced by `sync_one` (called
// with the repository's configuration and options, returning its report), every file of
// [checksums] verified in place or fetched, then .treeinfo published. The report sums the
// repositories' and names the tree.
using RepositorySync =
    std::function<RepoSyncReport(const RepoConfig& repo, const SyncOptions& options)>;
RepoSyncReport sync_tree(Downloader& downloader, const RepoConfig& repo, const SyncOptions& options,
                         const RepositorySync& sync_one, ProgressSink* progress,
                         std::stop_token stop);

}  // namespace rpmirror
