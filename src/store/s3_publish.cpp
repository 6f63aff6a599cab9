// A bucket's end of a sync (see store/mirror_store.hpp): comps.xml, the ACL of kept objects, the
// metadata published in the order of the local merge, the state object stored under the lease.
#include <set>

#include "checksum/hasher.hpp"
#include "metadata/metadata.hpp"
#include "plan/selection_json.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "s3/upload.hpp"
#include "store/s3_store.hpp"

namespace rpmirror::store {

namespace {

constexpr std::string_view kRepodata = "repodata/";

bool is_record_key(std::string_view key) {
    return key.starts_with(kRepodata) && key != kIndexKey && key != kSignatureKey;
}

}  // namespace

Result<S3SyncView*> S3Store::sync_view(std::string_view operation) {
    if (!sync_) {
        return make_error(ErrorCode::Unsupported,
                          std::string(operation) + " needs the store a sync opened", describe(""));
    }
    return &*sync_;
}

Result<void> S3Store::put_document(S3SyncView& sync, std::string_view key, std::string_view body,
                                   std::string content_type) {
    s3::UploadSpec spec;
    spec.checksum_type = ChecksumType::Sha256;
    spec.digest = hash_bytes(ChecksumType::Sha256, body);
    spec.acl = sync.acl;
    spec.content_type = std::move(content_type);
    auto uploaded = s3::upload_bytes(client_, repo_.bucket, repo_.key(key), body, spec);
    if (!uploaded) {
        return tl::unexpected(std::move(uploaded.error()));
    }
    (*sync.listing)[std::string(key)] =
        s3::ListedObject{repo_.key(key), uploaded->size, uploaded->etag, {}};
    sync.state->objects[std::string(key)] = std::move(*uploaded);
    sync.stored_now->insert(std::string(key));
    return {};
}

Result<void> S3Store::write_document(std::string_view key, std::string_view content) {
    auto sync = sync_view("writing " + std::string(key));
    if (!sync) {
        return tl::unexpected(std::move(sync.error()));
    }
    S3SyncView& view = **sync;
    if (auto held = view.confirm_lease(); !held) {
        return held;
    }
    // Stored already, as this run would store it: not written again.
    const auto stored = view.state->objects.find(std::string(key));
    const auto listed = view.listing->find(std::string(key));
    if (stored != view.state->objects.end() && listed != view.listing->end() &&
        view.state->acl == view.acl && stored->second.checksum_type == ChecksumType::Sha256 &&
        stored->second.digest == hash_bytes(ChecksumType::Sha256, content) &&
        s3::still_matches(stored->second, listed->second)) {
        return {};
    }
    return put_document(view, key, content,
                        key.ends_with(".xml") ? "application/xml" : "text/plain");
}

Result<void> S3Store::ready_packages() {
    auto sync = sync_view("readying packages");
    if (!sync) {
        return tl::unexpected(std::move(sync.error()));
    }
    S3SyncView& view = **sync;
    // Nothing is published by a worker that lost its lease to another.
    if (auto held = view.confirm_lease(); !held) {
        return held;
    }
    s3::MirrorState& state = *view.state;
    if (state.acl == view.acl) {
        return {};
    }
    // Objects kept from earlier runs still have the ACL they were stored with. Without --s3-acl
    // the objects go back to "private" (S3 cannot restore "the bucket's default" to an object).
    const std::string acl = view.acl.empty() ? std::string("private") : view.acl;
    for (const auto& [key, object] : state.objects) {
        // Not a blob beyond the repository (--upstream-layout): it keeps the ACL of the release
        // that stored it, which other releases serve too.
        if (view.stored_now->contains(key) || !view.listing->contains(key) ||
            key.starts_with("../")) {
            continue;
        }
        if (auto applied = client_.put_object_acl(repo_.bucket, repo_.key(key), acl); !applied) {
            return applied;
        }
    }
    state.acl = view.acl;
    return {};
}

Result<void> S3Store::publish_metadata(const MetadataRelease& release) {
    auto sync = sync_view("publishing metadata");
    if (!sync) {
        return tl::unexpected(std::move(sync.error()));
    }
    S3SyncView& view = **sync;
    s3::MirrorState& state = *view.state;
    std::map<std::string, s3::ListedObject>& listing = *view.listing;
    auto parsed = parse_repomd(release.repomd_xml, "repomd.xml");
    if (!parsed) {
        return tl::unexpected(std::move(parsed.error()));
    }
    // The records of the revision readers may still be reading: the live repomd.xml's (read
    // now: the state may be older than a killed run's publishing) and the state's.
    std::set<std::string> previous;
    const std::set<std::string> older(state.previous_records.begin(), state.previous_records.end());
    for (const auto& [key, object] : state.objects) {
        if (is_record_key(key) && !older.contains(key)) {
            previous.insert(key);
        }
    }
    if (listing.contains(std::string(kIndexKey))) {
        auto live = client_.get_object(repo_.bucket, repo_.key(kIndexKey));
        if (!live) {
            return tl::unexpected(std::move(live.error()));
        }
        for (std::string& key : record_hrefs(*live)) {
            previous.insert(std::move(key));
        }
    }
    std::set<std::string> records;
    for (const RepomdRecord& record : parsed->records) {
        const std::string& key = record.location_href;
        // The checks of a fetched record (metadata.hpp), for what is published as well.
        auto staged = record_destination(record, repo_.to_string(), "repomd.xml");
        if (!staged) {
            return tl::unexpected(std::move(staged.error()));
        }
        records.insert(key);
        const auto stored = state.objects.find(key);
        const auto listed = listing.find(key);
        if (stored != state.objects.end() && listed != listing.end() &&
            stored->second.digest == record.checksum.hex &&
            s3::still_matches(stored->second, listed->second)) {
            continue;  // records are named by their checksum: already there
        }
        s3::UploadSpec spec;
        spec.checksum_type = record.checksum.type;
        spec.digest = record.checksum.hex;
        spec.part_size = view.part_size;
        spec.acl = view.acl;
        auto uploaded = s3::upload_file(client_, repo_.bucket, repo_.key(key),
                                        release.stage->dir() / *staged, spec);
        if (!uploaded) {
            return tl::unexpected(std::move(uploaded.error()));
        }
        listing[key] = s3::ListedObject{repo_.key(key), uploaded->size, uploaded->etag, {}};
        state.objects[key] = std::move(*uploaded);
    }
    // The order of the local merge (fs/swap.hpp's MergeOrder): the old signature goes, the new
    // index replaces the old in one PUT, then its signature comes. An index never sits beside a
    // signature of another; a publish that fails between the two leaves the new index unsigned
    // until the next run, never signed by a signature that does not verify.
    if (listing.contains(std::string(kSignatureKey))) {
        if (auto removed = client_.delete_object(repo_.bucket, repo_.key(kSignatureKey));
            !removed) {
            return removed;
        }
        listing.erase(std::string(kSignatureKey));
        state.objects.erase(std::string(kSignatureKey));
    }
    // Only the lease's holder replaces the index.
    if (auto held = view.confirm_lease(); !held) {
        return held;
    }
    if (auto put = put_document(view, kIndexKey, release.repomd_xml, "application/xml"); !put) {
        return put;
    }
    if (release.signature) {
        if (auto put =
                put_document(view, kSignatureKey, *release.signature, "application/pgp-signature");
            !put) {
            return put;
        }
    }
    // GC: records neither the new nor the previous revision lists.
    std::vector<std::string> garbage;
    for (const auto& [key, listed] : listing) {
        if (is_record_key(key) && !records.contains(key) && !previous.contains(key)) {
            garbage.push_back(key);
        }
    }
    if (!garbage.empty()) {
        if (auto deleted = remove_files(garbage); !deleted) {
            return tl::unexpected(std::move(deleted.error()));
        }
    }
    state.previous_records.clear();
    for (const std::string& key : previous) {
        if (!records.contains(key)) {
            state.previous_records.push_back(key);
        }
    }
    return {};
}

Result<void> S3Store::record_placed(std::span<const PlacedFile> placed,
                                    std::span<const std::string> condemned, bool checked) {
    auto sync = sync_view("recording stored packages");
    if (!sync) {
        return tl::unexpected(std::move(sync.error()));
    }
    S3SyncView& view = **sync;
    s3::MirrorState& state = *view.state;
    for (const PlacedFile& file : placed) {
        (*view.listing)[file.key] =
            s3::ListedObject{repo_.key(file.key), file.stored.size, file.stored.version, {}};
        state.objects[file.key] =
            s3::StoredObject{file.stored.size, file.stored.version, file.type, file.digest};
        view.stored_now->insert(file.key);
    }
    std::vector<std::string> removed;
    for (const std::string& key : condemned) {
        if (!key.starts_with("../")) {
            removed.push_back(key);
        }
        state.objects.erase(key);
    }
    if (!placed.empty() && !checked) {
        state.signatures_checked.clear();  // unchecked packages among the state's now
    }
    state.repomd_sha256.clear();
    if (auto held = view.confirm_lease(); !held) {
        return held;
    }
    if (!removed.empty()) {
        if (auto deleted = remove_packages(removed); !deleted) {
            return tl::unexpected(std::move(deleted.error()));
        }
    }
    return s3::store_state(client_, repo_, state, view.state_key);
}

Result<void> S3Store::record_sync(const SyncRecord& record, std::vector<std::string>&) {
    auto sync = sync_view("recording the sync");
    if (!sync) {
        return tl::unexpected(std::move(sync.error()));
    }
    S3SyncView& view = **sync;
    s3::MirrorState& state = *view.state;
    // What the new state describes: the mirror, and the records of the previous revision that
    // readers may still fetch (publish_metadata deletes them next time).
    std::set<std::string> keep(record.packages.begin(), record.packages.end());
    keep.insert(record.metadata.begin(), record.metadata.end());
    for (const std::string& key : state.previous_records) {
        if (view.listing->contains(key) && state.objects.contains(key)) {
            keep.insert(key);
        }
    }
    std::erase_if(state.objects,
                  [&keep](const auto& entry) { return !keep.contains(entry.first); });
    state.repomd_sha256 = record.repomd_sha256;
    state.fingerprint = record.fingerprint;
    state.selection = selection_to_text(record.selection);
    state.publishing = publishing_to_text(record.publishing);
    if (!record.signatures_checked.empty()) {
        state.signatures_checked = record.signatures_checked;  // every package judged, or kept
    }
    // Only the lease's holder records the sync.
    if (auto held = view.confirm_lease(); !held) {
        return held;
    }
    return s3::store_state(client_, repo_, state, view.state_key);
}

}  // namespace rpmirror::store
