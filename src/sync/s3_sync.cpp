// The s3:// destination of a sync (see sync/s3_sync.hpp).
#include "sync/s3_sync.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "dedupe/s3_dedupe.hpp"
#include "fs/tree.hpp"
#include "rpmirror/metadata/metadata.hpp"
#include "s3/upload.hpp"
#include "store/s3_store.hpp"
#include "sync/s3_spool.hpp"

namespace rpmirror {

bool is_s3_destination(const SyncOptions& options) {
    return s3::is_s3_url(options.download_path.native());
}

Result<s3::S3Location> s3_repo_location(const SyncOptions& options, std::string_view repo_id) {
    const std::string download_path = options.download_path.native();
    if (options.metadata_path) {
        const std::string metadata_path = options.metadata_path->native();
        const bool both_s3 = s3::is_s3_url(download_path) && s3::is_s3_url(metadata_path);
        bool same = false;
        if (both_s3) {
            auto packages = s3::S3Location::parse(download_path);
            auto metadata = s3::S3Location::parse(metadata_path);
            same = packages && metadata && packages->bucket == metadata->bucket &&
                   packages->prefix == metadata->prefix;
        }
        if (!same) {
            return make_error(ErrorCode::BadInput,
                              "--metadata-path '" + metadata_path + "' and -p '" + download_path +
                                  "': with an s3:// destination the metadata goes with the "
                                  "packages (give the same s3:// location or leave "
                                  "--metadata-path out)",
                              download_path);
        }
    }
    // What a bucket physically cannot do, refused here and nowhere else.
    const auto refused = [&](std::string_view option, std::string_view why) {
        return make_error(
            ErrorCode::Unsupported,
            std::string(option) + " is not possible with an s3:// destination: " + std::string(why),
            download_path);
    };
    if (options.remote_time) {
        return refused("--remote-time", "an object's time is set by the store when it is written");
    }
    if (options.safe_write_path) {
        return refused("--safe-write-path",
                       "a key has no outside to allow (hrefs leaving the repository are refused)");
    }
    if (!options.dedupe_dirs.empty()) {
        return refused("--dedupe-dir",
                       "local files cannot be linked into a bucket (--dedupe copies from the "
                       "repositories beside it in the bucket)");
    }
    auto location = s3::S3Location::parse(download_path);
    if (!location) {
        return location;
    }
    if (!options.norepopath) {
        location->prefix += std::string(repo_id) + "/";
    }
    return location;
}

S3Destination::S3Destination(const SyncOptions& options, s3::S3Config config,
                             s3::S3Location location, S3Spool spool,
                             const std::filesystem::path& layout_path)
    : options_(options),
      config_(config),
      location_(std::move(location)),
      root_prefix_(location_.prefix),
      client_(std::move(config)),
      spool_(std::move(spool.dir)),
      spool_repo_(layout_path.empty() ? spool_ : spool_ / layout_path),
      spool_owner_(std::move(spool.owner)),
      spool_in_memory_(spool.in_memory),
      spool_warning_(std::move(spool.warning)) {}

S3Destination::~S3Destination() {
    if (pool_) {
        (void)end_uploads();
    }
    (void)fs::remove_tree(spool_);
}

Result<std::unique_ptr<S3Destination>> S3Destination::open(
    const SyncOptions& options, std::string_view repo_id,
    const std::filesystem::path& layout_path) {
    auto location = s3_repo_location(options, repo_id);
    if (!location) {
        return tl::unexpected(std::move(location.error()));
    }
    const std::string root_prefix = location->prefix;
    if (!layout_path.empty()) {
        location->prefix += layout_path.generic_string() + "/";
    }
    if (options.s3_part_size < s3::kMinPartSize) {
        return make_error(ErrorCode::BadInput,
                          "--s3-part-size " + std::to_string(options.s3_part_size) +
                              " is below the 5 MiB S3 requires",
                          location->to_string());
    }
    auto config = s3::resolve_config(options.s3, s3::process_environment());
    if (!config) {
        return tl::unexpected(std::move(config.error()));
    }
    if (options.s3_spool_size < options.s3_part_size) {
        return make_error(ErrorCode::BadInput,
                          "--s3-spool-size " + std::to_string(options.s3_spool_size) +
                              " is below --s3-part-size " + std::to_string(options.s3_part_size),
                          location->to_string());
    }
    auto spool = create_s3_spool(options.s3_spool_dir, options.s3_spool_size);
    if (!spool) {
        return tl::unexpected(std::move(spool.error()));
    }
    auto destination = std::unique_ptr<S3Destination>(new S3Destination(
        options, std::move(*config), std::move(*location), std::move(*spool), layout_path));
    destination->root_prefix_ = root_prefix;
    return destination;
}

Result<std::unique_ptr<RepoLock>> S3Destination::lock(std::optional<std::chrono::seconds> wait,
                                                      std::stop_token stop) {
    store::S3Store mirror(client_, location_);
    return mirror.lock(wait, std::move(stop));
}

Result<void> S3Destination::confirm_lock() {
    for (RepoLock* lock : locks_) {
        if (auto held = lock->confirm(); !held) {
            return held;
        }
    }
    return {};
}

Result<void> S3Destination::load() {
    auto state = s3::load_state(client_, location_, state_key_);
    if (!state) {
        return tl::unexpected(std::move(state.error()));
    }
    if (*state) {
        state_ = std::move(**state);
    }
    // Under --upstream-layout, the blobs beneath the layout root too.
    auto listing = s3::list_mirror_within(client_, location_, root_prefix_);
    if (!listing) {
        return tl::unexpected(std::move(listing.error()));
    }
    listing_ = std::move(*listing);
    store::S3SyncView view;
    view.listing = &listing_;
    view.state = &state_;
    view.stored_now = &uploaded_now_;
    view.acl = options_.s3_acl;
    view.part_size = options_.s3_part_size;
    view.confirm_lease = [this] { return confirm_lock(); };
    view.state_key = state_key_;
    store_ = std::make_unique<store::S3Store>(client_, location_, std::move(view));
    return {};
}

bool S3Destination::holds(const std::string& key, std::string_view sha256) const {
    const auto stored = state_.objects.find(key);
    const auto listed = listing_.find(key);
    return stored != state_.objects.end() && listed != listing_.end() &&
           stored->second.checksum_type == ChecksumType::Sha256 &&
           stored->second.digest == sha256 && s3::still_matches(stored->second, listed->second);
}

std::vector<std::size_t> S3Destination::missing(std::span<const S3Package> packages,
                                                std::vector<Conflict>* conflicts) {
    const auto recorded = [&](const S3Package& package,
                              const std::map<std::string, s3::StoredObject>& records) {
        const auto stored = records.find(package.key);
        const auto listed = listing_.find(package.key);
        return options_.use_checksum_cache && stored != records.end() && listed != listing_.end() &&
                       stored->second.checksum_type == package.checksum_type &&
                       stored->second.digest == package.digest &&
                       (package.size == kUnknownSize || stored->second.size == package.size) &&
                       s3::still_matches(stored->second, listed->second)
                   ? &stored->second
                   : nullptr;
    };
    std::vector<std::size_t> result;
    std::vector<std::size_t> unrecorded;
    for (std::size_t item = 0; item < packages.size(); ++item) {
        const S3Package& package = packages[item];
        if (recorded(package, state_.objects) != nullptr) {
            continue;
        }
        // The other releases' records, read once, only when a package is not this one's.
        if (!layout_records_loaded_ && root_prefix_ != location_.prefix) {
            load_layout_records();
            layout_records_loaded_ = true;
        }
        const auto other = layout_records_.find(package.key);
        const auto listed = listing_.find(package.key);
        if (other != layout_records_.end() && other->second.shareable) {
            const std::map<std::string, s3::StoredObject> one{{package.key, other->second.object}};
            if (const s3::StoredObject* shared = recorded(package, one)) {
                state_.objects[package.key] = *shared;
                continue;
            }
        }
        // A blob beyond the repository that a release's state could not be read for: it may be
        // another release's, and is not replaced.
        if (conflicts != nullptr && layout_unreadable_ && package.key.starts_with("../") &&
            listed != listing_.end() && other == layout_records_.end()) {
            conflicts->push_back({item, "an object whose owner's state cannot be read"});
            continue;
        }
        // A blob beyond the repository that no release recorded (an object of another tool, or
        // of a run killed before it recorded its state): judged by its content, as on disk.
        if (conflicts != nullptr && package.key.starts_with("../") && listed != listing_.end() &&
            other == layout_records_.end()) {
            unrecorded.push_back(item);
            continue;
        }
        if (conflicts != nullptr && other != layout_records_.end() && listed != listing_.end() &&
            s3::still_matches(other->second.object, listed->second)) {
            const s3::StoredObject& held = other->second.object;
            if (package.size != kUnknownSize && held.size != package.size) {
                conflicts->push_back({item, std::to_string(held.size) + " bytes"});
                continue;
            }
            if (held.checksum_type == package.checksum_type && held.digest != package.digest) {
                conflicts->push_back({item, std::string(checksum_type_name(held.checksum_type)) +
                                                " " + held.digest});
                continue;
            }
        }
        result.push_back(item);
    }
    if (!unrecorded.empty()) {
        judge_unrecorded(packages, unrecorded, result, *conflicts);
        std::sort(result.begin(), result.end());
    }
    return result;
}

void S3Destination::judge_unrecorded(std::span<const S3Package> packages,
                                     const std::vector<std::size_t>& items,
                                     std::vector<std::size_t>& missing,
                                     std::vector<Conflict>& conflicts) {
    std::vector<store::ExpectedFile> expected;
    expected.reserve(items.size());
    for (const std::size_t item : items) {
        const S3Package& package = packages[item];
        expected.push_back(
            {package.key, package.checksum_type, package.digest,
             package.size == kUnknownSize ? std::nullopt : std::optional(package.size)});
    }
    // Hashed whatever the object's metadata claims: nothing is trusted for being there.
    const std::vector<store::CheckedFile> checked =
        store_->check_files(expected, store::CheckOptions{0, false});
    for (std::size_t index = 0; index < items.size(); ++index) {
        const std::size_t item = items[index];
        const S3Package& package = packages[item];
        const store::CheckedFile& found = checked[index];
        switch (found.finding) {
            case store::Finding::Intact: {
                const s3::ListedObject& listed = listing_.at(package.key);
                state_.objects[package.key] = s3::StoredObject{
                    listed.size, listed.etag, package.checksum_type, package.digest};
                break;
            }
            case store::Finding::Missing:  // gone since the listing: stored like any other
                missing.push_back(item);
                break;
            case store::Finding::SizeMismatch:
                conflicts.push_back({item, std::to_string(found.actual_size) + " bytes"});
                break;
            case store::Finding::DigestMismatch:
                conflicts.push_back({item, std::string(checksum_type_name(package.checksum_type)) +
                                               " " + found.actual_digest});
                break;
            default:
                conflicts.push_back({item, "an object that cannot be read (" + found.detail + ")"});
                break;
        }
    }
}

std::vector<std::size_t> S3Destination::copy_from_siblings(std::span<const S3Package> packages,
                                                           std::vector<std::size_t> missing,
                                                           RepoSyncReport& report) {
    std::vector<dedupe::S3Wanted> wanted;
    wanted.reserve(missing.size());
    for (const std::size_t item : missing) {
        const S3Package& package = packages[item];
        wanted.push_back({package.key, package.checksum_type, package.digest, package.size});
    }
    const dedupe::S3DedupeOutcome outcome =
        dedupe::copy_from_siblings(client_, location_, wanted, options_.s3_acl);
    std::vector<bool> copied(missing.size(), false);
    for (const dedupe::S3Copied& copy : outcome.copied) {
        copied[copy.index] = true;
        const std::string& key = wanted[copy.index].key;
        state_.objects[key] = copy.object;
        uploaded_now_.insert(key);
    }
    report.linked += outcome.copied.size();
    report.linked_bytes += outcome.copied_bytes;
    report.link_fallbacks += outcome.fallbacks;
    if (!outcome.note.empty()) {
        report.warnings.push_back(outcome.note);
    }
    std::vector<std::size_t> rest;
    for (std::size_t index = 0; index < missing.size(); ++index) {
        if (!copied[index]) {
            rest.push_back(missing[index]);
        }
    }
    return rest;
}

void S3Destination::check_signatures(std::string key_ids, SpoolCheck check) {
    check_keys_ = std::move(key_ids);
    check_ = std::move(check);
}

bool S3Destination::signatures_checked_with(const std::string& key_ids) const {
    return !key_ids.empty() && state_.signatures_checked == key_ids;
}

Result<void> S3Destination::store_state() {
    return s3::store_state(client_, location_, state_, state_key_);
}

struct S3Destination::UploadPool {
    std::span<const S3Package> packages;
    std::stop_token stop;
    std::mutex mutex;
    std::condition_variable changed;
    std::deque<std::size_t> queue;  // items complete in the spool, not yet taken
    bool closed = false;            // end_uploads(): no more items
    // nullopt: a stored package the check found good (kept as it is).
    std::vector<std::pair<std::size_t, Result<std::optional<s3::StoredObject>>>> done;
    std::vector<std::size_t> removed;  // stored packages the check had a verdict against
    std::atomic<std::uint64_t> requests{0};
    std::vector<std::jthread> workers;
};

void S3Destination::begin_uploads(std::span<const S3Package> packages, std::stop_token stop) {
    pool_ = std::make_unique<UploadPool>();
    pool_->packages = packages;
    pool_->stop = std::move(stop);
    for (unsigned worker = 0; worker < std::max(1U, options_.s3_parallel); ++worker) {
        pool_->workers.emplace_back([this, pool = pool_.get()] {
            s3::S3Client client(config_);
            for (;;) {
                std::size_t item = 0;
                {
                    std::unique_lock lock(pool->mutex);
                    pool->changed.wait(lock,
                                       [pool] { return pool->closed || !pool->queue.empty(); });
                    if (pool->queue.empty()) {
                        break;
                    }
                    item = pool->queue.front();
                    pool->queue.pop_front();
                }
                const S3Package& package = pool->packages[item];
                const std::filesystem::path file = (spool_repo_ / package.key).lexically_normal();
                Result<std::optional<s3::StoredObject>> outcome =
                    make_error(ErrorCode::Interrupted, "interrupted", location_.key(package.key));
                const SpoolVerdict verdict = pool->stop.stop_requested() || !check_
                                                 ? SpoolVerdict::Upload
                                                 : check_(item, file);
                if (verdict != SpoolVerdict::Upload) {
                    outcome = make_error(ErrorCode::Unsafe, "signature check failed",
                                         location_.key(package.key));
                } else if (package.stored && !pool->stop.stop_requested()) {
                    outcome = std::optional<s3::StoredObject>();
                } else if (!pool->stop.stop_requested()) {
                    s3::UploadSpec spec;
                    spec.checksum_type = package.checksum_type;
                    spec.digest = package.digest;
                    spec.part_size = options_.s3_part_size;
                    spec.acl = options_.s3_acl;
                    spec.content_type = "application/x-rpm";
                    const std::uint64_t before = client.request_count();
                    auto uploaded = s3::upload_file(client, location_.bucket,
                                                    location_.key(package.key), file, spec);
                    outcome = uploaded
                                  ? Result<std::optional<s3::StoredObject>>(std::move(*uploaded))
                                  : tl::unexpected(std::move(uploaded.error()));
                    pool->requests += client.request_count() - before;
                }
                (void)fs::remove_file(file);
                const std::lock_guard lock(pool->mutex);
                if (verdict == SpoolVerdict::Remove && package.stored) {
                    pool->removed.push_back(item);
                }
                pool->done.emplace_back(item, std::move(outcome));
            }
        });
    }
}

void S3Destination::upload_when_ready(std::size_t item) {
    {
        const std::lock_guard lock(pool_->mutex);
        pool_->queue.push_back(item);
    }
    pool_->changed.notify_one();
}

Result<std::vector<std::pair<std::size_t, Error>>> S3Destination::end_uploads() {
    {
        const std::lock_guard lock(pool_->mutex);
        pool_->closed = true;
    }
    pool_->changed.notify_all();
    pool_->workers.clear();  // joins
    const std::unique_ptr<UploadPool> pool = std::move(pool_);
    pool_requests_ += pool->requests.load();
    std::vector<std::pair<std::size_t, Error>> failures;
    bool uploaded_any = false;
    for (auto& [item, outcome] : pool->done) {
        const S3Package& package = pool->packages[item];
        if (!outcome) {
            failures.emplace_back(item, std::move(outcome.error()));
            continue;
        }
        if (!*outcome) {
            continue;  // stored, and now checked
        }
        listing_[package.key] =
            s3::ListedObject{location_.key(package.key), (*outcome)->size, (*outcome)->etag, {}};
        state_.objects[package.key] = std::move(**outcome);
        uploaded_now_.insert(package.key);
        uploaded_any = true;
    }
    // A package the check condemned is not left in the mirror (as a local --gpgcheck removes
    // the file).
    std::vector<std::string> condemned;
    for (const std::size_t item : pool->removed) {
        // A blob beyond the repository (--upstream-layout) may be another release's: this
        // release stops vouching for it, and the package fails, but the object stays.
        if (!pool->packages[item].key.starts_with("../")) {
            condemned.push_back(pool->packages[item].key);
        }
        state_.objects.erase(pool->packages[item].key);
    }
    if (uploaded_any && check_keys_.empty()) {
        state_.signatures_checked.clear();  // unchecked packages among the state's now
    }
    // Incomplete until published: a killed run's uploads are kept by the next one.
    state_.repomd_sha256.clear();
    if (auto held = confirm_lock(); !held) {
        return tl::unexpected(std::move(held.error()));
    }
    if (!condemned.empty()) {
        if (auto deleted = store_->remove_packages(condemned); !deleted) {
            return tl::unexpected(std::move(deleted.error()));
        }
    }
    if (auto stored = store_state(); !stored) {
        return tl::unexpected(std::move(stored.error()));
    }
    return failures;
}

std::uint64_t S3Destination::requests() const {
    return client_.request_count() + pool_requests_;
}

}  // namespace rpmirror
