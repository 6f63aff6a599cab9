// A repository's mirror opened for a sync (store/sync_store.hpp): where a directory is told from a
// bucket, and the directory's.
#include "store/sync_store.hpp"

#include <fmt/core.h>

#include "checksum/hasher.hpp"
#include "plan/plan.hpp"
#include "store/destination.hpp"
#include "store/local_store.hpp"

namespace rpmirror::store {

Result<std::unique_ptr<SyncStore>> SyncStore::open(const SyncStoreOptions& options) {
    const bool bucket = Destination::of(options.destination).in_bucket() ||
                        (options.metadata_destination &&
                         Destination::of(*options.metadata_destination).in_bucket());
    return bucket ? open_bucket_sync_store(options) : open_disk_sync_store(options);
}

namespace {

// `path` absolute, with the symlinks of the part of it that exists resolved (lexically normal).
std::filesystem::path real_path(const std::filesystem::path& path) {
    std::error_code error;
    std::filesystem::path real =
        std::filesystem::weakly_canonical(std::filesystem::absolute(path, error), error);
    if (error) {
        real = std::filesystem::absolute(path).lexically_normal();
    }
    if (!real.has_filename() && real.has_relative_path()) {
        real = real.parent_path();  // "/srv/mirror/" (from "-p . --norepopath")
    }
    return real;
}

// A directory's: its files are their own record; packages are made in place.
class DiskSyncStore final : public SyncStore {
  public:
    explicit DiskSyncStore(const SyncStoreOptions& options)
        : options_(options), mirror_(options.repository, options.state_dir) {
        mirror_.set_sync_layout(options.metadata_dir, {});
        mirror_.set_durable(options.durable);
    }

    Result<std::unique_ptr<RepoLock>> lock(std::optional<std::chrono::seconds> wait,
                                           std::stop_token stop) override {
        return mirror_.lock(wait, std::move(stop));
    }

    // A directory's run lock cannot be lost: nothing to confirm.
    void hold(std::vector<RepoLock*> /*locks*/) override {}

    Result<void> load() override { return {}; }

    MirrorStore& mirror() override { return mirror_; }

    void set_package_roots(std::vector<std::filesystem::path> roots) override {
        package_roots_ = roots;
        mirror_.set_sync_layout(options_.metadata_dir, std::move(roots));
    }

    Result<std::unique_ptr<Staging>> stage(std::stop_token /*stop*/) override {
        if (!objects_) {
            objects_ = disk_object_store(options_.layout_root.empty() ? options_.repository
                                                                      : options_.layout_root);
        }
        return objects_->stage({});
    }

    // The files the plan found are hashed (their cache believed while the sync state vouches for
    // it) on worker threads; the others are absent, looked at no further.
    Survey survey(std::span<WantedFile> files, const SurveyOptions& options) override {
        checks_.clear();
        found_.clear();
        Survey survey;
        for (std::size_t item = 0; item < files.size(); ++item) {
            const WantedFile& file = files[item];
            if (!file.found) {
                survey.absent.push_back(item);
                continue;
            }
            found_.push_back(item);
            checks_.push_back({options_.repository / file.key, file.checksum_type, file.digest,
                               file.size == kUnknownSize
                                   ? std::nullopt
                                   : std::optional<std::uint64_t>(file.size)});
        }
        VerifyOptions verify;
        verify.threads = options.threads;
        verify.hash.use_cache = options_.use_checksum_cache;
        verify.hash.trust = cache_trust_of(options_.state_dir, options_.repository);
        verify.hash.stop = options.stop;
        survey.judged = std::async(std::launch::async, [this, files, verify] {
            const std::vector<VerifyResult> verified = verify_files(checks_, verify);
            std::vector<Judgement> judged;
            judged.reserve(verified.size());
            for (std::size_t check = 0; check < verified.size(); ++check) {
                const std::size_t item = found_[check];
                const VerifyResult& result = verified[check];
                Judgement one{item, Holding::Held, {}, {}};
                if (result.status == VerifyStatus::Ok) {
                    judged.push_back(std::move(one));
                    continue;
                }
                one.holding = Holding::Replace;
                // Beyond the repository's directory a file may be another's as it is.
                if (files[item].beyond && (result.status == VerifyStatus::DigestMismatch ||
                                           result.status == VerifyStatus::SizeMismatch)) {
                    one.holding = Holding::Conflict;
                    one.where = files[item].shown;
                    one.held = result.status == VerifyStatus::SizeMismatch
                                   ? fmt::format("{} bytes", result.actual_size)
                                   : fmt::format("{} {}", checksum_type_name(checks_[check].type),
                                                 result.actual_digest);
                }
                judged.push_back(std::move(one));
            }
            return judged;
        });
        return survey;
    }

