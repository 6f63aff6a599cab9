// The record of what rpmirror stored beneath a root (sync/stored_record.hpp), kept where the
// root's store keeps its records (store::MirrorStore::record_of).
#include "sync/stored_record.hpp"

#include <cinttypes>
#include <cstdio>

#include "checksum/hasher.hpp"
#include "plan/plan.hpp"
#include "s3/mirror_state.hpp"
#include "store/local_store.hpp"  // a local file's version, which a sync state records in parts

namespace rpmirror {

// Where the record is kept, and its format there.
class StoredRecord::Place {
  public:
    explicit Place(store::RecordPlace place) : place_(std::move(place)) {}
    virtual ~Place() = default;
    virtual Result<void> load(StoredRecord& record) = 0;
    virtual Result<void> save(const StoredRecord& record) = 0;
    virtual std::shared_ptr<const CacheTrust> trust(const StoredRecord& record) const = 0;

  protected:
    // The record's text; nullopt iff there is none. The store's error.
    Result<std::optional<std::string>> text() {
        auto text = place_.objects->read(place_.key);
        if (!text) {
            if (text.error().code == ErrorCode::NotFound) {
                return std::optional<std::string>();
            }
            return tl::unexpected(std::move(text.error()));
        }
        return std::optional<std::string>(std::move(*text));
    }

    Result<void> write(std::string_view text) { return place_.objects->put(place_.key, text); }

  private:
    store::RecordPlace place_;
};

namespace {

// A record kept apart from the files (a directory's, in the state directory): a sync state
// (plan/plan.hpp) of its own, sizes and the local versions' parts, no checksums; the
// checksum cache's trust of the state directory reads it too (cache_trust_of).
class SyncStatePlace final : public StoredRecord::Place {
  public:
    using Place::Place;

    Result<void> load(StoredRecord& record) override {
        auto text = this->text();
        if (!text || !*text) {
            return {};  // missing or unreadable: nothing vouched for (a bad one costs reads)
        }
        if (auto state = parse_sync_state(**text)) {
            for (const SyncStateFile& file : state->files) {
                record.files()[file.relative_path.generic_string()] = StoredEntry{
                    file.size,
                    store::LocalStore::version_of(file.mtime_ns, file.inode, file.ctime_ns),
                    ChecksumType::Sha256,
                    {}};
            }
        }
        return {};
    }

    Result<void> save(const StoredRecord& record) override {
        return write(sync_state_text(state_of(record)));
    }

    std::shared_ptr<const CacheTrust> trust(const StoredRecord& record) const override {
        auto trust = std::make_shared<CacheTrust>();
        vouch_for_state(*trust, state_of(record));
        return trust;
    }

  private:
    // The record as a sync state (a version that is not a local file's is left out).
    static SyncState state_of(const StoredRecord& record) {
        SyncState state;
        for (const auto& [key, entry] : record.files()) {
            SyncStateFile file;
            file.relative_path = key;
            file.size = entry.size;
            if (std::sscanf(entry.version.c_str(), "%" SCNd64 " %" SCNu64 " %" SCNd64,
                            &file.mtime_ns, &file.inode, &file.ctime_ns) == 3) {
                state.files.push_back(std::move(file));
            }
        }
        return state;
    }
};

// A record beside the files (a bucket's, in its prefix's .rpmirror/): a state object
// (s3/mirror_state.hpp) with sizes, versions (ETags), checksums and the ACL.
class StateObjectPlace final : public StoredRecord::Place {
  public:
    using Place::Place;

    Result<void> load(StoredRecord& record) override {
        auto text = this->text();
        if (!text) {
            return tl::unexpected(std::move(text.error()));
        }
        auto state = *text ? s3::parse_state(**text, "") : Result<s3::MirrorState>();
        if (!*text || !state) {
            record.acl_for_place({});  // none, or one that does not parse: nothing vouched for
            return {};
        }
        record.acl_for_place(state->acl);
        for (const auto& [key, object] : state->objects) {
            record.files()[key] =
                StoredEntry{object.size, object.etag, object.checksum_type, object.digest};
        }
        return {};
    }

    Result<void> save(const StoredRecord& record) override {
        s3::MirrorState state;
        state.acl = record.acl().value_or("");
        for (const auto& [key, entry] : record.files()) {
            state.objects[key] =
                s3::StoredObject{entry.size, entry.version, entry.type, entry.digest};
        }
        return write(s3::to_json(state));
    }

    std::shared_ptr<const CacheTrust> trust(const StoredRecord&) const override {
        return std::make_shared<CacheTrust>();
    }
};

}  // namespace

Result<StoredRecord> StoredRecord::load(store::MirrorStore& root, const RecordName& name) {
    store::RecordPlace place = root.record_of("", store::name_of(name.state_key));
    StoredRecord record;
    if (place.apart) {
        // Where a directory's catalogue has always been: the sync state of the root's
        // `<catalogue>` (the entry beneath the root named so, + ".json").
        record.place_ = std::make_unique<SyncStatePlace>(root.record_of(name.catalogue, "json"));
    } else {
        record.place_ = std::make_unique<StateObjectPlace>(std::move(place));
    }
    if (auto loaded = record.place_->load(record); !loaded) {
        return tl::unexpected(std::move(loaded.error()));
    }
    return record;
}

StoredRecord::StoredRecord(StoredRecord&&) noexcept = default;
StoredRecord& StoredRecord::operator=(StoredRecord&&) noexcept = default;
StoredRecord::~StoredRecord() = default;

std::shared_ptr<const CacheTrust> StoredRecord::trust() const {
    return place_->trust(*this);
}

Result<void> StoredRecord::save(RepoLock* lock) const {
    if (lock != nullptr) {
        if (auto confirmed = lock->confirm(); !confirmed) {
            return confirmed;
        }
    }
    return place_->save(*this);
}

Result<std::vector<std::string>> collect_unlisted(store::ObjectStore& store, StoredRecord& record,
                                                  const std::set<std::string>& listed,
                                                  std::vector<std::string>& warnings) {
    std::vector<std::string> condemned;
    std::vector<std::string> forgotten;
    for (const auto& [key, entry] : record.files()) {
        if (listed.contains(key)) {
            continue;
        }
        auto now = store.stat(key);
        if (!now) {
            return tl::unexpected(std::move(now.error()));
        }
        if (*now && entry.still(**now)) {
            condemned.push_back(key);
        } else if (*now) {
            warnings.push_back(store.describe(key) +
                               ": nothing lists it any more, but it changed since rpmirror "
                               "stored it: left in place");
        }
        forgotten.push_back(key);
    }
    if (auto removed = store.remove(condemned); !removed) {
        return tl::unexpected(std::move(removed.error()));
    }
    for (const std::string& key : forgotten) {
        record.files().erase(key);
    }
    return condemned;
}

}  // namespace rpmirror
