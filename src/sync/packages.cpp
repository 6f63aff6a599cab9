// RepoSync's packages, placed once for every store (place_packages over the Placement, over the
// store's staging area): the plan, what the store holds judged while the rest download (after
// --dedupe), the damaged fetched again, --gpgcheck; and --delete.
#include "sync/repo_sync.hpp"

#include <cstdint>
#include <future>
#include <memory>
#include <unordered_set>

#include <fmt/core.h>

#include "checksum/hasher.hpp"
#include "dedupe/copies.hpp"
#include "dedupe/dedupe.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "rpmirror/dedupe/dedupe.hpp"
#include "sync/events.hpp"
#include "sync/sync_options.hpp"

namespace rpmirror {

namespace {

// The last component of `href`, as dnf names a package in its progress lines.
std::string href_file_name(std::string_view href) {
    const std::size_t slash = href.rfind('/');
    return std::string(slash == std::string_view::npos ? href : href.substr(slash + 1));
}

DownloadRequest request_for(const PackageView& package, const PackageTarget& target,
                            const std::shared_ptr<MirrorList>& mirrors) {
    DownloadRequest request;
    request.mirrors = mirrors;
    request.href = package.location_base.empty()
                       ? std::string(package.location_href)
                       : join_url(package.location_base, package.location_href);
    request.destination = target.destination;
    request.root_index = target.root_index;
    request.checksum_type = package.checksum_type;
    request.expected_digest = package.checksum_hex();
    request.expected_size = package.package_size;
    return request;
}

PackageFailure failure_of(const PackageView& package, const FileResult& result) {
    PackageFailure failure{package.nevra(), {}, {}};
    failure.reason =
        result.error ? result.error->to_string() : std::string(file_status_name(result.status));
    for (const DownloadAttempt& attempt : result.attempts) {
        failure.attempts.push_back(attempt.url + ": " + attempt.outcome);
    }
    return failure;
}

}  // namespace

std::filesystem::path RepoSync::Placement::root() const {
    if (staging_.in_place()) {
        return sync_.repo_dir_;  // the store's root is the repository's directory or above it
    }
    // The staging directory stands for the layout root: a blob's key climbs out of the
    // repository but never out of it.
    const std::filesystem::path beneath =
        sync_.layout_root_.empty() ? std::filesystem::path()
                                   : sync_.repo_dir_.lexically_relative(sync_.layout_root_);
    return beneath.empty() || beneath == "." ? staging_.directory()
                                             : staging_.directory() / beneath;
}

std::optional<std::filesystem::path> RepoSync::Placement::outside() const {
    if (sync_.layout_root_.empty()) {
        return sync_.options_.safe_write_path;  // refused for a bucket (store::SyncStore::open)
    }
    return std::filesystem::absolute(staging_.directory());
}

store::Survey RepoSync::Placement::survey(const PackageIndex& index) {
    const SyncPlan& plan = sync_.plan_;
    index_ = &index;
    packages_.clear();
    packages_.resize(plan.targets.size());
    for (const std::size_t target : plan.to_verify) {
        packages_[target].found = true;
    }
    for (std::size_t target = 0; target < plan.targets.size(); ++target) {
        const PackageTarget& planned = plan.targets[target];
        const PackageView package = index[planned.position];
        store::WantedFile& file = packages_[target];
        file.key = planned.relative_path.generic_string();
        file.checksum_type = package.checksum_type;
        file.digest = package.checksum_hex();
        file.size = package.package_size;
        // Beyond the repository's directory a file may be another's as it is.
        file.beyond = planned.root_index != 0;
        if (file.beyond && file.found) {
            file.shown =
                (plan.roots[planned.root_index] / planned.destination).lexically_normal().string();
        }
    }
    store::SurveyOptions options;
    options.threads = sync_.options_.verify_threads;
    options.stop = sync_.stop_;
    if (sync_.checks_packages() && checks_while_storing()) {
        options.judged_with = sync_.trusted_key_ids_;
    }
    return sync_.destination_->survey(packages_, options);
}

std::vector<std::size_t> RepoSync::Placement::copy_duplicates(const PackageIndex& index,
                                                              std::vector<std::size_t> absent) {
    if (sync_.options_.dedupe == DedupeMode::Off || absent.empty() ||
        sync_.stop_.stop_requested()) {
        return absent;
    }
    // Not with --gpgcheck where every package stored is judged on its way in (a bucket's
    // spool): a copy inside the store would bypass it.
    if (sync_.checks_packages() && checks_while_storing()) {
        return absent;
    }
    // The packages may lie beyond the repository's directory (--safe-write-path, the layout
    // root): the store looks for them where they are copied to.
    sync_.destination_->set_package_roots(sync_.plan_.roots);
    const std::optional<store::Siblings> siblings = sync_.destination_->siblings();
    if (!siblings) {
        return absent;
    }
    const DedupeOutcome outcome = copy_from(*siblings, absent);
    RepoSyncReport& report = sync_.report_;
    report.linked += outcome.linked_count;
    report.linked_bytes += outcome.linked_bytes;
    report.link_fallbacks += outcome.fallbacks;
    if (!outcome.notes.empty()) {
        report.warnings.push_back(outcome.notes.size() == 1
                                      ? outcome.notes.front()
                                      : fmt::format("{} (and {} more like it)",
                                                    outcome.notes.front(),
                                                    outcome.notes.size() - 1));
    }
    const SyncPlan& plan = sync_.plan_;
    std::vector<std::size_t> rest;
    for (std::size_t item = 0; item < absent.size(); ++item) {
        const std::size_t target = absent[item];
        if (!outcome.linked[item]) {
            rest.push_back(target);
            continue;
        }
        if (sync_.options_.events != nullptr) {
            const PackageView package = index[plan.targets[target].position];
            PackageEvent event;
            event.kind = PackageEvent::Kind::Linked;
            event.file_name = href_file_name(package.location_href);
            event.bytes = package.package_size;
            event.total = report.selected;
            event.done = ++sync_.packages_done_;
            sync_.options_.events->package(event);
        }
    }
    return rest;
}

DedupeOutcome RepoSync::Placement::copy_from(const store::Siblings& siblings,
                                             std::span<const std::size_t> absent) {
    std::vector<dedupe::Wanted> wanted;
    wanted.reserve(absent.size());
    for (const std::size_t item : absent) {
        const store::WantedFile& package = packages_[item];
        wanted.push_back({package.key, package.checksum_type, package.digest, package.size});
    }
    const dedupe::Search search = dedupe::search_of(siblings, sync_.options_.dedupe,
                                                    sync_.options_.use_checksum_cache, sync_.stop_);
    dedupe::Outcome outcome = dedupe::copy_duplicates(*siblings.shared, wanted, search);
    for (const dedupe::Copied& made : outcome.copied) {
        const dedupe::Wanted& package = wanted[made.index];
        sync_.destination_->record_copied({package.key,
                                           {made.object.size, made.object.version},
                                           package.checksum_type,
                                           package.digest});
    }
    return std::move(static_cast<DedupeOutcome&>(outcome));
}

ProgressSink* RepoSync::Placement::begin_batch(const std::vector<std::size_t>& batch,
                                               ProgressSink* outer) {
    if (staging_.in_place()) {
        return outer;  // the download's rename placed it
    }
    batch_ = &batch;
    commits_.emplace(outer, [this](std::size_t request) { commit((*batch_)[request]); });
    return &*commits_;
}

void RepoSync::Placement::commit(std::size_t target) {
    const store::WantedFile& package = packages_[target];
    store::StagedFile file;
    file.key = (root() / package.key)
                   .lexically_normal()
                   .lexically_relative(staging_.directory())
                   .generic_string();
    file.type = package.checksum_type;
    file.digest = package.digest;
    file.judge_only = package.stored;
    if (sync_.checks_packages()) {
        file.judge = [this, target](const std::filesystem::path& staged) {
            return sync_.judge_staged(*index_, target, staged);
        };
    }
    staging_.commit(target, std::move(file));
}

Result<void> RepoSync::Placement::end_batch() {
    if (staging_.in_place()) {
        return {};
    }
    commits_.reset();
    std::vector<store::PlacedFile> placed;
    std::vector<std::string> condemned;
    std::vector<std::pair<std::size_t, Error>> failed;
    for (store::Committed& done : staging_.wait()) {
        const store::WantedFile& package = packages_[done.ticket];
        if (done.refused && package.stored) {
            condemned.push_back(package.key);
        }
        if (done.error) {
            failed.emplace_back(done.ticket, std::move(*done.error));
        } else if (done.stored) {
            placed.push_back({package.key,
                              {done.stored->size, done.stored->version},
                              package.checksum_type,
                              package.digest});
        }
    }
    if (auto recorded = sync_.store_->record_placed(placed, condemned, sync_.checks_packages());
        !recorded) {
        return recorded;
    }
    RepoSyncReport& report = sync_.report_;
    report.signatures_checked += sync_.spool_checked_.exchange(0);
    for (auto& [target, error] : failed) {
        sync_.failed_targets_.insert(target);
        if (auto judged = sync_.spool_failures_.extract(target)) {
            report.failures.push_back(std::move(judged.mapped()));
            continue;
        }
        report.failures.push_back(
            {(*index_)[sync_.plan_.targets[target].position].nevra(), error.to_string(), {}});
    }
    // Packages stored or kept that could not be checked.
    for (auto& [target, failure] : sync_.spool_failures_) {
        report.failures.push_back(std::move(failure));
    }
    sync_.spool_failures_.clear();
    return {};
}

Result<void> RepoSync::place_packages(const PackageIndex& index, const Selection& selection,
                                      Placement& placement) {
    auto plan = plan_sync(index, selection, placement.root(),
                          path_policy(placement.root(), placement.outside()), repo_.id);
    if (!plan) {
        Error error = std::move(plan.error());
        if (error.code == ErrorCode::Unsafe && layout_root_.empty() && !options_.safe_write_path &&
            error.message.find("escapes the repository root") != std::string::npos) {
            // The repository's failure, once, not its first package's.
            error.message = fmt::format(
                "{} (package {}); the mirror is left as it was: a repository whose packages live "
                "beside it, as Amazon Linux's releases share one blobstore, is mirrored with "
                "--upstream-layout (upstream's layout kept under -p/{}/) or --flatten-hrefs (its "
                "packages placed inside it)",
                error.message, error.subject, repo_.id);
            error.subject.clear();
        }
        return tl::unexpected(std::move(error));
    }
    plan_ = std::move(*plan);
    if (plan_.duplicate_paths > 0) {
        report_.warnings.push_back(fmt::format(
            "{} <package> entries name a file already listed under another spelling of its "
            "path (e.g. './Packages/a.rpm'); each file is downloaded once",
            plan_.duplicate_paths));
    }
    store::Survey survey = placement.survey(index);
    // On demand (streamed): what the store lacks is left for `rpmirror serve` to fetch, but for
    // those --prefetch names; what it holds is still judged, and a damaged one fetched again
    // below.
    const bool on_demand = options_.download_policy != DownloadPolicy::Immediate;
    std::vector<std::size_t> eager =
        on_demand ? prefetched(index, std::move(survey.absent)) : std::move(survey.absent);
    const std::vector<std::size_t> to_fetch = placement.copy_duplicates(index, eager);
    auto first = fetch_into(index, placement, to_fetch);
    const std::vector<store::Judgement> judged = survey.judged.get();
    if (!first) {
        return first;
    }
    std::vector<std::size_t> replace;
    for (const store::Judgement& one : judged) {
        switch (one.holding) {
            case store::Holding::Held: {
                ++report_.kept;
                if (options_.events != nullptr) {
                    const PackageView package = index[plan_.targets[one.item].position];
                    PackageEvent event;
                    event.kind = PackageEvent::Kind::AlreadyPresent;
                    event.file_name = href_file_name(package.location_href);
                    event.bytes = package.package_size;
                    event.total = report_.selected;
                    event.done = ++packages_done_;
                    options_.events->package(event);
                }
                break;
            }
            case store::Holding::Conflict:
                shared_file_conflict(index, one.item, one.where, one.held);
                break;
            case store::Holding::Replace:
                replace.push_back(one.item);
                break;
        }
    }
    report_.replaced = replace.size();
    placed_targets_ = on_demand ? std::move(eager) : plan_.to_download;
    placed_targets_.insert(placed_targets_.end(), replace.begin(), replace.end());
    if (auto second = fetch_into(index, placement, replace); !second) {
        return second;
    }
    if (checks_packages() && !placement.checks_while_storing() && !stop_.stop_requested()) {
        check_package_signatures(index);
    }
    return {};
}

std::vector<std::size_t> RepoSync::prefetched(const PackageIndex& index,
                                              std::vector<std::size_t> absent) const {
    if (!options_.prefetch.active() || absent.empty()) {
        return {};
    }
    if (options_.prefetch.everything) {
        return absent;
    }
    const Selection chosen =
        select_packages(index, prefetch_selection(options_.prefetch, options_.selection));
    const std::unordered_set<std::size_t> positions(chosen.positions.begin(),
                                                    chosen.positions.end());
    std::erase_if(absent, [&](std::size_t target) {
        return !positions.contains(plan_.targets[target].position);
    });
    return absent;
}

void RepoSync::shared_file_conflict(const PackageIndex& index, std::size_t target,
                                    const std::string& where, const std::string& held) {
    const PackageView package = index[plan_.targets[target].position];
    failed_targets_.insert(target);
    report_.failures.push_back(
        {package.nevra(),
         fmt::format("{} is shared beyond this repository's directory and holds {}, not the {} "
                     "{} this repository lists: not replaced",
                     where, held, checksum_type_name(package.checksum_type),
                     package.checksum_hex()),
         {}});
}

Result<void> RepoSync::fetch_into(const PackageIndex& index, Placement& placement,
                                  const std::vector<std::size_t>& targets) {
    for (std::size_t next = 0; next < targets.size() && !stop_.stop_requested();) {
        std::vector<std::size_t> batch;
        std::uint64_t bytes = 0;
        while (next < targets.size()) {
            const std::uint64_t size = index[plan_.targets[targets[next]].position].package_size;
            const std::uint64_t counted = size == kUnknownSize ? 0 : size;
            if (!batch.empty() && bytes + counted > placement.batch_bytes()) {
                break;
            }
            batch.push_back(targets[next++]);
            bytes += counted;
        }
        ProgressSink* const outer = progress_;
        progress_ = placement.begin_batch(batch, outer);
        auto downloaded = download_targets(index, batch);
        progress_ = outer;
        auto stored = placement.end_batch();
        if (!downloaded) {
            return downloaded;
        }
        if (!stored) {
            return stored;
        }
    }
    return {};
}

Result<void> RepoSync::download_targets(const PackageIndex& index,
                                        const std::vector<std::size_t>& targets) {
    if (targets.empty() || stop_.stop_requested()) {
        return {};
    }
    std::vector<DownloadRequest> requests;
    requests.reserve(targets.size());
    for (const std::size_t target : targets) {
        requests.push_back(
            request_for(index[plan_.targets[target].position], plan_.targets[target], mirrors_));
    }
    std::optional<PackageEventRelay> relay;
    if (options_.events != nullptr) {
        std::vector<std::string> names;
        names.reserve(targets.size());
        for (const std::size_t target : targets) {
            names.push_back(href_file_name(index[plan_.targets[target].position].location_href));
        }
        relay.emplace(progress_, *options_.events, std::move(names), report_.selected,
                      packages_done_);
    }
    auto downloaded = downloader_.run(plan_.roots, requests, relay ? &*relay : progress_, stop_);
    if (!downloaded) {
        return tl::unexpected(std::move(downloaded.error()));
    }
    report_.downloaded += downloaded->downloaded + downloaded->already_present;
    report_.bytes_downloaded += downloaded->bytes_received;
    report_.resumed += downloaded->resumed;
    report_.retries += downloaded->retries;
    for (std::size_t request = 0; request < requests.size(); ++request) {
        const FileResult& result = downloaded->files[request];
        if (result.status == FileStatus::Failed) {
            failed_targets_.insert(targets[request]);
            report_.failures.push_back(
                failure_of(index[plan_.targets[targets[request]].position], result));
        }
    }
    return {};
}

Result<void> RepoSync::delete_unlisted(const std::set<std::string>& keep) {
    auto deleted = store::delete_unlisted(*store_, keep);
    if (!deleted) {
        return tl::unexpected(std::move(deleted.error()));
    }
    report_.deleted.assign(deleted->begin(), deleted->end());
    return {};
}

}  // namespace rpmirror
