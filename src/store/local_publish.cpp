// A local mirror's end of a sync (see store/mirror_store.hpp): comps.xml, the packages flushed,
// the staged repodata/ swapped in, the state file written.
#include <fcntl.h>
#include <sys/stat.h>

#include <array>

#include "fs/beneath.hpp"
#include "fs/durable.hpp"
#include "store/local_store.hpp"
#include "store/object_store.hpp"

namespace rpmirror::store {

Result<void> LocalStore::write_document(std::string_view key, std::string_view content) {
    // A key may climb out of the repository ("../", as --mirror-url's list does toward the
    // layout's root): written beneath the directory it climbs to, through the disk store, which
    // never follows a symlink below it (nothing is written outside that tree).
    std::filesystem::path base = root_of(key);
    std::string_view rest = key;
    while (rest.starts_with("../")) {
        base = base.parent_path();
        rest.remove_prefix(3);
    }
    const std::unique_ptr<ObjectStore> objects = disk_object_store(base);
    if (auto current = objects->read(rest); current && *current == content) {
        return {};  // as this run would write it: not written again
    }
    return objects->put(rest, content);
}

Result<void> LocalStore::ready_packages() {
    // stage.publish() flushes the metadata's filesystem; packages may be on others
    // (--metadata-path, --safe-write-path). One syncfs per filesystem, however many of the roots
    // it holds.
    if (!durable_) {
        return {};
    }
    std::vector<std::filesystem::path> roots{root_};
    roots.insert(roots.end(), package_roots_.begin(), package_roots_.end());
    return fs::flush_filesystems(roots);
}

Result<void> LocalStore::publish_metadata(const MetadataRelease& release) {
    MetadataStage& stage = *release.stage;
    const std::filesystem::path index = stage.dir() / "repomd.xml";
    if (auto written = fs::write_file(index, release.repomd_xml); !written) {
        return written;
    }
    if (release.repomd_time >= 0) {
        // --remote-time: repomd.xml too gets the server's time, as dnf's records do.
        const std::array<timespec, 2> times{timespec{release.repomd_time, 0},
                                            timespec{release.repomd_time, 0}};
        if (::utimensat(AT_FDCWD, index.c_str(), times.data(), 0) != 0) {
            return make_errno_error("cannot set the time of", index.string(), errno);
        }
    }
    if (release.signature) {
        if (auto written = fs::write_file(stage.dir() / "repomd.xml.asc", *release.signature);
            !written) {
            return written;
        }
    }
    // The swap's order (fs/swap.hpp) keeps the contract where directories cannot be exchanged.
    return stage.publish(durable_);
}

Result<void> LocalStore::record_sync(const SyncRecord& record, std::vector<std::string>& warnings) {
    trust_.reset();  // the state changes: what it vouches for is read again
    SyncState state{record.repomd_sha256, record.fingerprint, {}};
    state.selection = record.selection;
    state.published_repomd_sha256 = record.published_repomd_sha256;
    state.publishing = record.publishing;
    for (const std::string& key : record.packages) {
        if (auto file = stat_for_state(root_, key)) {
            state.files.push_back(std::move(*file));
        }
    }
    for (const std::string& key : record.metadata) {
        if (auto file = stat_for_state(root_of(key), key)) {
            state.metadata_files.push_back(std::move(*file));
        }
    }
    if (auto written = write_sync_state(sync_state_path(state_dir_, root_), state); !written) {
        warnings.push_back(written.error().to_string());
    }
    // Older versions kept the state inside the mirror, where dnf reposync leaves nothing.
    (void)fs::remove_beneath(root_, std::string(kLegacyStateFileName), false);
    return {};
}

void LocalStore::tidy() {
    // A run killed between publishing and removing the previous metadata (now under a staging
    // name) left it behind; nothing else would remove it.
    remove_stale_stages(metadata_root_);
}

}  // namespace rpmirror::store
