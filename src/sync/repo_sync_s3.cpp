// RepoSync with an s3:// destination: the store opened, and its Placement (the packages through
// the spool in batches); S3Destination (sync/s3_sync.hpp) does the rest.
#include "sync/repo_sync.hpp"

#include <cstdint>
#include <future>
#include <memory>
#include <optional>

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

// A bucket's place is its spool: the plan's paths are beneath the spool, what the bucket holds
// is judged from its state and listing (S3Destination::missing), and each package of a batch is
// uploaded as soon as it is complete there (while the others download), then unlinked.
class RepoSync::BucketPlacement final : public RepoSync::Placement {
  public:
    explicit BucketPlacement(RepoSync& sync) : sync_(sync), s3_(*sync.s3_) {}

    std::filesystem::path root() const override { return s3_.spool_repo(); }

    std::optional<std::filesystem::path> outside() const override {
        // The spool stands for the layout root: a blob's key climbs out of the repository but
        // never out of the spool, nor (S3Location::key) out of the layout root.
        if (sync_.layout_root_.empty()) {
            return std::nullopt;
        }
        return std::filesystem::absolute(s3_.spool());
    }

    Survey survey(const PackageIndex& index) override {
        const SyncPlan& plan = sync_.plan_;
        index_ = &index;
        packages_.clear();
        packages_.reserve(plan.targets.size());
        for (const PackageTarget& target : plan.targets) {
            const PackageView package = index[target.position];
            packages_.push_back({target.relative_path.generic_string(), package.checksum_type,
                                 package.checksum_hex(), package.package_size});
        }
        std::vector<S3Destination::Conflict> conflicts;
        Survey survey;
        survey.absent = s3_.missing(packages_, &conflicts);
        std::vector<bool> absent(packages_.size(), false);
        for (const std::size_t item : survey.absent) {
            absent[item] = true;
        }
        std::vector<Judged> judged;
        std::vector<bool> conflicting(packages_.size(), false);
        // --upstream-layout: a blob another release stored with other content is shared with
        // it: never replaced; this package fails instead (as on disk).
        for (const S3Destination::Conflict& conflict : conflicts) {
            conflicting[conflict.item] = true;
            judged.push_back({conflict.item, Holding::Conflict, conflict.held,
                              s3_.describe(packages_[conflict.item].key)});
        }
        // --gpgcheck: stored packages no check vouches for are judged too: downloaded once
        // more into the spool, checked, and kept or deleted (never uploaded again).
        const bool rejudge =
            sync_.checks_packages() && !s3_.signatures_checked_with(sync_.trusted_key_ids_);
        if (rejudge) {
            survey.absent.clear();
        }
        for (std::size_t item = 0; item < packages_.size(); ++item) {
            if (conflicting[item]) {
                continue;
            }
            if (rejudge) {
                packages_[item].stored = !absent[item];
                survey.absent.push_back(item);
            } else if (!absent[item]) {
                judged.push_back({item, Holding::Held, {}, {}});
            }
        }
        survey.judged = std::async(std::launch::deferred,
                                   [judged = std::move(judged)]() mutable { return judged; });
        return survey;
    }

    std::vector<std::size_t> copy_duplicates(const PackageIndex& /*index*/,
                                             std::vector<std::size_t> absent) override {
        // Copied inside the store from a sibling repository (not with --gpgcheck: every package
        // it stores is judged in the spool).
        if (sync_.options_.dedupe == DedupeMode::Off || sync_.checks_packages() || absent.empty()) {
            return absent;
        }
        return s3_.copy_from_siblings(packages_, std::move(absent), sync_.report_);
    }

    std::uint64_t batch_bytes() const override { return sync_.options_.s3_spool_size; }

    ProgressSink* begin_batch(const std::vector<std::size_t>& batch, ProgressSink* outer) override {
        uploads_.emplace(outer, s3_, batch);
        s3_.begin_uploads(packages_, sync_.stop_);
        return &*uploads_;
    }

    Result<void> end_batch() override {
        auto uploaded = s3_.end_uploads();
        uploads_.reset();
        if (!uploaded) {
            return tl::unexpected(std::move(uploaded.error()));
        }
        RepoSyncReport& report = sync_.report_;
        report.signatures_checked += sync_.spool_checked_.exchange(0);
        for (const auto& [target, error] : *uploaded) {
            sync_.failed_targets_.insert(target);
            if (auto judged = sync_.spool_failures_.extract(target)) {
                report.failures.push_back(std::move(judged.mapped()));
                continue;
            }
            report.failures.push_back(
                {(*index_)[sync_.plan_.targets[target].position].nevra(), error.to_string(), {}});
        }
        // Packages uploaded or kept that could not be checked.
        for (auto& [target, failure] : sync_.spool_failures_) {
            report.failures.push_back(std::move(failure));
        }
        sync_.spool_failures_.clear();
        return {};
    }

    bool checks_while_storing() const override { return true; }

  private:
    RepoSync& sync_;
    S3Destination& s3_;
    const PackageIndex* index_ = nullptr;  // survey()'s
    std::vector<S3Package> packages_;      // by target
    std::optional<S3UploadOnFinish> uploads_;
};

std::unique_ptr<RepoSync::Placement> RepoSync::bucket_placement() {
    return std::make_unique<BucketPlacement>(*this);
}

}  // namespace rpmirror
