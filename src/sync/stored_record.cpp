// The record of what rpmirror stored beneath a root (sync/stored_record.hpp): a catalogue in the
// state directory on disk, a state object in a bucket.
#include "sync/stored_record.hpp"

#include <cinttypes>
#include <cstdio>

#include "rpmirror/plan/plan.hpp"
#include "s3/mirror_state.hpp"
#include "store/local_store.hpp"
#include "store/s3_store.hpp"

namespace rpmirror {

// Where the record is kept, and its format there.
class StoredRecord::Place {
  public:
    virtual ~Place() = default;
    virtual Result<void> load(StoredRecord& record) = 0;
    virtual Result<void> save(const StoredRecord& record) = 0;
    virtual std::shared_ptr<const CacheTrust> trust(const StoredRecord& record) const = 0;
};

namespace {

// A sync state in the state directory: sizes and times (the version's parts), no checksums.
class CataloguePlace final : public StoredRecord::Place {
  public:
    explicit CataloguePlace(std::filesystem::path path) : path_(std::move(path)) {}

    Result<void> load(StoredRecord& record) override {
        if (auto state = read_sync_state(path_)) {
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
        return write_sync_state(path_, state_of(record));
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

    std::filesystem::path path_;
};

// A state object of the root's prefix: sizes, ETags, checksums and the ACL.
class StateObjectPlace final : public StoredRecord::Place {
  public:
    StateObjectPlace(s3::S3Client& client, s3::S3Location root, std::string key)
        : client_(client), root_(std::move(root)), key_(std::move(key)) {}

    Result<void> load(StoredRecord& record) override {
        auto state = s3::load_state(client_, root_, key_);
        if (!state) {
            return tl::unexpected(std::move(state.error()));
        }
        record.acl_for_place(*state ? (*state)->acl : std::string());
        if (*state) {
            for (const auto& [key, object] : (*state)->objects) {
                record.files()[key] =
                    StoredEntry{object.size, object.etag, object.checksum_type, object.digest};
            }
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
        return s3::store_state(client_, root_, state, key_);
    }

    std::shared_ptr<const CacheTrust> trust(const StoredRecord&) const override {
        return std::make_shared<CacheTrust>();
    }

  private:
    s3::S3Client& client_;
    s3::S3Location root_;
    std::string key_;
};

}  // namespace

Result<StoredRecord> StoredRecord::load(store::MirrorStore& root, const RecordName& name) {
    struct Kinds final : store::MirrorKinds {
        explicit Kinds(const RecordName& name) : name(name) {}
        void local(store::LocalStore& store) override {
            place = std::make_unique<CataloguePlace>(
                sync_state_path(store.state_dir(), store.root() / name.catalogue));
        }
        void bucket(store::S3Store& store) override {
            place = std::make_unique<StateObjectPlace>(store.client(), store.location(),
                                                       name.state_key);
        }
        const RecordName& name;
        std::unique_ptr<Place> place;
    } kinds(name);
    root.visit(kinds);
    StoredRecord record;
    record.place_ = std::move(kinds.place);
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
