// What a sync's options become: the downloader's settings for one repository, and the
// fingerprint of everything that shapes a mirror (a no-op needs the same one).
#pragma once

#include <string>
#include <string_view>

#include "rpmirror/config/config.hpp"
#include "rpmirror/download/download.hpp"
#include "rpmirror/index/index.hpp"
#include "rpmirror/sync/sync.hpp"

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

}  // namespace rpmirror
