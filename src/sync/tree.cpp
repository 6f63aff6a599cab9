// --treeinfo (sync/tree.hpp): an installation tree, its images and its repositories.
#include "sync/tree.hpp"

#include <algorithm>
#include <memory>
#include <set>

#include <fmt/core.h>

#include "checksum/hasher.hpp"
#include "metadata/metadata.hpp"
#include "metadata/treeinfo.hpp"
#include "store/destination.hpp"
#include "store/object_store.hpp"
#include "sync/catalogue.hpp"
#include "sync/repo_source.hpp"
#include "sync/tree_files.hpp"

namespace rpmirror {

namespace {

// Adds the counts and lists of `part` (one repository of the tree) to `total`.
void add_report(RepoSyncReport& total, RepoSyncReport part, const std::string& where) {
    total.upstream_packages += part.upstream_packages;
    total.selected += part.selected;
    total.downloaded += part.downloaded;
    total.bytes_downloaded += part.bytes_downloaded;
    total.kept += part.kept;
    total.replaced += part.replaced;
    total.resumed += part.resumed;
    total.retries += part.retries;
    total.linked += part.linked;
    total.linked_bytes += part.linked_bytes;
    total.link_fallbacks += part.link_fallbacks;
    total.signatures_checked += part.signatures_checked;
    total.noop = total.noop && part.noop;
    total.urls.insert(total.urls.end(), part.urls.begin(), part.urls.end());
    const std::filesystem::path prefix(where);
    for (const std::filesystem::path& deleted : part.deleted) {
        total.deleted.push_back(prefix / deleted);
    }
    for (PackageFailure& failure : part.failures) {
        total.failures.push_back(std::move(failure));
    }
    const std::string label = where.empty() ? "" : where + ": ";
    for (const std::string& warning : part.warnings) {
        total.warnings.push_back(label + warning);
    }
    if (part.error && !total.error) {
        Error error = std::move(*part.error);
        error.message = (where.empty() ? "the tree's root repository" : "repository " + where) +
                        ": " + error.message;
        total.error = std::move(error);
    }
}

// The URL of `path` (relative to the tree, climbing out of it) from the tree at `base`: its dot
// segments resolved, ending in '/'.
std::string outside_url(std::string_view base, const std::string& path) {
    const std::size_t scheme = base.find("://");
    const std::size_t slash =
        scheme == std::string_view::npos ? std::string_view::npos : base.find('/', scheme + 3);
    std::string url = join_url(base, path, false);
    if (slash != std::string_view::npos) {
        const std::filesystem::path joined =
            (std::filesystem::path(std::string(base.substr(slash))) / path).lexically_normal();
        url = std::string(base.substr(0, slash)) + joined.generic_string();
    }
    if (!url.ends_with('/')) {
        url += '/';
    }
    return url;
}

// Where the tree's .treeinfo, published at `root`, has clients find `path` (relative to the
// tree, climbing out of it): a directory, or a prefix of the tree's bucket; nullopt iff it lies
// above the bucket's top.
std::optional<store::Destination> outside_destination(const std::filesystem::path& root,
                                                      const std::string& path) {
    store::Destination place = store::Destination::of(root.native());
    for (const std::filesystem::path& part : std::filesystem::path(path)) {
        if (part != "..") {
            place = place.join(part.native());
            continue;
        }
        auto parent = place.parent();
        if (!parent) {
            return std::nullopt;
        }
        place = std::move(*parent);
    }
    return place;
}

// The warning for a repository the tree at `base` (mirrored at `root`) names outside itself,
// or nullopt iff a repository is already mirrored where the published .treeinfo points (synced
// on its own: nothing to say). Never mirrored with the tree: upstream's .treeinfo does not
// choose where beyond the tree's directory rpmirror writes (it could name another mirror's).
std::optional<std::string> outside_warning(const TreeInfo::Outside& outside, std::string_view base,
                                           const std::filesystem::path& root,
                                           const SyncOptions& options) {
    const std::string url = outside_url(base, outside.path);
    const std::optional<store::Destination> place = outside_destination(root, outside.path);
    const auto parent = place ? place->parent() : std::nullopt;
    const std::string id = place ? place->path().filename().string() : "ID";
    if (place && !options.urls_only) {
        auto objects = store::open_object_store(place->path().native(), options.s3);
        if (objects) {
            auto published = (*objects)->stat("repodata/repomd.xml");
            if (published && *published) {
                return std::nullopt;
            }
        }
    }
    return fmt::format(
        "[{}] repository = {} (line {} of .treeinfo) lies outside the tree: not mirrored with "
        "it; to mirror it {}: rpmirror sync --repofrompath {},{} --repo {} -p {}{} (and this "
        "sync's other options)",
        outside.section, outside.path, outside.line,
        place ? "where the published .treeinfo points (" + place->path().string() + ")"
              : "on its own",
        id, url, id, parent ? parent->path().string() : std::string("DESTINATION"),
        options.download_metadata ? " --download-metadata" : "");
}

}  // namespace

RepoSyncReport sync_tree(Downloader& downloader, const RepoConfig& repo, const SyncOptions& options,
                         const RepositorySync& sync_one, RepoLock* lock, ProgressSink* progress,
                         std::stop_token stop) {
    RepoSyncReport report;
    report.repo_id = repo.id;
    report.repo_dir = repo_directory(options, repo.id);
    report.noop = true;
    const std::filesystem::path root = report.repo_dir;

    // The tree's .treeinfo, from the first mirror that serves one.
    auto source = resolve_mirrors(repo, downloader, stop);
    if (!source || source->base_urls.empty()) {
        report.error =
            source ? Error{ErrorCode::BadInput, "no mirror to fetch .treeinfo from", repo.id, 0}
                   : std::move(source.error());
        report.metadata_unavailable = true;
        return report;
    }
    std::string text;
    std::string base;
    std::vector<std::string> tried;
    for (const std::string& url : source->base_urls) {
        auto fetched =
            downloader.fetch_document(join_url(url, kTreeinfoName), kMaxDocumentBytes, stop);
        if (fetched) {
            text = std::move(*fetched);
            base = url;
            break;
        }
        tried.push_back(fetched.error().to_string());
    }
    if (base.empty()) {
        std::string why = "--treeinfo: no mirror serves .treeinfo";
        for (const std::string& attempt : tried) {
            why += "; " + attempt;
        }
        report.error = Error{ErrorCode::Network, why, repo.id, 0};
        report.metadata_unavailable = true;
        return report;
    }
    auto tree = parse_treeinfo(text, join_url(base, kTreeinfoName));
    if (!tree) {
        report.error = std::move(tree.error());
        return report;
    }

    // -u: the tree's own files, then each repository's URLs; nothing is written.
    if (options.urls_only) {
        report.urls.push_back(join_url(base, kTreeinfoName));
        for (const TreeInfo::File& file : tree->files) {
            report.urls.push_back(join_url(base, file.path));
        }
        for (const std::string& image : tree->unchecksummed_images) {
            report.urls.push_back(join_url(base, image));
        }
    }

    // A repository outside the tree: left out, with how to mirror it beside the tree.
    for (const TreeInfo::Outside& outside : tree->outside_repositories) {
        if (auto warning = outside_warning(outside, base, root, options)) {
            report.warnings.push_back(std::move(*warning));
        }
    }

    // Who owns which key of the tree: each repository its packages (recorded as they are
    // synced), rpmirror its own names; the images only what nobody else owns.
    Owners owners;
    constexpr std::string_view kImagesOwner = "the tree's images";

    // Every repository of the tree, as a repository of its own beneath the root.
    for (const std::string& path : tree->repositories) {
        if (stop.stop_requested()) {
            break;
        }
        RepoConfig part = repo;
        part.mirrorlist.reset();
        part.metalink.reset();
        part.baseurls.clear();
        for (const std::string& url : source->base_urls) {
            part.baseurls.push_back(path.empty() ? url : join_url(url, path) + "/");
        }
        SyncOptions part_options = options;
        part_options.treeinfo = false;
        part_options.announce_tree = false;
        part_options.norepopath = true;
        part_options.download_path = path.empty() ? root : root / path;
        RepoSyncReport part_report = sync_one(part, part_options);
        const std::string owner =
            path.empty() ? "the repository at the tree's root" : "the tree's repository " + path;
        for (const std::string& key : part_report.package_keys) {
            owners.add(path.empty() ? key : (std::filesystem::path(path) / key).generic_string(),
                       owner);
        }
        add_report(report, std::move(part_report), path);
    }

    if (options.urls_only) {
        return report;
    }

    // The tree's own files: the tree's directory, or its prefix of a bucket.
    auto opened = TreeFiles::open(root, options, lock, stop);
    if (!opened) {
        report.error = std::move(opened.error());
        return report;
    }
    const std::unique_ptr<TreeFiles> files = std::move(*opened);

    // The files of [checksums]: held as listed, or fetched.
    const std::vector<bool> held = files->held(tree->files);
    auto mirrors = std::make_shared<MirrorList>(source->base_urls);
    std::vector<DownloadRequest> requests;
    std::vector<std::string> requested_paths;  // of each request
    bool images_ok = true;
    // An image .treeinfo names over a key another owns is never written: a failure naming both.
    const auto claimed = [&](const std::string& path) {
        auto claim = owners.claim(path, kImagesOwner, (root / path).string());
        if (!claim) {
            images_ok = false;
            report.failures.push_back({path, claim.error().message, {}});
        }
        return claim.has_value();
    };
    for (std::size_t index = 0; index < tree->files.size(); ++index) {
        const TreeInfo::File& file = tree->files[index];
        if (!claimed(file.path)) {
            continue;
        }
        if (held[index]) {
            ++report.kept;
            continue;
        }
        DownloadRequest request;
        request.mirrors = mirrors;
        request.href = file.path;
        request.destination = file.path;
        request.checksum_type = file.type;
        request.expected_digest = file.digest;
        request.expected_size = kUnknownSize;
        requests.push_back(std::move(request));
        requested_paths.push_back(file.path);
    }
    // The images [images-*] and [stage2] name without a checksum: nothing vouches for their
    // bytes but the server. Held while the tree's .treeinfo is the one published with them and
    // each is still as stored; otherwise fetched whole, as the server sends them.
    const std::vector<bool> unverified_held = files->held_as_stored(tree->unchecksummed_images);
    const bool same_treeinfo = !tree->unchecksummed_images.empty() && files->publishes(text);
    for (std::size_t index = 0; index < tree->unchecksummed_images.size(); ++index) {
        const std::string& path = tree->unchecksummed_images[index];
        if (!claimed(path)) {
            continue;
        }
        if (same_treeinfo && unverified_held[index]) {
            ++report.kept;
            continue;
        }
        DownloadRequest request;
        request.mirrors = mirrors;
        request.href = path;
        request.destination = path;
        request.checksum_type = ChecksumType::Sha256;
        request.expected_size = kUnknownSize;  // no expected_digest: unverified
        requests.push_back(std::move(request));
        requested_paths.push_back(path);
        report.warnings.push_back(path +
                                  ": .treeinfo names it in [images-*]/[stage2] without a "
                                  "[checksums] entry: fetched as the server sends it, unverified");
    }
    if (!requests.empty()) {
        report.noop = false;
        auto downloaded = files->fetch(downloader, requests, progress, stop);
        if (!downloaded) {
            report.error = std::move(downloaded.error());
            return report;
        }
        report.bytes_downloaded += downloaded->bytes_received;
        for (std::size_t i = 0; i < requests.size(); ++i) {
            const FileResult& result = downloaded->files[i];
            if (result.status == FileStatus::Downloaded ||
                result.status == FileStatus::AlreadyPresent) {
                ++report.downloaded;
                continue;
            }
            const std::string& path = requested_paths[i];
            const std::string reason = result.error ? result.error->to_string()
                                                    : std::string(file_status_name(result.status));
            if (options.skip_bad_images && !stop.stop_requested()) {
                report.warnings.push_back(path + " left out (--skip-bad-images): " + reason);
                continue;
            }
            images_ok = false;
            PackageFailure failure{path, reason, {}};
            for (const DownloadAttempt& attempt : result.attempts) {
                failure.attempts.push_back(attempt.url + ": " + attempt.outcome);
            }
            report.failures.push_back(std::move(failure));
        }
    }
    files->save(report.warnings);

    // .treeinfo last, once everything it names is there.
    if (!report.ok() || !images_ok || stop.stop_requested()) {
        report.warnings.push_back(
            ".treeinfo not published: the tree is not complete; the previous one stays in place");
        return report;
    }
    auto published = files->publish(text);
    if (!published) {
        report.error = std::move(published.error());
        return report;
    }
    if (*published) {
        report.noop = false;
        report.metadata_published = true;
    }
    files->save(report.warnings);  // .treeinfo recorded with the images
    if (options.delete_unlisted) {
        // Removed after the new .treeinfo is published: no client reads one naming them.
        std::set<std::string> listed;
        for (const TreeInfo::File& file : tree->files) {
            listed.insert(file.path);
        }
        listed.insert(tree->unchecksummed_images.begin(), tree->unchecksummed_images.end());
        // A key another owns is never the images' to delete, whatever their catalogue says.
        for (const auto& [key, owner] : owners.keys()) {
            listed.insert(key);
        }
        auto removed = files->collect(listed, report.warnings);
        if (!removed) {
            report.warnings.push_back(removed.error().to_string());
        } else {
            report.noop = report.noop && removed->empty();
            report.deleted.insert(report.deleted.end(), removed->begin(), removed->end());
        }
        files->save(report.warnings);
    }
    return report;
}

std::optional<std::string> tree_note(const SyncOptions& options, store::MirrorStore* store,
                                     std::string_view base_url, Downloader& downloader,
                                     std::stop_token stop) {
    if (options.treeinfo || !options.announce_tree || options.urls_only || store == nullptr) {
        return std::nullopt;
    }
    // Once, at the first sync: the state it records makes every later run a known mirror.
    if (auto recorded = store->recorded(); !recorded || recorded->exists) {
        return std::nullopt;
    }
    const std::string url = join_url(base_url, kTreeinfoName);
    auto text = downloader.fetch_document(url, kMaxDocumentBytes, stop);
    if (!text || !parse_treeinfo(*text, url)) {
        return std::nullopt;
    }
    return url +
           ": the repository is part of an installation tree; only the repository is mirrored "
           "(--treeinfo, a job's treeinfo = 1, mirrors the tree: its images and every variant)";
}

}  // namespace rpmirror
