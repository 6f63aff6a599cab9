// The s3:// destination of a sync (see sync/s3_sync.hpp).
#include "sync/s3_sync.hpp"

#include <algorithm>

#include "dedupe/siblings.hpp"
#include "s3/upload.hpp"
#include "store/s3_store.hpp"
#include "util/text.hpp"

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
                             s3::S3Location location, const std::filesystem::path& layout_path)
    : options_(options),
      config_(config),
      location_(std::move(location)),
      root_prefix_(location_.prefix),
      client_(std::move(config)),
      layout_path_(layout_path) {}

S3Destination::~S3Destination() = default;

Result<std::unique_ptr<store::Staging>> S3Destination::stage(std::stop_token stop) {
    if (!objects_) {
        objects_ = store::s3_object_store(config_, s3::S3Location{location_.bucket, root_prefix_});
    }
    store::StageOptions stage;
    stage.spool_dir = options_.s3_spool_dir;
    stage.capacity = options_.s3_spool_size;
    stage.parallel = std::max(1U, options_.s3_parallel);
    stage.part_size = options_.s3_part_size;
    stage.acl = options_.s3_acl;
    stage.content_type = "application/x-rpm";
    stage.stop = std::move(stop);
    return objects_->stage(stage);
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
    auto destination = std::unique_ptr<S3Destination>(
        new S3Destination(options, std::move(*config), std::move(*location), layout_path));
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
    store::S3Holdings::Settings settings;
    settings.state_key = state_key_;
    settings.use_checksum_cache = options_.use_checksum_cache;
    settings.acl = options_.s3_acl;
    settings.part_size = options_.s3_part_size;
    settings.confirm_lease = [this] { return confirm_lock(); };
    holdings_ =
        std::make_unique<store::S3Holdings>(client_, location_, root_prefix_, std::move(settings));
    return holdings_->load();
}

std::vector<std::size_t> S3Destination::copy_from_siblings(std::span<const S3Package> packages,
                                                           std::vector<std::size_t> missing,
                                                           RepoSyncReport& report) {
    std::vector<dedupe::Wanted> wanted;
    wanted.reserve(missing.size());
    for (const std::size_t item : missing) {
        const S3Package& package = packages[item];
        wanted.push_back({package.key, package.checksum_type, package.digest, package.size});
    }
    // The siblings are the prefixes beside the repository's, in the bucket's store.
    std::string repo = location_.prefix;
    while (repo.ends_with('/')) {
        repo.pop_back();
    }
    const auto bucket = store::s3_object_store(config_, s3::S3Location{location_.bucket, ""});
    store::CopyOptions copy;
    copy.acl = options_.s3_acl;
    dedupe::SiblingOutcome outcome = dedupe::copy_from_siblings(*bucket, repo, wanted, copy);
    std::vector<bool> copied(missing.size(), false);
    for (const dedupe::Copied& made : outcome.copied) {
        copied[made.index] = true;
        const dedupe::Wanted& package = wanted[made.index];
        holdings_->record_copied(package.key,
                                 {made.object.size, made.object.version, package.checksum_type,
                                  text::to_lower(package.digest)});
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

std::uint64_t S3Destination::requests() const {
    return client_.request_count();
}

}  // namespace rpmirror
