// snapshot_held_keys: which keys of the live mirror the kept snapshots hold (rpmirror/snapshot/
// snapshot.hpp), for `rpmirror serve`'s cache-max-size, which never removes those.
#include <string>
#include <unordered_set>

#include "rpmirror/snapshot/snapshot.hpp"
#include "snapshot/backend.hpp"

namespace rpmirror {

namespace snapshot {

Result<std::unordered_set<std::string>> Backend::held_keys() {
    std::unordered_set<std::string> keys;
    auto names = this->names();
    if (!names) {
        return tl::unexpected(std::move(names.error()));
    }
    for (const std::string& name : *names) {
        const std::string key = snapshot_key(name);
        auto listing = store_->list(key);
        if (!listing) {
            return tl::unexpected(std::move(listing.error()));
        }
        const std::string prefix = key + "/";
        for (const auto& entry : *listing) {
            const std::string& file = entry.first;
            if (!file.starts_with(prefix) || file.compare(prefix.size(), 10, ".rpmirror/") == 0) {
                continue;  // the store's own
            }
            keys.insert(file.substr(prefix.size()));
        }
    }
    return keys;
}

}  // namespace snapshot

Result<std::unordered_set<std::string>> snapshot_held_keys(const SnapshotRoot& root) {
    auto backend = snapshot::open_backend(root);
    if (!backend) {
        return tl::unexpected(std::move(backend.error()));
    }
    return (*backend)->held_keys();
}

}  // namespace rpmirror
