// An installation tree's own files in a bucket (sync/tree_files.hpp): held iff the tree's record
// (s3::kTreeStateKey) has the checksum .treeinfo lists (any, for an image it lists without one)
// and the object is still the one recorded;
// each missing file fetched into the bucket's staging area (its spool) alone (an image can be
// gigabytes), committed (uploaded, unlinked) and recorded; .treeinfo stored once everything it
// names is, through the sync's store.
#include <fmt/core.h>

#include "metadata/treeinfo.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "sync/events.hpp"
#include "sync/s3_sync.hpp"
#include "sync/tree_files.hpp"

namespace rpmirror {

namespace {

// Gives an image that .treeinfo names without a checksum the digest its bytes arrived with
// (FileResult::digest), before `inner` (CommitOnFinish) commits it: the store then verifies the
// upload against it, and the record keeps it.
class DigestOnFinish final : public ForwardingSink {
  public:
    DigestOnFinish(ProgressSink* inner, store::StagedFile& upload)
        : ForwardingSink(inner), upload_(upload) {}

    void file_finished(std::size_t request_index, const FileResult& result) override {
        if (upload_.digest.empty()) {
            upload_.digest = result.digest;
        }
        ForwardingSink::file_finished(request_index, result);
    }

  private:
    store::StagedFile& upload_;
};

class S3TreeFiles final : public TreeFiles {
  public:
    explicit S3TreeFiles(SyncOptions options) : options_(std::move(options)) {}

    Result<void> open(std::string_view repo_id, RepoLock* lock,
                      std::vector<std::string>& warnings) {
        auto opened = S3Destination::open(options_, repo_id);
        if (!opened) {
            return tl::unexpected(std::move(opened.error()));
        }
        destination_ = std::move(*opened);
        auto staging = destination_->stage(stop_.get_token());
        if (!staging) {
            return tl::unexpected(std::move(staging.error()));
        }
        staging_ = std::move(*staging);
        if (staging_->warning()) {
            warnings.push_back(*staging_->warning());
        }
        if (lock != nullptr) {
            destination_->hold({lock});
        }
        destination_->use_state(s3::kTreeStateKey);
        return destination_->load();
    }

    std::vector<bool> held(std::span<const TreeInfo::File> files) override {
        std::vector<S3Package> packages;
        for (const TreeInfo::File& file : files) {
            packages.push_back({file.path, file.type, file.digest, kUnknownSize});
        }
        std::vector<bool> result(files.size(), true);
        for (const std::size_t missing : destination_->holdings().missing(packages)) {
            result[missing] = false;
        }
        return result;
    }

    std::vector<bool> held_as_stored(std::span<const std::string> paths) override {
        // Each with the checksum the record has for it (its bytes as they arrived): missing()
        // then asks only whether the object is still the one recorded.
        std::vector<S3Package> packages;
        std::vector<bool> result(paths.size(), false);
        std::vector<std::size_t> recorded;
        for (std::size_t index = 0; index < paths.size(); ++index) {
            const auto found = destination_->holdings().state().objects.find(paths[index]);
            if (found != destination_->holdings().state().objects.end()) {
                packages.push_back({paths[index], found->second.checksum_type, found->second.digest,
                                    kUnknownSize});
                recorded.push_back(index);
                result[index] = true;
            }
        }
        for (const std::size_t missing : destination_->holdings().missing(packages)) {
            result[recorded[missing]] = false;
        }
        return result;
    }

    bool publishes(std::string_view text) override {
        return destination_->holdings().holds(std::string(kTreeinfoName),
                                              hash_bytes(ChecksumType::Sha256, text));
    }

