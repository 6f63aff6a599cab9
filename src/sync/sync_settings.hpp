// What a sync's options become: the downloader's settings for one repository, and the
// fingerprint of everything that shapes a mirror (a no-op needs the same one).
#pragma once

#include <string>
#include <string_view>

#include "download/download.hpp"
#include "index/index.hpp"
#include "rpmirror/config/config.hpp"
#include "store/sync_store.hpp"
#include "sync/sync.hpp"

namespace rpmirror {

// `options` with the repository's own settings (parallelism, retries, timeouts, TLS, proxy,
// credentials, throttle) and -j applied.
DownloadOptions options_for_repo(DownloadOptions options, const RepoConfig& repo,
                                 const SyncOptions& sync_options);

// The text the state records and a no-op compares: selection, layout, metadata publishing,
// --s3-acl, and with --gpgcheck the keys; `trusted_keys`: the key ids --gpgcheck checks against
// ("" without the check).
std::string options_fingerprint(const SyncOptions& options, const SelectionOptions& selection,
                                const RepoConfig& repo, std::string_view trusted_keys);

// Where and how a sync of `repo_id` opens its mirror (store::SyncStore::open): the repository's
// directory (repo_directory's) and metadata directory, the state directory, what only a directory
// can do and a bucket's settings. --upstream-layout's place beneath the root is the caller's.
store::SyncStoreOptions sync_store_options(const SyncOptions& options, std::string_view repo_id);

}  // namespace rpmirror