    // The store of the deepest directory above the repository's parent, the package roots and
    // --dedupe-dir's trees (a hard link is made inside it); the mirrors beside the repository are
    // those published or synced; their files are verified, the checksum cache believed for what
    // a sync state in the state directory records.
    std::optional<Siblings> siblings() override {
        const std::filesystem::path repository = real_path(options_.repository);
        if (!repository.has_relative_path() || !repository.has_parent_path()) {
            return std::nullopt;  // nothing beside "/"
        }
        std::vector<std::filesystem::path> trees;
        for (const std::filesystem::path& tree : options_.dedupe_dirs) {
            trees.push_back(real_path(tree));
        }
        std::filesystem::path root = repository.parent_path();
        const auto enclose = [&root](const std::filesystem::path& path) {
            std::filesystem::path common;
            for (auto a = root.begin(), b = path.begin();
                 a != root.end() && b != path.end() && *a == *b; ++a, ++b) {
                common /= *a;
            }
            root = common;
        };
        for (const std::filesystem::path& path : trees) {
            enclose(path);
        }
        for (const std::filesystem::path& path : package_roots_) {
            enclose(real_path(path));
        }
        if (!options_.layout_root.empty()) {
            enclose(real_path(options_.layout_root));
        }
        if (!shared_ || shared_root_ != root) {
            shared_ = disk_object_store(root);
            shared_root_ = root;
        }
        const auto key_of = [&root](const std::filesystem::path& path) {
            const std::filesystem::path relative = path.lexically_relative(root);
            return relative == "." ? std::string() : relative.generic_string();
        };
        Siblings siblings;
        siblings.shared = shared_.get();
        siblings.repository = key_of(repository);
        for (const std::filesystem::path& tree : trees) {
            siblings.trees.push_back(key_of(tree));
        }
        const std::filesystem::path metadata = real_path(options_.metadata_dir);
        if (const std::string key = key_of(metadata);
            !options_.metadata_dir.empty() && check_key(key)) {
            siblings.excluded.push_back(key);
        }
        // A sync state is named after the directory as its sync spelled it: beside the
        // repository as this one is spelled, or by its real path.
        std::filesystem::path spelled = std::filesystem::absolute(options_.repository);
        spelled = spelled.lexically_normal();
        if (!spelled.has_filename() && spelled.has_relative_path()) {
            spelled = spelled.parent_path();
        }
        siblings.mirror = [this, root, beside = spelled.parent_path()](const std::string& key) {
            auto index = shared_->stat(join_key(key, kIndexKey));
            if (index && index->has_value()) {
                return true;
            }
            std::error_code ignored;
            return !options_.state_dir.empty() &&
                   (std::filesystem::exists(
                        sync_state_path(options_.state_dir, beside / name_of(key)), ignored) ||
                    std::filesystem::exists(sync_state_path(options_.state_dir, root / key),
                                            ignored));
        };
        if (options_.use_checksum_cache && !options_.state_dir.empty()) {
            siblings.trust = cache_trust_of_state_dir(options_.state_dir);
        }
        siblings.partials = true;
        return siblings;
    }

    // A link's file is its own record.
    void record_copied(const PlacedFile& /*file*/) override {}

    std::uint64_t requests() const override { return 0; }

  private:
    SyncStoreOptions options_;
    LocalStore mirror_;
    std::unique_ptr<ObjectStore> objects_;  // stage()'s
    std::vector<std::filesystem::path> package_roots_;
    std::unique_ptr<ObjectStore> shared_;  // siblings()', at shared_root_
    std::filesystem::path shared_root_;
    std::vector<VerifyRequest> checks_;  // survey()'s, read by its future
    std::vector<std::size_t> found_;     // the item of each check
};

}  // namespace

Result<std::unique_ptr<SyncStore>> open_disk_sync_store(const SyncStoreOptions& options) {
    return std::unique_ptr<SyncStore>(std::make_unique<DiskSyncStore>(options));
}

}  // namespace rpmirror::store