    Result<DownloadReport> fetch(Downloader& downloader,
                                 const std::vector<DownloadRequest>& requests,
                                 ProgressSink* progress, const std::stop_token& stop) override {
        const std::stop_callback forward(stop, [this] { stop_.request_stop(); });
        std::vector<store::StagedFile> uploads;
        for (const DownloadRequest& request : requests) {
            uploads.push_back({request.destination.generic_string(), request.checksum_type,
                               request.expected_digest, nullptr, false});
        }
        DownloadReport total;
        for (std::size_t item = 0; item < requests.size(); ++item) {
            // Each file committed (uploaded, unlinked) as soon as it is complete, while the next
            // downloads.
            CommitOnFinish upload(progress,
                                  [&](std::size_t) { staging_->commit(item, uploads[item]); });
            DigestOnFinish digest(&upload, uploads[item]);
            auto downloaded =
                downloader.run(staging_->directory(), std::span(&requests[item], 1), &digest, stop);
            if (!downloaded) {
                (void)staging_->wait();
                return downloaded;
            }
            total.files.push_back(std::move(downloaded->files.at(0)));
            total.downloaded += downloaded->downloaded;
            total.already_present += downloaded->already_present;
            total.failed += downloaded->failed;
            total.not_finished += downloaded->not_finished;
            total.bytes_received += downloaded->bytes_received;
            total.resumed += downloaded->resumed;
            total.retries += downloaded->retries;
            total.interrupted = total.interrupted || downloaded->interrupted;
        }
        std::vector<store::PlacedFile> placed;
        for (store::Committed& done : staging_->wait()) {
            const store::StagedFile& upload = uploads[done.ticket];
            if (done.stored) {
                placed.push_back({upload.key,
                                  {done.stored->size, done.stored->version},
                                  upload.type,
                                  upload.digest});
                continue;
            }
            FileResult& file = total.files[done.ticket];
            if (file.status == FileStatus::Downloaded ||
                file.status == FileStatus::AlreadyPresent) {
                ++total.failed;
            }
            file.status = FileStatus::Failed;
            file.error = done.error ? std::move(*done.error)
                                    : Error{ErrorCode::Io, "not stored", upload.key};
        }
        if (auto recorded = destination_->store().record_placed(placed, {}, false); !recorded) {
            return tl::unexpected(std::move(recorded.error()));
        }
        return total;
    }

    Result<bool> publish(std::string_view text) override {
        // The ACL of kept images first (--s3-acl changed), then .treeinfo.
        if (auto ready = destination_->store().ready_packages(); !ready) {
            return tl::unexpected(std::move(ready.error()));
        }
        if (publishes(text)) {
            return false;
        }
        if (auto written = destination_->store().write_document(kTreeinfoName, text); !written) {
            return tl::unexpected(std::move(written.error()));
        }
        return true;
    }

    Result<std::vector<std::string>> collect(const std::set<std::string>& listed,
                                             std::vector<std::string>& warnings) override {
        std::vector<std::string> condemned;
        for (const auto& [key, stored] : destination_->holdings().state().objects) {
            if (key == kTreeinfoName || listed.contains(key)) {
                continue;
            }
            auto now = destination_->store().stat(key);
            if (!now) {
                forgotten_.clear();  // nothing removed: every record is kept
                return tl::unexpected(std::move(now.error()));
            }
            if (*now && (*now)->size == stored.size && (*now)->version == stored.etag) {
                condemned.push_back(key);
            } else if (*now) {
                warnings.push_back(destination_->store().describe(key) +
                                   ": nothing lists it any more, but it changed since rpmirror "
                                   "stored it: left in place");
            }
            forgotten_.insert(key);
        }
        return destination_->store().remove_files(condemned);
    }

    void save(std::vector<std::string>& warnings) override {
        store::SyncRecord record;
        for (const auto& [key, stored] : destination_->holdings().state().objects) {
            if (!forgotten_.contains(key)) {
                record.packages.push_back(key);
            }
        }
        if (auto recorded = destination_->store().record_sync(record, warnings); !recorded) {
            warnings.push_back(recorded.error().to_string());
        }
    }

  private:
    SyncOptions options_;  // the tree's, which destination_ refers to
    std::unique_ptr<S3Destination> destination_;
    std::stop_source stop_;                    // fetch()'s stop token, forwarded
    std::unique_ptr<store::Staging> staging_;  // destination_'s, destroyed before it
    std::set<std::string> forgotten_;  // collected, or changed by someone else: not recorded
};

}  // namespace

Result<std::unique_ptr<TreeFiles>> open_s3_tree_files(const SyncOptions& options,
                                                      std::string_view repo_id, RepoLock* lock,
                                                      std::vector<std::string>& warnings) {
    auto files = std::make_unique<S3TreeFiles>(options);
    if (auto opened = files->open(repo_id, lock, warnings); !opened) {
        return tl::unexpected(std::move(opened.error()));
    }
    return std::unique_ptr<TreeFiles>(std::move(files));
}

}  // namespace rpmirror
