// A bucket's repository opened for a sync (store/sync_store.hpp): its location and client, its
// lease, what it holds (store/s3_holdings.hpp), its spool and its siblings.
#include <algorithm>

#include "s3/client.hpp"
#include "s3/config.hpp"
#include "s3/mirror_state.hpp"
#include "s3/upload.hpp"
#include "store/destination.hpp"
#include "store/s3_holdings.hpp"
#include "store/s3_store.hpp"
#include "store/sync_store.hpp"
#include "util/text.hpp"

namespace rpmirror::store {

namespace {

// The repository's location (SyncStoreOptions::repository's), after what a bucket refuses:
// --metadata-path elsewhere (Error{BadInput} naming both), what only a directory can do
// (Error{Unsupported} naming the option); the one place they are refused.
Result<s3::S3Location> bucket_location(const SyncStoreOptions& options,
                                       const std::filesystem::path& repository) {
    const std::string& download_path = options.destination;
    if (options.metadata_destination) {
        const std::string& metadata_path = *options.metadata_destination;
        // (location() refuses a directory.)
        const auto packages = Destination::of(download_path).location();
        const auto metadata = Destination::of(metadata_path).location();
        const bool same = packages && metadata && packages->bucket == metadata->bucket &&
                          packages->prefix == metadata->prefix;
        if (!same) {
            return make_error(ErrorCode::BadInput,
                              "--metadata-path '" + metadata_path + "' and -p '" + download_path +
                                  "': with an s3:// destination the metadata goes with the "
                                  "packages (give the same s3:// location or leave "
                                  "--metadata-path out)",
                              download_path);
        }
    }
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
    if (auto root = s3::S3Location::parse(download_path); !root) {
        return root;
    }
    return s3::S3Location::parse(repository.native());
}

class BucketSyncStore final : public SyncStore {
  public:
    BucketSyncStore(const SyncStoreOptions& options, s3::S3Config config, s3::S3Location location,
                    std::string root_prefix)
        : options_(options),
          config_(config),
          location_(std::move(location)),
          root_prefix_(std::move(root_prefix)),
          client_(std::move(config)) {}

    Result<std::unique_ptr<RepoLock>> lock(std::optional<std::chrono::seconds> wait,
                                           std::stop_token stop) override {
        S3Store mirror(client_, location_);
        return mirror.lock(wait, std::move(stop));
    }

    void hold(std::vector<RepoLock*> locks) override { locks_ = std::move(locks); }

    Result<void> load() override {
        S3Holdings::Settings settings;
        settings.use_checksum_cache = options_.use_checksum_cache;
        settings.acl = options_.acl;
        settings.part_size = options_.part_size;
        settings.confirm_lease = [this]() -> Result<void> {
            for (RepoLock* lock : locks_) {
                if (auto held = lock->confirm(); !held) {
                    return held;
                }
            }
            return {};
        };
        holdings_ =
            std::make_unique<S3Holdings>(client_, location_, root_prefix_, std::move(settings));
        return holdings_->load();
    }

    MirrorStore& mirror() override { return holdings_->store(); }

    Result<std::unique_ptr<Staging>> stage(std::stop_token stop) override {
        if (!objects_) {
            objects_ = s3_object_store(config_, s3::S3Location{location_.bucket, root_prefix_});
        }
        StageOptions stage;
        stage.spool_dir = options_.spool_dir;
        stage.capacity = options_.spool_size;
        stage.parallel = std::max(1U, options_.parallel);
        stage.part_size = options_.part_size;
        stage.acl = options_.acl;
        stage.content_type = "application/x-rpm";
        stage.stop = std::move(stop);
        return objects_->stage(stage);
    }

