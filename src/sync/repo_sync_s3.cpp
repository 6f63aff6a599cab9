// RepoSync with an s3:// destination: the store opened (and its no-op), the packages through the
// spool in batches, then the metadata published (S3Destination, sync/s3_sync.hpp, does the rest).
#include "sync/repo_sync.hpp"

#include <fmt/core.h>

#include "plan/selection_json.hpp"
#include "sync/events.hpp"

namespace rpmirror {

Result<void> RepoSync::open_s3() {
    // --upstream-layout: the repository at its path beneath the layout root (`-p`/<repoid>/).
    const std::filesystem::path layout_path =
        layout_root_.empty() ? std::filesystem::path() : repo_dir_.lexically_relative(layout_root_);
    auto opened = S3Destination::open(options_, repo_.id,
                                      layout_path == "." ? std::filesystem::path() : layout_path);
    if (!opened) {
        return tl::unexpected(std::move(opened.error()));
    }
    s3_ = std::move(*opened);
    report_.s3_spool = s3_->spool();
    report_.s3_spool_in_memory = s3_->spool_in_memory();
    if (s3_->spool_warning()) {
        report_.warnings.push_back(*s3_->spool_warning());
    }
    // Two workers (--shard, overlapping timers) never sync it at once: the lease of the root the
    // sync locked, and the repository's own where it lies elsewhere, both kept until the end.
    if (lies_elsewhere()) {
        if (auto held = hold_own_lock(s3_->lock(options_.lock_wait, stop_)); !held) {
            return held;
        }
    }
    std::vector<RepoLock*> locks;
    for (RepoLock* lock : {root_lock_.lock, own_lock_.get()}) {
        if (lock != nullptr) {
            locks.push_back(lock);
        }
    }
    s3_->hold(std::move(locks));
    if (auto loaded = s3_->load(); !loaded) {
        return loaded;
    }
    store_ = &s3_->store();
    return {};
}

Result<void> RepoSync::sync_to_s3(const FetchedRepomd& repomd, MetadataStage& stage,
                                  const PackageIndex& index, const Selection& selection) {
    PathPolicy policy;
    policy.flatten = options_.flatten_hrefs;
    // As on disk (RepoSync::path_policy): an href that climbs out and back in is the repository's.
    policy.repo_root = std::filesystem::absolute(s3_->spool_repo());
    if (!layout_root_.empty()) {
        // The spool stands for the layout root: a blob's key climbs out of the repository but
        // never out of the spool, nor (S3Location::key) out of the layout root.
        policy.safe_write_path = std::filesystem::absolute(s3_->spool());
    }
    auto plan = plan_sync(index, selection, s3_->spool_repo(), policy, repo_.id);
    if (!plan) {
        return tl::unexpected(std::move(plan.error()));
    }
    plan_ = std::move(*plan);
    std::vector<S3Package> packages;
    packages.reserve(plan_.targets.size());
    for (const PackageTarget& target : plan_.targets) {
        const PackageView package = index[target.position];
        packages.push_back({target.relative_path.generic_string(), package.checksum_type,
                            package.checksum_hex(), package.package_size});
    }
    std::vector<S3Destination::Conflict> conflicts;
    std::vector<std::size_t> missing = s3_->missing(packages, &conflicts);
    // --upstream-layout: a blob another release stored with other content is shared with it:
    // never replaced; this package fails instead (as on disk).
    for (const S3Destination::Conflict& conflict : conflicts) {
        const PackageView package = index[plan_.targets[conflict.item].position];
        failed_targets_.insert(conflict.item);
        report_.failures.push_back(
            {package.nevra(),
             fmt::format("{} is shared beyond this repository's directory and holds {}, not the "
                         "{} {} this repository lists: not replaced",
                         s3_->describe(packages[conflict.item].key), conflict.held,
                         checksum_type_name(package.checksum_type), package.checksum_hex()),
             {}});
    }
    if (checks_packages()) {
        check_in_spool(index);
        // Stored packages no check vouches for are judged too: downloaded once more into
        // the spool, checked, and kept or deleted (never uploaded again).
        if (!s3_->signatures_checked_with(trusted_key_ids_)) {
            std::vector<bool> absent(packages.size(), false);
            for (const std::size_t item : missing) {
                absent[item] = true;
            }
            missing.clear();
            for (std::size_t item = 0; item < packages.size(); ++item) {
                if (failed_targets_.contains(item)) {
                    continue;  // a shared blob not replaced: failed already
                }
                packages[item].stored = !absent[item];
                missing.push_back(item);
            }
        }
    }
    // Packages fetched only to be judged count as downloaded (they cost the traffic).
    report_.kept = packages.size() - missing.size();
    // Packages a sibling repository of the bucket holds are copied inside the store instead
    // (not with --gpgcheck: every package it uploads is judged in the spool).
    if (options_.dedupe != DedupeMode::Off && !checks_packages() && !missing.empty()) {
        missing = s3_->copy_from_siblings(packages, std::move(missing), report_);
    }
    for (std::size_t next = 0; next < missing.size() && !stop_.stop_requested();) {
        std::vector<std::size_t> batch;
        std::uint64_t bytes = 0;
        while (next < missing.size()) {
            const std::uint64_t size =
                packages[missing[next]].size == kUnknownSize ? 0 : packages[missing[next]].size;
            if (!batch.empty() && bytes + size > options_.s3_spool_size) {
                break;
            }
            batch.push_back(missing[next++]);
            bytes += size;
        }
        // Each package is uploaded as soon as it is complete in the spool, while the
        // others download; the batch ends when all of them are stored.
        S3UploadOnFinish uploads(progress_, *s3_, batch);
        ProgressSink* const outer = progress_;
        progress_ = &uploads;
        s3_->begin_uploads(packages, stop_);
        auto downloaded = download_targets(index, batch);
        progress_ = outer;
        auto uploaded = s3_->end_uploads();
        if (!downloaded) {
            return downloaded;
        }
        if (!uploaded) {
            return tl::unexpected(std::move(uploaded.error()));
        }
        report_.signatures_checked += spool_checked_.exchange(0);
        for (const auto& [target, error] : *uploaded) {
            failed_targets_.insert(target);
            if (auto judged = spool_failures_.extract(target)) {
                report_.failures.push_back(std::move(judged.mapped()));
                continue;
            }
            report_.failures.push_back(
                {index[plan_.targets[target].position].nevra(), error.to_string(), {}});
        }
        // Packages uploaded or kept that could not be checked.
        for (auto& [target, failure] : spool_failures_) {
            report_.failures.push_back(std::move(failure));
        }
        spool_failures_.clear();
    }
    if (!published_after_packages()) {
        return {};
    }
    return publish(repomd, stage, index);
}

}  // namespace rpmirror
