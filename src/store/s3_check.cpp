// A mirror in an S3 bucket: reading and checking its objects, its state and its lease (see
// store/s3_store.hpp).
#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>

#include "checksum/hasher.hpp"
#include "plan/selection_json.hpp"
#include "s3/lease.hpp"
#include "store/s3_store.hpp"
#include "util/parallel.hpp"
#include "util/text.hpp"

namespace rpmirror::store {

namespace {

class HeldLease final : public RepoLock {
  public:
    explicit HeldLease(s3::Lease lease) : lease_(std::move(lease)) {}
    Result<void> confirm() override { return lease_.confirm(); }
    std::vector<std::string> warnings() const override { return lease_.warnings(); }
    // Its renewals (the acquisition counts on the store's client).
    std::uint64_t requests() const override { return lease_.requests(); }

  private:
    s3::Lease lease_;
};

}  // namespace

Result<const s3::MirrorState*> S3Store::state() {
    if (sync_) {
        return sync_->state;
    }
    if (!state_) {
        auto loaded = s3::load_state(client_, repo_);
        if (!loaded) {
            return tl::unexpected(std::move(loaded.error()));
        }
        state_ = std::move(*loaded);
    }
    return *state_ ? &**state_ : nullptr;
}

Result<std::string> S3Store::read(std::string_view key) {
    return client_.get_object(repo_.bucket, repo_.key(key));
}

Result<std::filesystem::path> S3Store::local_copy(std::string_view key,
                                                  const std::filesystem::path& scratch) {
    const std::filesystem::path local = scratch / key;
    if (auto got = s3::get_object_to_file(client_, repo_, key, local); !got) {
        return tl::unexpected(std::move(got.error()));
    }
    return local;
}

Result<bool> S3Store::holds_below(std::string_view key) {
    auto objects = listing();
    if (!objects) {
        return tl::unexpected(std::move(objects.error()));
    }
    const std::string prefix = std::string(key) + "/";
    const auto found = (*objects)->lower_bound(prefix);
    return found != (*objects)->end() && found->first.starts_with(prefix);
}

std::vector<CheckedFile> S3Store::check_files(std::span<const ExpectedFile> files,
                                              const CheckOptions& options) {
    std::vector<CheckedFile> checked(files.size());
    auto objects = listing();
    if (!objects) {
        for (CheckedFile& out : checked) {
            out.finding = Finding::Unreadable;
            out.detail = objects.error().to_string();
        }
        return checked;
    }
    const s3::MirrorState* recorded = nullptr;
    if (options.use_cache) {
        if (auto loaded = state(); loaded) {
            recorded = *loaded;
        }  // an unreadable state only costs reads
    }
    std::vector<std::size_t> small;
    std::vector<std::size_t> large;
    for (std::size_t index = 0; index < files.size(); ++index) {
        const ExpectedFile& file = files[index];
        CheckedFile& out = checked[index];
        const auto found = (*objects)->find(file.key);
        if (found == (*objects)->end()) {
            out.finding = Finding::Missing;
            continue;
        }
        out.actual_size = found->second.size;
        out.version = found->second.etag;  // what is read is pinned to it, or was recorded with it
        if (file.size && *file.size != found->second.size) {
            out.finding = Finding::SizeMismatch;
            continue;
        }
        if (recorded != nullptr) {
            const auto stored = recorded->objects.find(file.key);
            if (stored != recorded->objects.end() &&
                s3::still_matches(stored->second, found->second) &&
                stored->second.checksum_type == file.type &&
                text::to_lower(stored->second.digest) == file.digest) {
                out.from_cache = true;
                continue;
            }
        }
        (found->second.size > ranged_threshold_ ? large : small).push_back(index);
    }
    // Small objects `threads` at once, each worker with a client of its own.
    std::vector<Result<std::string>> digests(small.size(), Result<std::string>(std::string()));
    std::vector<std::uint64_t> sizes(small.size(), 0);
    std::atomic<std::uint64_t> worker_requests{0};
    for_each_index_in_parallel(small.size(), options.threads, [&] {
        return [&, client = std::make_shared<s3::S3Client>(client_.config())](std::size_t slot) {
            const std::uint64_t before = client->request_count();
            const ExpectedFile& file = files[small[slot]];
            digests[slot] = hash_whole(*client, file, (*objects)->at(file.key).etag, sizes[slot]);
            worker_requests.fetch_add(client->request_count() - before);
        };
    });
    worker_requests_ += worker_requests.load();
    const auto judge = [&](std::size_t index, Result<std::string> digest, std::uint64_t size) {
        CheckedFile& out = checked[index];
        if (!digest) {
            out.finding =
                digest.error().code == ErrorCode::NotFound ? Finding::Missing : Finding::Unreadable;
            out.detail = digest.error().to_string();
            return;
        }
        out.bytes_read = size;
        out.actual_size = size;
        if (*digest != files[index].digest) {
            out.finding = Finding::DigestMismatch;
            out.actual_digest = std::move(*digest);
        }
    };
    for (std::size_t slot = 0; slot < small.size(); ++slot) {
        judge(small[slot], std::move(digests[slot]), sizes[slot]);
    }
    for (const std::size_t index : large) {
        const s3::ListedObject& listed = (*objects)->at(files[index].key);
        judge(index, hash_ranged(files[index], listed, options.threads), listed.size);
    }
    return checked;
}

Result<std::string> S3Store::hash_whole(s3::S3Client& client, const ExpectedFile& file,
                                        std::string_view etag, std::uint64_t& size) const {
    Hasher hasher(file.type);
    size = 0;
    auto got = client.get_object(
        repo_.bucket, repo_.key(file.key),
        [&](std::span<const char> bytes) -> Result<void> {
            hasher.update(bytes.data(), bytes.size());
            size += bytes.size();
            return {};
        },
        std::nullopt, etag);
    if (!got) {
        return tl::unexpected(std::move(got.error()));
    }
    return hasher.finish();
}

// Every range is pinned to the listed ETag (If-Match): an object replaced while it is read is an
// error, never a digest of a mix.
Result<std::string> S3Store::hash_ranged(const ExpectedFile& file, const s3::ListedObject& listed,
                                         unsigned threads) {
    const std::uint64_t size = listed.size;
    const std::uint64_t range_size = std::max<std::uint64_t>(range_size_, 1);
    const std::uint64_t range_count = (size + range_size - 1) / range_size;
    const unsigned workers = effective_worker_count(threads, range_count);
    std::vector<s3::S3Client> clients;
    clients.reserve(workers);
    for (unsigned worker = 0; worker < workers; ++worker) {
        clients.emplace_back(client_.config());
    }
    const auto count_requests = [&] {
        for (const s3::S3Client& client : clients) {
            worker_requests_ += client.request_count();
        }
    };
    Hasher hasher(file.type);
    for (std::uint64_t first = 0; first < range_count; first += workers) {
        const std::uint64_t batch = std::min<std::uint64_t>(workers, range_count - first);
        std::vector<Result<std::string>> bodies(batch, Result<std::string>(std::string()));
        {
            std::vector<std::jthread> running;
            for (std::uint64_t slot = 0; slot < batch; ++slot) {
                running.emplace_back([&, slot] {
                    const std::uint64_t offset = (first + slot) * range_size;
                    bodies[slot] = clients[slot].get_object(
                        repo_.bucket, repo_.key(file.key),
                        s3::ByteRange{offset, std::min(range_size, size - offset)}, listed.etag);
                });
            }
        }  // joined
        for (Result<std::string>& body : bodies) {
            if (!body) {
                count_requests();
                if (body.error().code == ErrorCode::Busy) {
                    return make_error(ErrorCode::Busy,
                                      "replaced while it was being read (its ETag is no longer " +
                                          listed.etag + "); not judged: verify again",
                                      describe(file.key));
                }
                return tl::unexpected(std::move(body.error()));
            }
            hasher.update(body->data(), body->size());
        }
    }
    count_requests();
    return hasher.finish();
}

Result<std::unique_ptr<MirrorStore>> S3Store::beside(const std::filesystem::path& root) {
    return make_error(
        ErrorCode::BadInput,
        "a mirror in a bucket has no files outside its prefix (" + root.string() + ")",
        describe(""));
}

RecordPlace S3Store::record_of(std::string_view below, std::string_view name) {
    return {s3_object_store(client_.config(), repo_), record_key(below, name), /*apart=*/false};
}

std::string S3Store::record_place() const {
    return "the state object " + std::string(s3::kStateKey);
}

Result<RecordedSync> S3Store::recorded() {
    auto loaded = state();
    if (!loaded) {
        return tl::unexpected(std::move(loaded.error()));
    }
    RecordedSync recorded;
    if (*loaded == nullptr) {
        return recorded;
    }
    const s3::MirrorState& state = **loaded;
    recorded.exists = true;
    if (!state.selection.empty()) {
        recorded.selection = selection_from_text(state.selection);
    }
    recorded.publishing = publishing_from_text(state.publishing);
    recorded.acl = state.acl;
    recorded.repomd_sha256 = state.repomd_sha256;
    recorded.fingerprint = state.fingerprint;
    if (const auto published = state.objects.find(std::string(kIndexKey));
        published != state.objects.end() &&
        published->second.checksum_type == ChecksumType::Sha256 &&
        text::to_lower(published->second.digest) != state.repomd_sha256) {
        recorded.published_repomd_sha256 = text::to_lower(published->second.digest);
    }
    Listing versions;
    bool every_version = true;
    for (const auto& [key, object] : state.objects) {
        recorded.files.push_back(
            {key, object.checksum_type, text::to_lower(object.digest), object.size});
        if (is_package_key(key)) {
            recorded.packages.push_back(key);
        }
        every_version = every_version && !object.etag.empty();
        versions.emplace(key, StoredFile{object.size, object.etag});
    }
    if (every_version) {
        recorded.versions = std::move(versions);
    }
    return recorded;
}

Result<void> S3Store::forget(const std::set<std::string>& keys) {
    auto loaded = s3::load_state(client_, repo_);  // the latest, not a cached one
    if (!loaded) {
        return tl::unexpected(std::move(loaded.error()));
    }
    if (!*loaded) {
        return {};
    }
    s3::MirrorState updated = std::move(**loaded);
    for (const std::string& key : keys) {
        updated.objects.erase(key);
    }
    updated.repomd_sha256.clear();
    if (auto stored = s3::store_state(client_, repo_, updated); !stored) {
        return stored;
    }
    state_.reset();
    return {};
}

Result<std::vector<std::string>> S3Store::remove_files(std::span<const std::string> keys) {
    auto objects = listing();
    if (!objects) {
        return tl::unexpected(std::move(objects.error()));
    }
    std::vector<std::string> removed;
    std::vector<std::string> full_keys;
    for (const std::string& key : keys) {
        if ((*objects)->contains(key)) {
            removed.push_back(key);
            full_keys.push_back(repo_.key(key));
        }
    }
    if (!full_keys.empty()) {
        if (auto deleted = client_.delete_objects(repo_.bucket, full_keys); !deleted) {
            return tl::unexpected(std::move(deleted.error()));
        }
    }
    for (const std::string& key : removed) {
        if (own_) {
            own_->erase(key);
        }
        if (sync_) {
            sync_->listing->erase(key);
            sync_->state->objects.erase(key);
        }
    }
    return removed;
}

Result<std::unique_ptr<RepoLock>> S3Store::lock(std::optional<std::chrono::seconds> wait,
                                                std::stop_token stop) {
    auto lease = s3::Lease::acquire(client_, repo_, s3::default_lease_owner(),
                                    client_.config().lease_ttl, wait, std::move(stop));
    if (!lease) {
        return tl::unexpected(std::move(lease.error()));
    }
    lease->keep_alive();
    return std::unique_ptr<RepoLock>(std::make_unique<HeldLease>(std::move(*lease)));
}

Result<std::unique_ptr<RepoLock>> S3Store::lock_present(std::optional<std::chrono::seconds> wait) {
    return lock(wait, {});  // a lease creates nothing a reader must not
}

std::uint64_t S3Store::requests() const {
    return client_.request_count() + worker_requests_;
}

}  // namespace rpmirror::store