    Survey survey(std::span<WantedFile> files, const SurveyOptions& options) override {
        std::vector<S3Holdings::Conflict> conflicts;
        Survey survey;
        survey.absent = holdings_->missing(files, &conflicts);
        std::vector<bool> absent(files.size(), false);
        for (const std::size_t item : survey.absent) {
            absent[item] = true;
        }
        std::vector<Judgement> judged;
        std::vector<bool> conflicting(files.size(), false);
        // --upstream-layout: a blob another release stored with other content is shared with
        // it: never replaced; this package fails instead (as on disk).
        for (const S3Holdings::Conflict& conflict : conflicts) {
            conflicting[conflict.item] = true;
            judged.push_back(
                {conflict.item, Holding::Conflict, conflict.held,
                 s3::object_url(location_.bucket, location_.key(files[conflict.item].key))});
        }
        // --gpgcheck: stored packages no check vouches for are judged too: downloaded once
        // more into the spool, checked, and kept or deleted (never uploaded again).
        const bool rejudge =
            options.judged_with && !holdings_->signatures_checked_with(*options.judged_with);
        if (rejudge) {
            survey.absent.clear();
        }
        for (std::size_t item = 0; item < files.size(); ++item) {
            if (conflicting[item]) {
                continue;
            }
            if (rejudge) {
                files[item].stored = !absent[item];
                survey.absent.push_back(item);
            } else if (!absent[item]) {
                judged.push_back({item, Holding::Held, {}, {}});
            }
        }
        survey.judged = std::async(std::launch::deferred,
                                   [judged = std::move(judged)]() mutable { return judged; });
        return survey;
    }

    std::optional<Siblings> siblings() override {
        if (!bucket_) {
            bucket_ = s3_object_store(config_, s3::S3Location{location_.bucket, ""});
        }
        // The siblings are the prefixes beside the repository's.
        std::string repository = location_.prefix;
        while (repository.ends_with('/')) {
            repository.pop_back();
        }
        if (repository.empty()) {
            return std::nullopt;  // nothing beside the bucket's root
        }
        Siblings siblings;
        siblings.shared = bucket_.get();
        siblings.repository = std::move(repository);
        siblings.copy.acl = options_.acl;
        siblings.describe_copies = true;
        return siblings;
    }

    void record_copied(const PlacedFile& file) override {
        holdings_->record_copied(file.key, {file.stored.size, file.stored.version, file.type,
                                            text::to_lower(file.digest)});
    }

    std::uint64_t requests() const override { return client_.request_count(); }

  private:
    SyncStoreOptions options_;
    s3::S3Config config_;
    s3::S3Location location_;
    std::string root_prefix_;  // location_'s, or the layout root's above it
    s3::S3Client client_;
    std::unique_ptr<ObjectStore> objects_;  // at root_prefix_: stage()'s
    std::unique_ptr<ObjectStore> bucket_;   // the whole bucket: siblings()'
    std::unique_ptr<S3Holdings> holdings_;  // load()'s
    std::vector<RepoLock*> locks_;          // hold()'s
};

}  // namespace

Result<std::unique_ptr<SyncStore>> open_bucket_sync_store(const SyncStoreOptions& options) {
    auto location = bucket_location(options, options.repository);
    if (!location) {
        return tl::unexpected(std::move(location.error()));
    }
    std::string root_prefix = location->prefix;
    if (!options.layout_root.empty()) {
        auto root = bucket_location(options, options.layout_root);
        if (!root) {
            return tl::unexpected(std::move(root.error()));
        }
        root_prefix = root->prefix;
    }
    if (options.part_size < s3::kMinPartSize) {
        return make_error(ErrorCode::BadInput,
                          "--s3-part-size " + std::to_string(options.part_size) +
                              " is below the 5 MiB S3 requires",
                          location->to_string());
    }
    auto config = s3::resolve_config(options.s3, s3::process_environment());
    if (!config) {
        return tl::unexpected(std::move(config.error()));
    }
    if (options.spool_size < options.part_size) {
        return make_error(ErrorCode::BadInput,
                          "--s3-spool-size " + std::to_string(options.spool_size) +
                              " is below --s3-part-size " + std::to_string(options.part_size),
                          location->to_string());
    }
    return std::unique_ptr<SyncStore>(std::make_unique<BucketSyncStore>(
        options, std::move(*config), std::move(*location), std::move(root_prefix)));
}

}  // namespace rpmirror::store
