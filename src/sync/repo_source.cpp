// Where a sync's repository comes from (see sync/repo_source.hpp).
#include "sync/repo_source.hpp"

#include <span>

namespace rpmirror {

Result<RepoSource> resolve_mirrors(const RepoConfig& repo, const DownloadOptions& options,
                                   const std::stop_token& stop) {
    Downloader downloader(options);
    return resolve_mirrors(repo, downloader, stop);
}

Result<RepoSource> resolve_mirrors(const RepoConfig& repo, Downloader& downloader,
                                   const std::stop_token& stop) {
    RepoSource source;
    source.base_urls = repo.baseurls;
    const std::optional<std::string>& list_url = repo.metalink ? repo.metalink : repo.mirrorlist;
    if (list_url) {
        auto document = downloader.fetch_document(*list_url, kMaxDocumentBytes, stop);
        if (!document) {
            if (source.base_urls.empty() || document.error().code == ErrorCode::Interrupted) {
                return tl::unexpected(std::move(document.error()));
            }
        } else {
            std::vector<std::string> listed;
            if (repo.metalink || document->find("<metalink") != std::string::npos) {
                // A mirrorlist= may point at a metalink; dnf tells them apart by content too.
                auto metalink = parse_metalink(*document, *list_url);
                if (!metalink) {
                    return tl::unexpected(std::move(metalink.error()));
                }
                for (const MetalinkUrl& url : metalink->urls) {
                    listed.push_back(url.base_url);
                }
                source.metalink = std::move(*metalink);
            } else {
                auto mirrors = parse_mirrorlist(*document, *list_url);
                if (!mirrors) {
                    return tl::unexpected(std::move(mirrors.error()));
                }
                listed = std::move(*mirrors);
            }
            auto usable = usable_listed_mirrors(listed, *list_url);
            if (!usable) {
                return tl::unexpected(std::move(usable.error()));
            }
            source.base_urls.insert(source.base_urls.end(), usable->begin(), usable->end());
        }
    }
    if (source.base_urls.empty()) {
        return make_error(ErrorCode::BadInput, "no usable mirror", repo.id);
    }
    return source;
}

// Fetches repomd.xml from the first mirror that serves a valid one (vouched for by the metalink
// when there is one). Every mirror tried is named in the error when none works.
Result<FetchedRepomd> fetch_repomd(const RepoSource& source, Downloader& downloader,
                                   const std::string& repo_id, const std::stop_token& stop) {
    std::vector<std::string> attempts;
    for (const std::string& base : source.base_urls) {
        const std::string url = join_url(base, kRepomdHref);
        std::int64_t last_modified = -1;
        auto bytes = downloader.fetch_document(url, kMaxDocumentBytes, stop, &last_modified);
        if (!bytes && bytes.error().code == ErrorCode::Interrupted) {
            return tl::unexpected(std::move(bytes.error()));
        }
        if (!bytes) {
            attempts.push_back(bytes.error().to_string());
            continue;
        }
        if (source.metalink) {
            auto vouched = verify_repomd_against_metalink(
                std::as_bytes(std::span<const char>(bytes->data(), bytes->size())),
                *source.metalink);
            if (!vouched) {
                attempts.push_back(url + ": " + vouched.error().message);
                continue;
            }
        }
        auto parsed = parse_repomd(*bytes, url);
        if (!parsed) {
            attempts.push_back(parsed.error().to_string());
            continue;
        }
        return FetchedRepomd{std::move(*bytes), std::move(*parsed), base, std::nullopt,
                             last_modified};
    }
    std::string message = "cannot fetch repomd.xml from any mirror";
    for (const std::string& attempt : attempts) {
        message += "\n    " + attempt;
    }
    return make_error(ErrorCode::Network, std::move(message), repo_id);
}

// The mirrors for everything after repomd.xml: the mirror that served it first, so packages and
// records come from the same revision whenever that mirror can serve them.
std::shared_ptr<MirrorList> mirrors_starting_with(const RepoSource& source,
                                                  const std::string& first, unsigned demote_after) {
    std::vector<std::string> ordered{first};
    for (const std::string& base : source.base_urls) {
        if (base != first) {
            ordered.push_back(base);
        }
    }
    return std::make_shared<MirrorList>(std::move(ordered), demote_after);
}

}  // namespace rpmirror
