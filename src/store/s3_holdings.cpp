// What a bucket holds for a repository's sync (see store/s3_holdings.hpp).
#include "store/s3_holdings.hpp"

#include <algorithm>
#include <optional>

#include "checksum/hasher.hpp"
#include "metadata/metadata.hpp"
#include "s3/config.hpp"

namespace rpmirror::store {

S3Holdings::S3Holdings(s3::S3Client& client, s3::S3Location location, std::string root_prefix,
                       Settings settings)
    : client_(client),
      location_(std::move(location)),
      root_prefix_(std::move(root_prefix)),
      settings_(std::move(settings)) {}

Result<void> S3Holdings::load() {
    auto state = s3::load_state(client_, location_, settings_.state_key);
    if (!state) {
        return tl::unexpected(std::move(state.error()));
    }
    if (*state) {
        state_ = std::move(**state);
    }
    // Under --upstream-layout, the blobs beneath the layout root too.
    auto listing = s3::list_mirror_within(client_, location_, root_prefix_);
    if (!listing) {
        return tl::unexpected(std::move(listing.error()));
    }
    listing_ = std::move(*listing);
    S3SyncView view;
    view.listing = &listing_;
    view.state = &state_;
    view.stored_now = &stored_now_;
    view.acl = settings_.acl;
    view.part_size = settings_.part_size;
    view.confirm_lease = settings_.confirm_lease;
    view.state_key = settings_.state_key;
    store_ = std::make_unique<S3Store>(client_, location_, std::move(view));
    return {};
}

bool S3Holdings::holds(const std::string& key, std::string_view sha256) const {
    const auto stored = state_.objects.find(key);
    const auto listed = listing_.find(key);
    return stored != state_.objects.end() && listed != listing_.end() &&
           stored->second.checksum_type == ChecksumType::Sha256 &&
           stored->second.digest == sha256 && s3::still_matches(stored->second, listed->second);
}

std::vector<std::size_t> S3Holdings::missing(std::span<const S3Package> packages,
                                             std::vector<Conflict>* conflicts) {
    const auto recorded = [&](const S3Package& package,
                              const std::map<std::string, s3::StoredObject>& records) {
        const auto stored = records.find(package.key);
        const auto listed = listing_.find(package.key);
        return settings_.use_checksum_cache && stored != records.end() &&
                       listed != listing_.end() &&
                       stored->second.checksum_type == package.checksum_type &&
                       stored->second.digest == package.digest &&
                       (package.size == kUnknownSize || stored->second.size == package.size) &&
                       s3::still_matches(stored->second, listed->second)
                   ? &stored->second
                   : nullptr;
    };
    std::vector<std::size_t> result;
    std::vector<std::size_t> unrecorded;
    for (std::size_t item = 0; item < packages.size(); ++item) {
        const S3Package& package = packages[item];
        if (recorded(package, state_.objects) != nullptr) {
            continue;
        }
        // The other releases' records, read once, only when a package is not this one's.
        if (!layout_records_loaded_ && root_prefix_ != location_.prefix) {
            load_layout_records();
            layout_records_loaded_ = true;
        }
        const auto other = layout_records_.find(package.key);
        const auto listed = listing_.find(package.key);
        if (other != layout_records_.end() && other->second.shareable) {
            const std::map<std::string, s3::StoredObject> one{{package.key, other->second.object}};
            if (const s3::StoredObject* shared = recorded(package, one)) {
                state_.objects[package.key] = *shared;
                continue;
            }
        }
        // A blob beyond the repository that a release's state could not be read for: it may be
        // another release's, and is not replaced.
        if (conflicts != nullptr && layout_unreadable_ && package.key.starts_with("../") &&
            listed != listing_.end() && other == layout_records_.end()) {
            conflicts->push_back({item, "an object whose owner's state cannot be read"});
            continue;
        }
        // A blob beyond the repository that no release recorded (an object of another tool, or
        // of a run killed before it recorded its state): judged by its content, as on disk.
        if (conflicts != nullptr && package.key.starts_with("../") && listed != listing_.end() &&
            other == layout_records_.end()) {
            unrecorded.push_back(item);
            continue;
        }
        if (conflicts != nullptr && other != layout_records_.end() && listed != listing_.end() &&
            s3::still_matches(other->second.object, listed->second)) {
            const s3::StoredObject& held = other->second.object;
            if (package.size != kUnknownSize && held.size != package.size) {
                conflicts->push_back({item, std::to_string(held.size) + " bytes"});
                continue;
            }
            if (held.checksum_type == package.checksum_type && held.digest != package.digest) {
                conflicts->push_back({item, std::string(checksum_type_name(held.checksum_type)) +
                                                " " + held.digest});
                continue;
            }
        }
        result.push_back(item);
    }
    if (!unrecorded.empty()) {
        judge_unrecorded(packages, unrecorded, result, *conflicts);
        std::sort(result.begin(), result.end());
    }
    return result;
}

void S3Holdings::judge_unrecorded(std::span<const S3Package> packages,
                                  const std::vector<std::size_t>& items,
                                  std::vector<std::size_t>& missing,
                                  std::vector<Conflict>& conflicts) {
    std::vector<ExpectedFile> expected;
    expected.reserve(items.size());
    for (const std::size_t item : items) {
        const S3Package& package = packages[item];
        expected.push_back(
            {package.key, package.checksum_type, package.digest,
             package.size == kUnknownSize ? std::nullopt : std::optional(package.size)});
    }
    // Hashed whatever the object's metadata claims: nothing is trusted for being there.
    const std::vector<CheckedFile> checked = store_->check_files(expected, CheckOptions{0, false});
    for (std::size_t index = 0; index < items.size(); ++index) {
        const std::size_t item = items[index];
        const S3Package& package = packages[item];
        const CheckedFile& found = checked[index];
        switch (found.finding) {
            case Finding::Intact: {
                const s3::ListedObject& listed = listing_.at(package.key);
                state_.objects[package.key] = s3::StoredObject{
                    listed.size, listed.etag, package.checksum_type, package.digest};
                break;
            }
            case Finding::Missing:  // gone since the listing: stored like any other
                missing.push_back(item);
                break;
            case Finding::SizeMismatch:
                conflicts.push_back({item, std::to_string(found.actual_size) + " bytes"});
                break;
            case Finding::DigestMismatch:
                conflicts.push_back({item, std::string(checksum_type_name(package.checksum_type)) +
                                               " " + found.actual_digest});
                break;
            default:
                conflicts.push_back({item, "an object that cannot be read (" + found.detail + ")"});
                break;
        }
    }
}

void S3Holdings::load_layout_records() {
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

bool S3Holdings::signatures_checked_with(const std::string& key_ids) const {
    return !key_ids.empty() && state_.signatures_checked == key_ids;
}

void S3Holdings::record_copied(const std::string& key, s3::StoredObject object) {
    state_.objects[key] = std::move(object);
    stored_now_.insert(key);
}

}  // namespace rpmirror::store
