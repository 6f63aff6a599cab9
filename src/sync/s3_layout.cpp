// --upstream-layout in a bucket (see sync/s3_sync.hpp): what the other releases beneath the layout
// root recorded, and the catalogue of the blobs rpmirror stored there with its --delete collection.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <functional>
#include <set>

#include <fmt/core.h>

#include "rpmirror/diff/diff.hpp"
#include "rpmirror/metadata/metadata.hpp"
#include "store/s3_store.hpp"
#include "sync/catalogue.hpp"
#include "sync/s3_sync.hpp"

namespace rpmirror {

namespace {

// Where mark_release records a release's last sync, beneath its prefix.
constexpr std::string_view kReleaseKey = ".rpmirror/release";

// True iff `key` (relative to the repository) is a package beyond the repository's prefix: a
// blob of an --upstream-layout root (not the mirror list written there too).
bool is_layout_blob(std::string_view key) {
    return key.starts_with("../") && key.ends_with(".rpm");
}

}  // namespace

Result<std::vector<std::string>> S3Destination::collect_layout_blobs(
    bool collect, std::vector<std::string>& warnings) {
    constexpr std::string_view kCatalogueKey = ".rpmirror/upstream-layout-catalogue.json";
    const s3::S3Location root{location_.bucket, root_prefix_};
    const bool stored_blobs =
        std::any_of(holdings_->stored_now().begin(), holdings_->stored_now().end(),
                    [](const std::string& key) { return is_layout_blob(key); });
    if (!collect && !stored_blobs) {
        return std::vector<std::string>();  // nothing to record: the catalogue is not read
    }
    auto loaded = s3::load_state(client_, root, kCatalogueKey);
    if (!loaded) {
        return tl::unexpected(std::move(loaded.error()));
    }
    s3::MirrorState catalogue = *loaded ? std::move(**loaded) : s3::MirrorState{};
    // Keys relative to the root, and back.
    // nullopt for a key with ".." segments of its own, which climbs above the root.
    const auto below_root = [this](std::string_view key) -> std::optional<std::string> {
        const std::string full = location_.key(key);
        if (!full.starts_with(root_prefix_)) {
            return std::nullopt;
        }
        return full.substr(root_prefix_.size());
    };
    for (const std::string& key : holdings_->stored_now()) {
        const auto stored = holdings_->state().objects.find(key);
        const auto blob = below_root(key);
        if (is_layout_blob(key) && stored != holdings_->state().objects.end() && blob) {
            catalogue.objects[*blob] = stored->second;
        }
    }
    std::vector<std::string> removed;
    const std::size_t catalogued = catalogue.objects.size();
    if (collect && (!catalogue.objects.empty() || options_.keep_releases > 0)) {
        // The root as it is now (other releases may have been published since load()).
        auto fresh = s3::list_mirror_within(client_, location_, root_prefix_);
        if (!fresh) {
            return tl::unexpected(std::move(fresh.error()));
        }
        holdings_->replace_listing(std::move(*fresh));
        if (options_.keep_releases > 0) {
            if (auto pruned = prune_releases(removed, warnings); !pruned) {
                return tl::unexpected(std::move(pruned.error()));
            }
        }
        // Every package every repository beneath the root lists, relative to the root.
        std::set<std::string> referenced;
        std::optional<Error> doubt;
        constexpr std::string_view kIndex = "repodata/repomd.xml";
        for (const auto& [key, object] : holdings_->listing()) {
            if (doubt || !key.ends_with(kIndex) ||
                (key.size() > kIndex.size() && key[key.size() - kIndex.size() - 1] != '/')) {
                continue;
            }
            const auto below = below_root(key.substr(0, key.size() - kIndex.size()));
            if (!below) {
                continue;
            }
            const std::string& tree = *below;
            auto contents = read_stored_repository(
                s3::object_url(location_.bucket, root_prefix_ + tree), {}, options_.s3);
            if (!contents) {
                doubt = std::move(contents.error());
                break;
            }
            PathPolicy policy;
            policy.safe_write_path = "/";
            policy.repo_root = std::filesystem::path("/") / tree;
            for (std::size_t position = 0; position < contents->packages.size(); ++position) {
                const PackageView package = contents->packages[position];
                auto relative = safe_relative_path(package.location_href, package.nevra(), policy);
                if (!relative) {
                    doubt = std::move(relative.error());
                    break;
                }
                referenced.insert(
                    (std::filesystem::path(tree) / *relative).lexically_normal().generic_string());
            }
        }
        if (doubt) {
            warnings.push_back("no blob deleted: the repositories beneath " + root.to_string() +
                               " cannot all be read: " + doubt->to_string());
        } else {
            std::vector<std::string> condemned;
            for (auto it = catalogue.objects.begin(); it != catalogue.objects.end();) {
                if (referenced.contains(it->first)) {
                    ++it;
                    continue;
                }
                const std::string key =
                    s3::key_relative_to(location_, root_prefix_, root_prefix_ + it->first);
                const auto listed = holdings_->listing().find(key);
                if (listed != holdings_->listing().end() &&
                    s3::still_matches(it->second, listed->second)) {
                    condemned.push_back(key);
                } else if (listed != holdings_->listing().end()) {
                    warnings.push_back(describe(key) +
                                       ": nothing lists it any more, but it changed since "
                                       "rpmirror stored it: left in place");
                }
                it = catalogue.objects.erase(it);
            }
            auto gone = holdings_->store().remove_files(condemned);
            if (!gone) {
                return tl::unexpected(std::move(gone.error()));
            }
            removed.insert(removed.end(), gone->begin(), gone->end());
        }
    }
    if (stored_blobs || catalogue.objects.size() != catalogued) {
        if (auto saved = s3::store_state(client_, root, catalogue, kCatalogueKey); !saved) {
            warnings.push_back(saved.error().to_string());
        }
    }
    return removed;
}

Result<void> S3Destination::mark_release() {
    const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::system_clock::now().time_since_epoch());
    s3::PutOptions put;
    put.content_type = "text/plain";
    auto stored = client_.put_object(location_.bucket, location_.key(kReleaseKey),
                                     std::to_string(now.count()) + "\n", put);
    if (!stored) {
        return tl::unexpected(std::move(stored.error()));
    }
    return {};
}

