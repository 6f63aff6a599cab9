// RepoSync::run(): one repository, stage by stage (see sync/sync.hpp for the order of the
// stages), and what the stages share.
#include "sync/repo_sync.hpp"

#include <algorithm>

#include <fmt/core.h>
#include <fmt/format.h>

#include "checksum/hasher.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "sync/sync_report.hpp"
#include "sync/sync_settings.hpp"
#include "sync/tree.hpp"
#include "util/text.hpp"

namespace rpmirror {

RepoSync::RepoSync(Downloader& downloader, const RepoConfig& repo, const SyncOptions& options,
                   ProgressSink* progress, std::stop_token stop, RepoSyncReport& report,
                   HeldLock root)
    : downloader_(downloader),
      repo_(repo),
      options_(options),
      progress_(progress),
      stop_(std::move(stop)),
      report_(report),
      root_lock_(std::move(root)),
      repo_dir_(repo_directory(options, repo.id)),
      metadata_dir_(metadata_directory(options, repo.id)) {
    selection_options_ = options.selection;
    // Once each: a selection read back from the state (verify --repair) already has them.
    const auto add_missing = [](std::vector<std::string>& globs,
                                const std::vector<std::string>& more) {
        for (const std::string& glob : more) {
            if (std::find(globs.begin(), globs.end(), glob) == globs.end()) {
                globs.push_back(glob);
            }
        }
    };
    add_missing(selection_options_.include_globs, repo.includepkgs);
    add_missing(selection_options_.exclude_globs, repo.excludepkgs);
    if (repo.closure) {
        selection_options_.only_nevras = repo.closure;
    }
    report_.repo_id = repo.id;
    report_.repo_dir = repo_dir_;
}

Result<void> RepoSync::run() {
    const DownloadOptions& download_options = downloader_.options();
    if (auto loaded = load_keys(); !loaded) {
        return loaded;
    }
    auto upstream = upstream_revision();
    if (!upstream) {
        return tl::unexpected(std::move(upstream.error()));
    }
    report_.upstream = *upstream;
    const RepoSource& source = (*upstream)->source;
    FetchedRepomd fetched = (*upstream)->repomd;  // a copy: publication may add its signature
    FetchedRepomd* repomd = &fetched;
    repomd_sha256_ = hash_bytes(ChecksumType::Sha256, repomd->bytes);
    if (options_.upstream_layout) {
        if (auto placed = place_in_upstream_layout(repomd->base_url); !placed) {
            return placed;
        }
    }
    if (!options_.urls_only) {
        if (auto opened = open_store(); !opened) {
            return opened;
        }
        // --no-cache hashes every file: there is no no-op, which trusts sizes and versions.
        if (options_.use_checksum_cache && is_noop(*repomd)) {
            if (auto finished = finish_noop(); !finished) {
                return finished;
            }
            return finish_upstream_layout({});
        }
    }
    if (auto signature = prepare_published_signature(*repomd); !signature) {
        return signature;
    }
    // An installation tree synced as a plain repository is said so, at the mirror's first sync.
    if (auto note = tree_note(options_, store_, repomd->base_url, downloader_, stop_)) {
        report_.warnings.push_back(std::move(*note));
    }
    mirrors_ =
        mirrors_starting_with(source, repomd->base_url, download_options.demote_mirror_after);
    auto stage = create_stage();
    if (!stage) {
        return tl::unexpected(std::move(stage.error()));
    }
    auto packages = fetch_packages(*repomd, *stage);
    if (!packages) {
        return metadata_unavailable(std::move(packages.error()));
    }
    if (options_.download_comps && !options_.urls_only) {
        if (auto saved = save_comps(repomd->parsed, *stage); !saved) {
            return saved;
        }
    }
    const PackageIndex* index = packages->index.get();
    if (options_.dnf_cache && !options_.upstream) {
        // The package step that follows selects from this parse (UpstreamRevision::primary).
        report_.upstream = std::make_shared<const UpstreamRevision>(
            UpstreamRevision{source, (*upstream)->repomd, packages->index});
    }
    const Selection& selection = packages->selection;
    report_.upstream_packages = index->size();
    report_.selected = selection.positions.size();
    if (options_.urls_only) {
        list_urls(repomd->parsed, *index, selection);
        return {};
    }
    return sync_to_store(*repomd, *stage, *index, selection);
}

Result<std::shared_ptr<const UpstreamRevision>> RepoSync::upstream_revision() {
    if (options_.upstream) {
        return options_.upstream;  // checked by the sync that fetched it
    }
    auto source = resolve_mirrors(repo_, downloader_, stop_);
    if (!source) {
        return metadata_unavailable(std::move(source.error()));
    }
    auto repomd = fetch_repomd(*source, downloader_, repo_.id, stop_);
    if (!repomd) {
        return metadata_unavailable(std::move(repomd.error()));
    }
    // Nothing from the repository is trusted (not even for the no-op) before this.
    if (auto trusted = check_repomd_signature(*repomd); !trusted) {
        return tl::unexpected(std::move(trusted.error()));
    }
    return std::make_shared<const UpstreamRevision>(
        UpstreamRevision{std::move(*source), std::move(*repomd), nullptr});
}

Result<void> RepoSync::sync_to_store(const FetchedRepomd& repomd, MetadataStage& stage,
                                     const PackageIndex& index, const Selection& selection) {
    if (auto refused = refuse_mistakes(index, selection); !refused) {
        report_.refused = true;
        return refused;
    }
    Placement placement(*this, *staging_);
    if (auto placed = place_packages(index, selection, placement); !placed) {
        return placed;
    }
    for (const PackageTarget& target : plan_.targets) {
        report_.package_keys.push_back(target.relative_path.lexically_normal().generic_string());
    }
    remove_stale_partials();
    // The packages may lie beyond the repository's directory too (--safe-write-path).
    destination_->set_package_roots(plan_.roots);
    std::vector<std::filesystem::path> placed;
    for (const std::size_t target : placed_targets_) {
        if (!failed_targets_.contains(target)) {
            placed.push_back(plan_.targets[target].relative_path);
        }
    }
    if (!published_after_packages(index)) {
        // The blobs it did write are still rpmirror's: catalogued, never deleted now.
        return collect_blobs(placed, false);
    }
    if (auto published = publish(repomd, stage, index); !published) {
        return published;
    }
    return finish_upstream_layout(placed);
}

void RepoSync::remove_stale_partials() {
    if (stop_.stop_requested()) {
        return;  // an interrupted run's .part files are the next run's to resume
    }
    auto partials = store_->list_partials();
    if (!partials || partials->empty()) {
        return;
    }
    // Kept: the temporary file of a selected package this run could not complete, which the
    // next run resumes. Any other is of a package no longer selected (or done): removed.
    std::set<std::string> resumable;
    for (const std::size_t target : failed_targets_) {
        const std::filesystem::path path = plan_.targets[target].relative_path.lexically_normal();
        resumable.insert(
            (path.parent_path() / part_file_name(path.filename().string())).generic_string());
    }
    std::vector<std::string> stale;
    std::uint64_t bytes = 0;
    for (const auto& [key, file] : *partials) {
        // A package's only (".NAME.rpm.part"): a tree's image being fetched beside a
        // repository at the tree's root is the tree's to resume.
        if (key.ends_with(".rpm.part") && !resumable.contains(key)) {
            stale.push_back(key);
            bytes += file.size;
        }
    }
    auto removed = store_->remove_partials(stale);
    if (!removed) {
        report_.warnings.push_back("stale partial downloads left in place: " +
                                   removed.error().to_string());
    } else if (!removed->empty()) {
        report_.warnings.push_back(fmt::format(
            "removed {} stale partial download(s) ({}), of packages this run no longer fetches: {}",
            removed->size(), text::megabytes(bytes), fmt::join(*removed, ", ")));
    }
}

Result<void> RepoSync::refuse_mistakes(const PackageIndex& index, const Selection& selection) {
    if (auto arches = check_arches(index, selection_options_, repo_.id); !arches) {
        return arches;
    }
    if (!options_.delete_unlisted || options_.force_delete) {
        return {};
    }
    auto held = store_->list_packages();
    if (!held) {
        return tl::unexpected(std::move(held.error()));
    }
    const std::size_t holds = held->size();
    const std::size_t selected = selection.positions.size();
    if (holds == 0 || (selected > 0 && (holds < kMassDeletionFloor || selected * 2 >= holds))) {
        return {};
    }
    return make_error(
        ErrorCode::BadInput,
        fmt::format("--delete refused: the mirror holds {} packages and this run selects {} of "
                    "the repository's {}, so it would delete {}; check the filters (--arch, "
                    "includepkgs, ...) or give --force-delete (job key force-delete = 1); "
                    "nothing was changed",
                    holds, selected, index.size(),
                    selected == 0 ? std::string("every one") : "most of them"),
        repo_.id);
}

Result<void> RepoSync::open_store() {
    // --upstream-layout: the repository at its path beneath the layout root (`-p`/<repoid>/).
    store::SyncStoreOptions where = sync_store_options(options_, repo_.id);
    where.repository = repo_dir_;
    where.layout_root = layout_root_;
    where.metadata_dir = metadata_dir_;
    auto opened = store::SyncStore::open(where);
    if (!opened) {
        return tl::unexpected(std::move(opened.error()));
    }
    destination_ = std::move(*opened);
    auto staging = destination_->stage(stop_);
    if (!staging) {
        return tl::unexpected(std::move(staging.error()));
    }
    staging_ = std::move(*staging);
    if (!staging_->in_place()) {
        report_.s3_spool = staging_->directory();
        report_.s3_spool_in_memory = staging_->in_memory();
    }
    if (staging_->warning()) {
        report_.warnings.push_back(*staging_->warning());
    }
    // Two workers (--shard, overlapping timers) never sync it at once: the lock of the root the
    // sync locked, and the repository's own where it lies elsewhere, both kept until the end.
    if (lies_elsewhere()) {
        if (auto held = hold_own_lock(destination_->lock(options_.lock_wait, stop_)); !held) {
            return held;
        }
    }
    std::vector<RepoLock*> locks;
    for (RepoLock* lock : {root_lock_.lock, own_lock_.get()}) {
        if (lock != nullptr) {
            locks.push_back(lock);
        }
    }
    destination_->hold(std::move(locks));
    if (auto loaded = destination_->load(); !loaded) {
        return loaded;
    }
    store_ = &destination_->mirror();
    return {};
}

bool RepoSync::lies_elsewhere() const {
    // "/srv/m/a" and "/srv/m/a/" are one directory.
    const auto normal = [](const std::filesystem::path& dir) {
        std::filesystem::path normalised = dir.lexically_normal();
        return normalised.has_filename() ? normalised : normalised.parent_path();
    };
    return root_lock_.lock != nullptr && normal(repo_dir_) != normal(root_lock_.dir);
}

Result<void> RepoSync::hold_own_lock(Result<std::unique_ptr<RepoLock>> locked) {
    if (!locked) {
        return tl::unexpected(std::move(locked.error()));
    }
    own_lock_ = std::move(*locked);
    const std::vector<std::string> warnings = own_lock_->warnings();
    report_.warnings.insert(report_.warnings.end(), warnings.begin(), warnings.end());
    return {};
}

bool RepoSync::published_after_packages(const PackageIndex& index) {
    const bool stopped = stop_.stop_requested();
    if (report_.failures.empty() && !stopped) {
        return true;
    }
    if (!stopped && options_.publish_partial && options_.download_metadata &&
        leave_out_failed(index)) {
        return true;
    }
    if (!options_.download_metadata) {
        return false;
    }
    const std::string why = stopped ? std::string("the sync was interrupted")
                                    : fmt::format("{} package(s) failed", report_.failures.size());
    auto published = store_->stat(store::kIndexKey);
    if (published && !*published) {
        // A first sync: there is no earlier metadata that could stay.
        report_.warnings.push_back(fmt::format(
            "metadata not published: {}; nothing is published yet (no repodata/ until a sync "
            "completes): {}",
            why,
            stopped ? "run the same command again to resume"
                    : "run the sync again once they can be fetched, or give --publish-partial "
                      "(job key publish-partial = 1) to publish without them"));
    } else {
        report_.warnings.push_back(
            fmt::format("metadata not published: {}; the published metadata stays in place", why));
    }
    return false;
}

void RepoSync::record_requests() {
    if (destination_) {
        report_.s3_requests = destination_->requests() + (own_lock_ ? own_lock_->requests() : 0) +
                              (staging_ ? staging_->requests() : 0);
    }
}

RecordedPublishing RepoSync::recorded_publishing() const {
    return {options_.sign_key, options_.upstream_metadata};
}

bool RepoSync::checks_packages() const {
    return options_.check_package_signatures && repo_.gpgcheck && !options_.urls_only;
}

std::string RepoSync::fingerprint() const {
    return options_fingerprint(options_, selection_options_, repo_, trusted_key_ids_);
}

tl::unexpected<Error> RepoSync::metadata_unavailable(Error error) {
    report_.metadata_unavailable =
        error.code != ErrorCode::Interrupted && error.code != ErrorCode::Io;
    return tl::unexpected(std::move(error));
}

}  // namespace rpmirror
