// An installation tree's own files (sync/tree_files.hpp), over the tree's ObjectStore: verified
// against the record (or hashed), fetched into the store's staging area (ObjectStore::stage: in
// place on disk, all at once; a bucket's spool, one at a time) and committed durably, recorded,
// and .treeinfo committed last.
#include "sync/tree_files.hpp"

#include <algorithm>

#include "checksum/hasher.hpp"
#include "fs/durable.hpp"
#include "fs/tree.hpp"
#include "metadata/treeinfo.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "s3/mirror_state.hpp"
#include "sync/events.hpp"
#include "util/text.hpp"

namespace rpmirror {

namespace {

// Tells `inner` of request i of a batch as request `items[i]` of the whole.
class ManyOfMany final : public ForwardingSink {
  public:
    ManyOfMany(ProgressSink* inner, std::span<const std::size_t> items)
        : ForwardingSink(inner), items_(items) {}

    void file_started(std::size_t index, std::string_view url) override {
        ForwardingSink::file_started(items_[index], url);
    }
    void file_finished(std::size_t index, const FileResult& result) override {
        ForwardingSink::file_finished(items_[index], result);
    }

  private:
    std::span<const std::size_t> items_;
};

bool stored(FileStatus status) {
    return status == FileStatus::Downloaded || status == FileStatus::AlreadyPresent;
}

}  // namespace

Result<std::unique_ptr<TreeFiles>> TreeFiles::open(const std::filesystem::path& root,
                                                   const SyncOptions& options, RepoLock* lock,
                                                   std::stop_token stop) {
    auto opened = store::MirrorRoot::open(root.native(), {state_directory(options), options.s3});
    if (!opened) {
        return tl::unexpected(std::move(opened.error()));
    }
    auto record = StoredRecord::load(*opened->repository(""), {std::string(kTreeImagesCatalogue),
                                                               std::string(s3::kTreeStateKey)});
    if (!record) {
        return tl::unexpected(std::move(record.error()));
    }
    return std::make_unique<TreeFiles>(Key{}, std::move(*opened), std::move(*record), options, lock,
                                       std::move(stop));
}

TreeFiles::TreeFiles(Key /*only open()*/, store::MirrorRoot root, StoredRecord record,
                     const SyncOptions& options, RepoLock* lock, std::stop_token stop)
    : root_(std::move(root)),
      objects_(root_.objects()),
      record_(std::move(record)),
      options_(options),
      lock_(lock),
      stop_(std::move(stop)) {
    // Files stored with another ACL than --s3-acl's are stored again (with it).
    if (record_.acl() && *record_.acl() != options_.s3_acl) {
        record_.files().clear();
        record_.set_acl(options_.s3_acl);
        changed_ = true;
    }
}

TreeFiles::~TreeFiles() {
    if (spool_) {
        (void)fs::remove_tree(spool_->dir);
    }
}

Result<std::filesystem::path> TreeFiles::scratch() {
    if (!spool_) {
        auto spool = store::create_s3_spool(options_.s3_spool_dir, options_.s3_spool_size);
        if (!spool) {
            return tl::unexpected(std::move(spool.error()));
        }
        if (spool->warning) {
            warnings_.push_back(*spool->warning);
        }
        spool_ = std::move(*spool);
    }
    return spool_->dir;
}

std::vector<bool> TreeFiles::held(std::span<const TreeInfo::File> files) {
    std::vector<bool> result(files.size(), false);
    // What the record cannot answer is hashed: its local file (a copy in the spool for a
    // bucket), its cached checksum believed while the record vouches for it.
    std::vector<VerifyRequest> checks;
    std::vector<std::size_t> checked;
    for (std::size_t index = 0; index < files.size(); ++index) {
        const TreeInfo::File& file = files[index];
        auto now = objects_.stat(file.path);
        if (!now || !*now) {
            continue;
        }
        const auto recorded = record_.files().find(file.path);
        if (recorded != record_.files().end() && recorded->second.still(**now) &&
            !recorded->second.digest.empty() && recorded->second.type == file.type) {
            result[index] = recorded->second.digest == file.digest;
            continue;
        }
        auto where = scratch();
        auto local = where ? objects_.local_copy(file.path, *where)
                           : Result<std::filesystem::path>(tl::unexpected(where.error()));
        if (local) {
            checks.push_back({*local, file.type, file.digest, std::nullopt});
            checked.push_back(index);
        }
    }
    VerifyOptions verify_options;
    verify_options.hash.use_cache = options_.use_checksum_cache;
    verify_options.hash.trust = record_.trust();
    verify_options.hash.stop = stop_;
    const std::vector<VerifyResult> verified = verify_files(checks, verify_options);
    for (std::size_t position = 0; position < verified.size(); ++position) {
        result[checked[position]] = verified[position].status == VerifyStatus::Ok;
    }
    return result;
}

std::vector<bool> TreeFiles::held_as_stored(std::span<const std::string> paths) {
    std::vector<bool> result;
    for (const std::string& path : paths) {
        const auto recorded = record_.files().find(path);
        auto now = objects_.stat(path);
        result.push_back(recorded != record_.files().end() && now && *now &&
                         recorded->second.still(**now));
    }
    return result;
}

bool TreeFiles::publishes(std::string_view text) {
    auto current = objects_.read(kTreeinfoName);
    return current && *current == text;
}

Result<void> TreeFiles::record(const std::string& key, ChecksumType type, std::string digest) {
    auto now = objects_.stat(key);
    if (!now) {
        return tl::unexpected(std::move(now.error()));
    }
    if (!*now) {
        return make_error(ErrorCode::NotFound, "gone just after it was stored",
                          objects_.describe(key));
    }
    record_.files()[key] = StoredEntry{(*now)->size, (*now)->version, type, std::move(digest)};
    changed_ = true;
    return {};
}

store::StageOptions TreeFiles::stage_options(const std::stop_token& stop) const {
    store::StageOptions stage;
    stage.spool_dir = options_.s3_spool_dir;
    stage.capacity = options_.s3_spool_size;
    stage.parallel = 1;
    stage.part_size = options_.s3_part_size;
    stage.acl = options_.s3_acl;
    stage.stop = stop;
    stage.durable = true;  // .treeinfo vouches for the images once published
    return stage;
}

Result<std::unique_ptr<store::Staging>> TreeFiles::stage(const std::stop_token& stop) {
    auto staging = objects_.stage(stage_options(stop));
    if (!staging) {
        return tl::unexpected(std::move(staging.error()));
    }
    if ((*staging)->warning() &&
        std::find(warnings_.begin(), warnings_.end(), *(*staging)->warning()) == warnings_.end()) {
        warnings_.push_back(*(*staging)->warning());
    }
    return staging;
}

Result<DownloadReport> TreeFiles::fetch(Downloader& downloader,
                                        const std::vector<DownloadRequest>& requests,
                                        ProgressSink* progress, const std::stop_token& stop) {
    auto staging = stage(stop);
    if (!staging) {
        return tl::unexpected(std::move(staging.error()));
    }
    const std::vector<std::filesystem::path> roots{(*staging)->directory()};
    DownloadReport total;
    total.files.resize(requests.size());
    const auto run = [&](std::span<const std::size_t> items) -> Result<void> {
        std::vector<DownloadRequest> batch;
        for (const std::size_t item : items) {
            batch.push_back(requests[item]);
            batch.back().root_index = 0;
        }
        ManyOfMany sink(progress, items);
        auto downloaded = downloader.run(roots, batch, &sink, stop);
        if (!downloaded) {
            return tl::unexpected(std::move(downloaded.error()));
        }
        total.add(std::move(*downloaded), items);
        commit(**staging, requests, items, total);
        return {};
    };
    // Made in place (on disk: no spool), every file is fetched in one batch, as many at once as
    // the downloader runs; through a bucket's spool one at a time, since an image can be
    // gigabytes.
    std::vector<std::size_t> all(requests.size());
    for (std::size_t item = 0; item < all.size(); ++item) {
        all[item] = item;
    }
    if ((*staging)->in_place()) {
        if (auto ran = run(all); !ran) {
            return tl::unexpected(std::move(ran.error()));
        }
        return total;
    }
    for (const std::size_t item : all) {
        if (auto ran = run(std::span(&item, 1)); !ran) {
            return tl::unexpected(std::move(ran.error()));
        }
    }
    return total;
}

void TreeFiles::commit(store::Staging& staging, const std::vector<DownloadRequest>& requests,
                       std::span<const std::size_t> items, DownloadReport& total) {
    const auto fail = [&](std::size_t item, Error error) {
        ++total.failed;
        total.files[item].status = FileStatus::Failed;
        total.files[item].error = std::move(error);
    };
    std::vector<std::string> digests(requests.size());
    for (const std::size_t item : items) {
        const FileResult& result = total.files[item];
        if (!stored(result.status)) {
            continue;
        }
        const DownloadRequest& request = requests[item];
        // An image .treeinfo names without a checksum keeps the digest its bytes arrived with.
        digests[item] = text::to_lower(request.expected_digest.empty() ? result.digest
                                                                       : request.expected_digest);
        if (lock_ != nullptr) {
            if (auto confirmed = lock_->confirm(); !confirmed) {
                fail(item, std::move(confirmed.error()));
                continue;
            }
        }
        staging.commit(item, {request.destination.generic_string(), request.checksum_type,
                              digests[item], nullptr, false});
    }
    for (store::Committed& done : staging.wait()) {
        const DownloadRequest& request = requests[done.ticket];
        Result<void> kept = done.error ? tl::unexpected(std::move(*done.error)) : Result<void>{};
        if (kept) {
            kept = record(request.destination.generic_string(), request.checksum_type,
                          std::move(digests[done.ticket]));
        }
        if (!kept) {
            fail(done.ticket, std::move(kept.error()));
        }
    }
}

Result<bool> TreeFiles::publish(std::string_view text) {
    const std::string key(kTreeinfoName);
    const std::string digest = hash_bytes(ChecksumType::Sha256, text);
    if (publishes(text)) {
        const auto recorded = record_.files().find(key);
        if (recorded == record_.files().end() || recorded->second.digest != digest) {
            if (auto kept = record(key, ChecksumType::Sha256, digest); !kept) {
                return tl::unexpected(std::move(kept.error()));
            }
        }
        return false;
    }
    auto staging = stage(stop_);
    if (!staging) {
        return tl::unexpected(std::move(staging.error()));
    }
    if (lock_ != nullptr) {
        if (auto confirmed = lock_->confirm(); !confirmed) {
            return tl::unexpected(std::move(confirmed.error()));
        }
    }
    // Made as a downloader makes a file (replaced at once: in place on disk), then committed.
    const std::filesystem::path made = (*staging)->directory() / key;
    if (auto dir = fs::make_directories(made.parent_path(), "the tree's directory"); !dir) {
        return tl::unexpected(std::move(dir.error()));
    }
    if (auto written = fs::replace_file(made, text); !written) {
        return tl::unexpected(std::move(written.error()));
    }
    (*staging)->commit(0, {key, ChecksumType::Sha256, digest, nullptr, false});
    for (store::Committed& done : (*staging)->wait()) {
        if (done.error) {
            return tl::unexpected(std::move(*done.error));
        }
    }
    if (auto kept = record(key, ChecksumType::Sha256, digest); !kept) {
        return tl::unexpected(std::move(kept.error()));
    }
    return true;
}

Result<std::vector<std::string>> TreeFiles::collect(const std::set<std::string>& listed,
                                                    std::vector<std::string>& warnings) {
    std::set<std::string> kept = listed;
    kept.insert(std::string(kTreeinfoName));
    const std::size_t before = record_.files().size();
    auto removed = collect_unlisted(objects_, record_, kept, warnings);
    changed_ = changed_ || record_.files().size() != before;
    return removed;
}

void TreeFiles::save(std::vector<std::string>& warnings) {
    warnings.insert(warnings.end(), warnings_.begin(), warnings_.end());
    warnings_.clear();
    if (!changed_) {
        return;
    }
    changed_ = false;
    if (auto saved = record_.save(lock_); !saved) {
        warnings.push_back(saved.error().to_string());
    }
}

}  // namespace rpmirror