Result<void> S3Destination::prune_releases(std::vector<std::string>& removed,
                                           std::vector<std::string>& warnings) {
    constexpr std::string_view kIndex = "repodata/repomd.xml";
    const std::string mine = location_.prefix.substr(root_prefix_.size());
    // A key of the listing (relative to this repository) for one relative to the root.
    const auto listed_key = [this](std::string_view below_root) {
        return s3::key_relative_to(location_, root_prefix_, root_prefix_ + std::string(below_root));
    };
    std::vector<std::pair<std::int64_t, std::string>> releases;  // (marked, tree/ below root)
    for (const auto& [key, object] : holdings_->listing()) {
        if (!key.ends_with(kIndex) ||
            (key.size() > kIndex.size() && key[key.size() - kIndex.size() - 1] != '/')) {
            continue;
        }
        const std::string full = location_.key(key.substr(0, key.size() - kIndex.size()));
        if (!full.starts_with(root_prefix_)) {
            continue;
        }
        const std::string tree = full.substr(root_prefix_.size());
        if (tree == mine || !is_release_of(std::filesystem::path(mine).parent_path(),
                                           std::filesystem::path(tree).parent_path())) {
            continue;
        }
        const std::string shown = s3::object_url(location_.bucket, full);
        if (!holdings_->listing().contains(listed_key(tree + std::string(kReleaseKey)))) {
            warnings.push_back(fmt::format(
                "--keep-releases: {} was not synced by rpmirror: left in place (and not counted)",
                shown));
            continue;
        }
        auto text = client_.get_object(location_.bucket, full + std::string(kReleaseKey));
        if (!text) {
            return tl::unexpected(std::move(text.error()));
        }
        std::int64_t marked = 0;
        const auto [end, error] =
            std::from_chars(text->data(), text->data() + text->size(), marked);
        if (error != std::errc() || end == text->data()) {
            warnings.push_back(
                fmt::format("--keep-releases: {}: its record is not a time: left in place", shown));
            continue;
        }
        releases.emplace_back(marked, tree);
    }
    std::sort(releases.begin(), releases.end(), std::greater<>());
    std::string url = options_.mirror_url;
    if (!url.empty() && !url.ends_with('/')) {
        url += '/';
    }
    for (std::size_t position = options_.keep_releases - 1; position < releases.size();
         ++position) {
        const std::string& tree = releases[position].second;
        const s3::S3Location release{location_.bucket, root_prefix_ + tree};
        // Not while another worker syncs or repairs it.
        auto lease = store::S3Store(client_, release).lock(std::nullopt, {});
        if (!lease) {
            warnings.push_back(fmt::format("--keep-releases: {} not removed: {}",
                                           s3::object_url(release.bucket, release.prefix),
                                           lease.error().to_string()));
            continue;
        }
        // The mirror lists naming it first, then its index (it stops being a repository), then
        // the rest of it but the lease, which goes when released.
        std::vector<std::string> lists;
        std::vector<std::string> index;
        std::vector<std::string> rest;
        const std::string names_it = url + tree + "\n";
        for (const auto& [key, object] : holdings_->listing()) {
            const std::string full = location_.key(key);
            if (full.starts_with(release.prefix)) {
                if (full == release.key(kIndex)) {
                    index.push_back(key);
                } else if (full != release.key(s3::kLockKey)) {
                    rest.push_back(key);
                }
            } else if (!url.empty() && (key == "mirror.list" || key.ends_with("/mirror.list"))) {
                auto text = client_.get_object(location_.bucket, full);
                if (text && *text == names_it) {
                    lists.push_back(key);
                }
            }
        }
        for (const std::vector<std::string>* batch : {&lists, &index, &rest}) {
            auto gone = holdings_->store().remove_files(*batch);
            if (!gone) {
                return tl::unexpected(std::move(gone.error()));
            }
            removed.insert(removed.end(), gone->begin(), gone->end());
        }
    }
    return {};
}

}  // namespace rpmirror
