// Where a sync's repository comes from: its mirrors (baseurl, mirrorlist, metalink) and the
// repomd.xml one of them serves, vouched for by the metalink when there is one.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "download/download.hpp"
#include "metadata/metadata.hpp"
#include "rpmirror/config/config.hpp"
#include "rpmirror/util/error.hpp"

namespace rpmirror {

inline constexpr std::string_view kRepomdHref = "repodata/repomd.xml";

// Where a repository's mirrors come from, and the metalink that vouches for repomd.xml.
struct RepoSource {
    std::vector<std::string> base_urls;
    std::optional<Metalink> metalink;
};

struct FetchedRepomd {
    std::string bytes;
    Repomd parsed;
    std::string base_url;                  // the mirror it came from
    std::optional<std::string> signature;  // repomd.xml.asc from the same mirror, if it has one
    std::int64_t last_modified = -1;       // the server's Last-Modified (epoch seconds), -1: none
};

class PackageIndex;

// What a sync fetched of upstream, for a next step over the same revision (SyncOptions::upstream):
// the mirrors, and repomd.xml with its signature once that was checked.
struct UpstreamRevision {
    RepoSource source;
    FetchedRepomd repomd;
    // Its primary.xml as parsed, iff the sync that fetched it kept it (SyncOptions::dnf_cache):
    // the next step selects from it, neither fetching nor parsing primary.xml again.
    std::shared_ptr<const PackageIndex> primary;
};

// The repository's mirrors: its baseurls, then those its metalink or mirrorlist lists (a
// mirrorlist= that serves a metalink is read as one). Returns Error{BadInput} iff none is
// usable, or the error of the list's fetch or parse (unless baseurls remain). The list is
// fetched over `downloader`'s connections (Downloader::fetch_document).
Result<RepoSource> resolve_mirrors(const RepoConfig& repo, Downloader& downloader,
                                   const std::stop_token& stop);

// resolve_mirrors over connections of its own, with `options`.
Result<RepoSource> resolve_mirrors(const RepoConfig& repo, const DownloadOptions& options,
                                   const std::stop_token& stop);

// Fetches repomd.xml from the first mirror that serves a valid one (vouched for by the metalink
// when there is one), over `downloader`'s connections. Every mirror tried is named in the error
// when none works.
Result<FetchedRepomd> fetch_repomd(const RepoSource& source, Downloader& downloader,
                                   const std::string& repo_id, const std::stop_token& stop);

// The mirrors for everything after repomd.xml: the mirror that served it first, so packages and
// records come from the same revision whenever that mirror can serve them.
std::shared_ptr<MirrorList> mirrors_starting_with(const RepoSource& source,
                                                  const std::string& first, unsigned demote_after);

}  // namespace rpmirror
