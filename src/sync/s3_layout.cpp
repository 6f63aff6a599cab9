// --upstream-layout in a bucket (see sync/s3_sync.hpp): what the other releases beneath the layout
// root recorded, for the placement of the packages they share. The releases and the blobs'
// catalogue are the layout root's, written once for every store (sync/layout_root.hpp).
#include "sync/s3_sync.hpp"

namespace rpmirror {

void S3Destination::load_layout_records() {
    for (const auto& [key, object] : listing_) {
        if (!key.ends_with(s3::kStateKey) || key == s3::kStateKey ||
            (key.size() > s3::kStateKey.size() &&
             key[key.size() - s3::kStateKey.size() - 1] != '/')) {
            continue;
        }
        const s3::S3Location tree{location_.bucket,
                                  location_.key(key.substr(0, key.size() - s3::kStateKey.size()))};
        if (!tree.prefix.starts_with(root_prefix_)) {
            continue;  // a key with ".." segments of its own: no tree of the layout
        }
        auto state = s3::load_state(client_, tree);
        if (!state) {
            layout_unreadable_ = true;  // its blobs cannot be vouched for: none is replaced
            continue;
        }
        if (!*state) {
            continue;
        }
        // Shared only from a release whose packages were checked as this one's are; every
        // record counts for what a blob holds.
        const bool shareable = (*state)->signatures_checked == state_.signatures_checked;
        for (const auto& [relative, stored] : (*state)->objects) {
            const std::string full = tree.key(relative);
            if (!full.starts_with(root_prefix_)) {
                continue;
            }
            const std::string mine = s3::key_relative_to(location_, root_prefix_, full);
            const auto listed = listing_.find(mine);
            const bool current =
                listed != listing_.end() && s3::still_matches(stored, listed->second);
            auto [it, inserted] =
                layout_records_.try_emplace(mine, LayoutRecord{stored, shareable});
            // A record of the object as it is now wins over a stale one.
            if (!inserted && current &&
                !(listed != listing_.end() &&
                  s3::still_matches(it->second.object, listed->second))) {
                it->second = LayoutRecord{stored, shareable};
            }
        }
    }
}

}  // namespace rpmirror
