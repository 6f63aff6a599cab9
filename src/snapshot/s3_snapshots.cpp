// Snapshots in a bucket (snapshot/backend.hpp). A bucket has no hard links, no rename and no
// symlinks; what stands in for them:
//   - a snapshot is a copy of every object of the mirror made inside the store (CopyObject, each
//     pinned to the ETag the mirror's state vouches for: an object replaced meanwhile fails the
//     copy), repodata/repomd.xml after the records, repomd.xml.asc after it, and the manifest
//     `.rpmirror/snapshot.json` last: a snapshot exists iff its manifest does, so an interrupted
//     creation is no snapshot (its objects are removed by the next creation);
//   - a published name is a copy of a snapshot published in the sync's order (packages and
//     records first, the old repomd.xml.asc removed, repomd.xml replaced in one PUT, its
//     signature after it), so a dnf reading it sees the old revision or the new one, never an
//     index listing a missing object; the records of the revision it replaced stay one more
//     publication for readers that fetched the old index, as a sync keeps them;
//   - an installation tree (`sync --treeinfo`: .treeinfo at the mirror's root) is snapshotted
//     whole: every repository it names (each checked against its own state), its images (each
//     against the tree's state and .treeinfo's checksum), each repository's index after its
//     records, .treeinfo after everything, the manifest last;
//   - the lock is the repository's lease (s3/lease.hpp), the one a sync takes.
// Objects are copied with the ACL the mirror's state records (--s3-acl), so a public-read mirror's
// snapshots and published names are public-read too.
#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <set>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "metadata/treeinfo.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "rpmirror/metadata/metadata.hpp"
#include "s3/client.hpp"
#include "s3/mirror_state.hpp"
#include "snapshot/backend.hpp"
#include "store/mirror_store.hpp"
#include "store/s3_store.hpp"

namespace rpmirror::snapshot {

namespace {

constexpr std::string_view kSnapshotManifest = ".rpmirror/snapshot.json";
constexpr std::string_view kPublishedManifest = ".rpmirror/published.json";
constexpr std::string_view kRepomdKey = "repodata/repomd.xml";
constexpr std::string_view kSignatureKey = "repodata/repomd.xml.asc";

s3::PutOptions json_document() {
    s3::PutOptions options;
    options.content_type = "application/json";
    return options;
}

bool is_own_key(std::string_view key) {
    return key.starts_with(s3::kStateDirName);
}

// True iff `key` is `name` or ends in "/<name>" (a repository's file, at the root or in a tree).
bool names_file(std::string_view key, std::string_view name) {
    return key == name || (key.size() > name.size() && key.ends_with(name) &&
                           key[key.size() - name.size() - 1] == '/');
}

// The order objects are copied in: everything else, then each repository's repomd.xml, then its
// signature, then a tree's .treeinfo.
int publish_rank(std::string_view key) {
    return key == kTreeinfoName             ? 3
           : names_file(key, kRepomdKey)    ? 1
           : names_file(key, kSignatureKey) ? 2
                                            : 0;
}

// True iff `key` is in a repository's metadata directory (at the root or in a tree).
bool is_record_key(std::string_view key) {
    return key.starts_with("repodata/") || key.find("/repodata/") != std::string_view::npos;
}

// `base` with the relative directory `part` ("" = itself) appended.
s3::S3Location below(const s3::S3Location& base, std::string_view part) {
    return part.empty() ? base : s3::S3Location{base.bucket, base.key(part) + "/"};
}

Result<nlohmann::json> parse_manifest(const std::string& body, const std::string& shown) {
    auto json = nlohmann::json::parse(body, nullptr, false);
    if (json.is_discarded() || !json.is_object() || json.value("version", 0) != 1) {
        return make_error(ErrorCode::BadInput, "not an rpmirror manifest", shown);
    }
    return json;
}

class S3Backend final : public Backend {
  public:
    S3Backend(const SnapshotRoot& root, s3::S3Config config, s3::S3Location repo,
              s3::S3Location snapshots, s3::S3Location published)
        : root_(root),
          config_(config),
          client_(std::move(config)),
          repo_(std::move(repo)),
          snapshots_(std::move(snapshots)),
          published_(std::move(published)) {}

    Result<void> lock(const SnapshotLock& lock) override {
        // The repository's lease, as a sync takes it (store::S3Store::lock).
        store::S3Store mirror(client_, repo_);
        auto lease = mirror.lock(lock.wait, {});
        if (!lease) {
            return tl::unexpected(std::move(lease.error()));
        }
        lease_ = std::move(*lease);
        return {};
    }

    Result<std::optional<std::string>> read_small(std::optional<std::string_view> name,
                                                  std::string_view key) override {
        auto body =
            name ? client_.get_object(snapshots_.bucket, snapshot_prefix(*name) + std::string(key))
                 : client_.get_object(repo_.bucket, repo_.key(key));
        if (!body) {
            if (body.error().code == ErrorCode::NotFound) {
                return std::optional<std::string>();
            }
            return tl::unexpected(std::move(body.error()));
        }
        return std::optional<std::string>(std::move(*body));
    }

    Result<bool> exists(std::string_view name) override {
        auto manifest = client_.head_object(snapshots_.bucket, manifest_key(name));
        if (!manifest && manifest.error().code == ErrorCode::NotFound) {
            return false;
        }
        return manifest.map([](const s3::ObjectInfo&) { return true; });
    }

    Result<SnapshotInfo> build(const std::string& name,
                               const SnapshotCreateOptions& /*options*/) override {
        // What the snapshot copies, each object checked against the state that vouches for it:
        // the repository's, or an installation tree's repositories, images and .treeinfo.
        auto verified = verified_tree();
        if (!verified) {
            return tl::unexpected(std::move(verified.error()));
        }
        if (auto cleared = remove_incomplete(); !cleared) {
            return tl::unexpected(std::move(cleared.error()));
        }
        const s3::S3Location target{snapshots_.bucket, snapshot_prefix(name)};
        SnapshotInfo info;
        info.name = name;
        info.dir = url_of(snapshots_, name);
        // Records, packages and images first, several at a time; then each index, its
        // signature, and a tree's .treeinfo.
        std::vector<s3::StoredCopy> first;
        std::vector<s3::StoredCopy> last;
        for (const auto& [part, part_objects] : *verified) {
            const s3::S3Location from = below(repo_, part);
            const s3::S3Location to = below(target, part);
            for (const auto& [key, object] : part_objects) {
                ++info.files;
                info.bytes += object.size;
                info.packages += store::is_package_key(key) ? 1 : 0;
                (publish_rank(key) == 0 ? first : last).push_back({from, key, object, to, key});
            }
        }
        std::stable_sort(last.begin(), last.end(), [](const auto& left, const auto& right) {
            return publish_rank(left.from_key) < publish_rank(right.from_key);
        });
        if (auto copied = copy_all(first); !copied) {
            (void)remove_prefix(target);
            return tl::unexpected(std::move(copied.error()));
        }
        for (const s3::StoredCopy& copy : last) {
            if (auto copied = this->copy(copy.from, copy.from_key, copy.expected, copy.to);
                !copied) {
                (void)remove_prefix(target);
                return tl::unexpected(std::move(copied.error()));
            }
        }
        info.unique_bytes = info.bytes;
        info.created_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                              client_.store_now().time_since_epoch())
                              .count();
        const nlohmann::json manifest{{"version", 1},
                                      {"created_ns", info.created_ns},
                                      {"packages", info.packages},
                                      {"files", info.files},
                                      {"bytes", info.bytes}};
        if (auto held = lease_->confirm(); !held) {
            (void)remove_prefix(target);
            return tl::unexpected(std::move(held.error()));
        }
        if (auto put = client_.put_object(snapshots_.bucket, manifest_key(name), manifest.dump(),
                                          json_document());
            !put) {
            (void)remove_prefix(target);
            return tl::unexpected(std::move(put.error()));
        }
        return info;
    }

    Result<SnapshotInfo> describe(std::string_view name) override {
        const std::string shown = url_of(snapshots_, name);
        auto body = client_.get_object(snapshots_.bucket, manifest_key(name));
        if (!body && body.error().code == ErrorCode::NotFound) {
            return tl::unexpected(no_snapshot(root_, name, shown));
        }
        if (!body) {
            return tl::unexpected(std::move(body.error()));
        }
        auto manifest = parse_manifest(*body, shown + "/" + std::string(kSnapshotManifest));
        if (!manifest) {
            return tl::unexpected(std::move(manifest.error()));
        }
        SnapshotInfo info;
        info.name = std::string(name);
        info.dir = shown;
        info.created_ns = manifest->value("created_ns", std::int64_t{0});
        info.packages = manifest->value("packages", std::size_t{0});
        info.files = manifest->value("files", std::size_t{0});
        info.bytes = manifest->value("bytes", std::uint64_t{0});
        // Copies in a bucket are objects of their own: removing one frees all of it.
        info.unique_bytes = info.bytes;
        return info;
    }

    Result<std::vector<std::string>> names() override {
        return snapshot_names().map([](Names names) { return std::move(names.complete); });
    }

    Result<std::multimap<std::string, std::string>> published() override {
        std::multimap<std::string, std::string> by_snapshot;
        const std::string suffix = "/" + root_.repo_id + "/" + std::string(kPublishedManifest);
        std::vector<std::string> names;
        auto listed = client_.list_objects(
            published_.bucket, published_.prefix, [&](const s3::ListedObject& object) {
                const std::string_view key =
                    std::string_view(object.key).substr(published_.prefix.size());
                if (key.ends_with(suffix) && key.find('/') == key.size() - suffix.size()) {
                    names.emplace_back(key.substr(0, key.size() - suffix.size()));
                }
                return Result<void>{};
            });
        if (!listed) {
            return tl::unexpected(std::move(listed.error()));
        }
        for (const std::string& published_name : names) {
            auto manifest = published_manifest(published_name);
            if (!manifest) {
                return tl::unexpected(std::move(manifest.error()));
            }
            if (*manifest) {
                by_snapshot.emplace((**manifest).value("snapshot", ""), published_name);
            }
        }
        return by_snapshot;
    }

    Result<void> point(std::string_view published_name, std::string_view name) override {
        const s3::S3Location source{snapshots_.bucket, snapshot_prefix(name)};
        const s3::S3Location target{
            published_.bucket,
            published_.prefix + std::string(published_name) + "/" + root_.repo_id + "/"};
        auto objects = s3::list_mirror(client_, source);
        if (!objects) {
            return tl::unexpected(std::move(objects.error()));
        }
        auto there = s3::list_mirror(client_, target);
        if (!there) {
            return tl::unexpected(std::move(there.error()));
        }
        auto previous = published_manifest(published_name);
        if (!previous) {
            return tl::unexpected(std::move(previous.error()));
        }
        if (!*previous && !there->empty()) {
            return make_error(ErrorCode::Unsafe,
                              "holds objects that are not a published snapshot's; not replaced",
                              target.to_string());
        }
        std::erase_if(*objects, [](const auto& entry) { return is_own_key(entry.first); });
        // Records of the revision being replaced stay one more publication; those of the one
        // before, and packages the new snapshot lacks, go (at the end). The manifest naming the
        // new snapshot is written first: a publish killed halfway leaves a name the next publish
        // takes over, never objects it refuses as not its own.
        std::set<std::string> older;
        if (*previous) {
            for (const auto& key :
                 (**previous).value("previous_records", nlohmann::json::array())) {
                older.insert(key.get<std::string>());
            }
        }
        std::vector<std::string> kept_records;
        std::vector<std::string> garbage;
        for (const auto& [key, object] : *there) {
            if (is_own_key(key) || objects->contains(key)) {
                continue;
            }
            if (is_record_key(key) && !older.contains(key)) {
                kept_records.push_back(key);
            } else {
                garbage.push_back(target.key(key));
            }
        }
        const nlohmann::json manifest{
            {"version", 1}, {"snapshot", std::string(name)}, {"previous_records", kept_records}};
        if (auto put = client_.put_object(target.bucket, target.key(kPublishedManifest),
                                          manifest.dump(), json_document());
            !put) {
            return tl::unexpected(std::move(put.error()));
        }
        // Packages and records first: what is there already with the same size and ETag stays.
        std::vector<s3::StoredCopy> first;
        for (const auto& [key, object] : *objects) {
            const auto found = there->find(key);
            if (publish_rank(key) != 0 ||
                (found != there->end() && found->second.size == object.size &&
                 found->second.etag == object.etag)) {
                continue;
            }
            first.push_back({source, key, listed_as_stored(object), target, key});
        }
        if (auto copied = copy_all(first); !copied) {
            return copied;
        }
        // The old signatures go, each new index replaces the old in one request, then its
        // signature comes (the sync's order: an index never sits beside a signature of another),
        // and a tree's .treeinfo after every repository.
        for (const auto& [key, object] : *there) {
            if (publish_rank(key) == 2) {
                if (auto removed = client_.delete_object(target.bucket, target.key(key));
                    !removed) {
                    return removed;
                }
            }
        }
        if (auto held = lease_->confirm(); !held) {
            return held;
        }
        std::vector<std::string> last;
        for (const auto& [key, object] : *objects) {
            if (publish_rank(key) != 0) {
                last.push_back(key);
            }
        }
        std::stable_sort(last.begin(), last.end(), [](const auto& left, const auto& right) {
            return publish_rank(left) < publish_rank(right);
        });
        for (const std::string& key : last) {
            if (auto copied = copy(source, key, listed_as_stored(objects->at(key)), target);
                !copied) {
                return copied;
            }
        }
        return garbage.empty() ? Result<void>{} : client_.delete_objects(target.bucket, garbage);
    }

    Result<void> erase(const SnapshotInfo& info) override {
        const s3::S3Location target{snapshots_.bucket, snapshot_prefix(info.name)};
        // Gone for rpmirror (the manifest), then for dnf and anaconda (the index, .treeinfo),
        // then the rest.
        for (const std::string_view key : {kSnapshotManifest, kTreeinfoName, kRepomdKey}) {
            if (auto removed = client_.delete_object(target.bucket, target.key(key)); !removed) {
                return removed;
            }
        }
        return remove_prefix(target);
    }

  private:
    std::string snapshot_prefix(std::string_view name) const {
        return snapshots_.prefix + std::string(name) + "/";
    }
    std::string manifest_key(std::string_view name) const {
        return snapshot_prefix(name) + std::string(kSnapshotManifest);
    }
    static std::string url_of(const s3::S3Location& base, std::string_view name) {
        return s3::object_url(base.bucket, base.prefix + std::string(name));
    }

    // Copies `key` of `from` to the same key under `to`, with the mirror's ACL, iff it is still
    // the object `stored` describes (s3::copy_stored).
    Result<void> copy(const s3::S3Location& from, std::string_view key,
                      const s3::StoredObject& stored, const s3::S3Location& to) {
        auto copied = s3::copy_stored(client_, from, key, stored, to, key, acl_);
        if (!copied && copied.error().code == ErrorCode::Corrupt) {
            return make_error(ErrorCode::Corrupt, "changed while the snapshot was taken",
                              copied.error().subject);
        }
        return copied.map([](const s3::StoredObject&) {});
    }

    // Runs `copies` (s3::copy_stored_all), several at a time. Returns the first failure, a
    // source that changed named as the snapshot's.
    Result<void> copy_all(std::span<const s3::StoredCopy> copies) {
        for (auto& result : s3::copy_stored_all(config_, copies, acl_)) {
            if (!result && result.error().code == ErrorCode::Corrupt) {
                return make_error(ErrorCode::Corrupt, "changed while the snapshot was taken",
                                  result.error().subject);
            }
            if (!result) {
                return tl::unexpected(std::move(result.error()));
            }
        }
        return {};
    }

    static s3::StoredObject listed_as_stored(const s3::ListedObject& listed) {
        s3::StoredObject stored;
        stored.size = listed.size;
        stored.etag = listed.etag;
        return stored;
    }

    // The objects a snapshot copies, by the repository's relative directory ("" = the mirror
    // itself): the mirror's (verified_objects), or, when it is an installation tree, each of its
    // repositories' and then its images and .treeinfo, each image held as .treeinfo lists it
    // (the tree's state records it with that checksum, and the object is still the one stored).
    using PartObjects =
        std::vector<std::pair<std::string, std::map<std::string, s3::StoredObject>>>;
    Result<PartObjects> verified_tree() {
        auto text = client_.get_object(repo_.bucket, repo_.key(kTreeinfoName));
        if (!text && text.error().code == ErrorCode::NotFound) {
            auto objects = verified_objects(repo_);
            if (!objects) {
                return tl::unexpected(std::move(objects.error()));
            }
            return PartObjects{{"", std::move(*objects)}};
        }
        if (!text) {
            return tl::unexpected(std::move(text.error()));
        }
        const std::string shown = repo_.to_string();
        auto tree = parse_treeinfo(*text, s3::object_url(repo_.bucket, repo_.key(kTreeinfoName)));
        if (!tree) {
            return tl::unexpected(std::move(tree.error()));
        }
        PartObjects parts;
        for (const std::string& part : tree->repositories) {
            auto objects = verified_objects(below(repo_, part));
            if (!objects) {
                return tl::unexpected(std::move(objects.error()));
            }
            parts.emplace_back(part, std::move(*objects));
        }
        auto state = s3::load_state(client_, repo_, s3::kTreeStateKey);
        if (!state) {
            return tl::unexpected(std::move(state.error()));
        }
        if (!*state) {
            return make_error(ErrorCode::BadInput,
                              "no completed `rpmirror sync --treeinfo` recorded for this tree (no "
                              "state object " +
                                  std::string(s3::kTreeStateKey) + "); sync it first",
                              shown);
        }
        auto listing = s3::list_mirror(client_, repo_);
        if (!listing) {
            return tl::unexpected(std::move(listing.error()));
        }
        std::map<std::string, s3::StoredObject> files;
        std::vector<std::string> problems;
        const auto held = [&](const std::string& key, ChecksumType type,
                              const std::string& digest) {
            const auto recorded = (*state)->objects.find(key);
            const auto listed = listing->find(key);
            if (recorded == (*state)->objects.end() || listed == listing->end()) {
                problems.push_back(key + ": missing");
            } else if ((!digest.empty() && (recorded->second.checksum_type != type ||
                                            recorded->second.digest != digest)) ||
                       !s3::still_matches(recorded->second, listed->second)) {
                problems.push_back(key +
                                   ": not the one .treeinfo lists, or changed since the "
                                   "last sync");
            } else {
                files.emplace(key, recorded->second);
            }
        };
        for (const TreeInfo::File& file : tree->files) {
            held(file.path, file.type, file.digest);
        }
        for (const std::string& image : tree->unchecksummed_images) {
            held(image, ChecksumType::Sha256, {});  // as stored: nothing else vouches for it
        }
        held(std::string(kTreeinfoName), ChecksumType::Sha256,
             hash_bytes(ChecksumType::Sha256, *text));
        if (!problems.empty()) {
            std::string list = fmt::format("{} problem(s)", problems.size());
            for (std::size_t index = 0; index < problems.size() && index < 3; ++index) {
                list += (index == 0 ? ": " : "; ") + problems[index];
            }
            return make_error(ErrorCode::BadInput,
                              "not a complete, verified installation tree: " + list, shown);
        }
        parts.emplace_back("", std::move(files));
        return parts;
    }

    // The objects of the complete, unchanged mirror at `repo`: the state of its last sync names
    // the live repomd.xml, and every object the state holds is listed with the size and ETag it
    // recorded (the no-op's check, s3/mirror_state.hpp: what the sync verified, nothing re-read).
    Result<std::map<std::string, s3::StoredObject>> verified_objects(const s3::S3Location& repo) {
        auto state = s3::load_state(client_, repo);
        if (!state) {
            return tl::unexpected(std::move(state.error()));
        }
        if (!*state || (*state)->repomd_sha256.empty() || (*state)->selection.empty()) {
            return make_error(ErrorCode::BadInput,
                              "no completed `rpmirror sync` recorded for this mirror (no "
                              "state object .rpmirror/state.json); sync it first",
                              repo.to_string());
        }
        const auto repomd = (*state)->objects.find(std::string(kRepomdKey));
        if (repomd == (*state)->objects.end()) {
            return make_error(ErrorCode::BadInput,
                              "no repodata/repomd.xml: a snapshot needs a mirror synced with "
                              "--download-metadata",
                              repo.to_string());
        }
        auto listing = s3::list_mirror(client_, repo);
        if (!listing) {
            return tl::unexpected(std::move(listing.error()));
        }
        std::vector<std::string> problems;
        for (const auto& [key, object] : (*state)->objects) {
            const auto listed = listing->find(key);
            if (listed == listing->end()) {
                problems.push_back(key + ": missing");
            } else if (!s3::still_matches(object, listed->second)) {
                problems.push_back(key + ": changed since the last sync");
            }
        }
        if (!problems.empty()) {
            std::string text = fmt::format("{} problem(s)", problems.size());
            for (std::size_t index = 0; index < problems.size() && index < 3; ++index) {
                text += (index == 0 ? ": " : "; ") + problems[index];
            }
            return make_error(ErrorCode::BadInput, "not a complete, verified mirror: " + text,
                              repo.to_string());
        }
        // The index is the one the state vouches for, and lists nothing the state lacks.
        auto body = client_.get_object(repo.bucket, repo.key(kRepomdKey), std::nullopt,
                                       repomd->second.etag);
        if (!body) {
            return tl::unexpected(std::move(body.error()));
        }
        if (hash_bytes(repomd->second.checksum_type, *body) != repomd->second.digest) {
            return make_error(ErrorCode::BadInput,
                              "repodata/repomd.xml is not the one the last completed sync "
                              "published; sync again first",
                              repo.to_string());
        }
        for (const std::string& key : record_hrefs(*body)) {
            if (!(*state)->objects.contains(key)) {
                return make_error(ErrorCode::BadInput,
                                  "not a complete, verified mirror: " + key +
                                      " (listed by repodata/repomd.xml) is not in its state",
                                  repo.to_string());
            }
        }
        acl_ = (*state)->acl;
        return std::move((*state)->objects);
    }

    struct Names {
        std::vector<std::string> complete;    // with a manifest
        std::vector<std::string> incomplete;  // objects, no manifest: an interrupted creation
    };
    Result<Names> snapshot_names() {
        std::set<std::string> all;
        std::set<std::string> complete;
        auto listed = client_.list_objects(
            snapshots_.bucket, snapshots_.prefix, [&](const s3::ListedObject& object) {
                const std::string_view key =
                    std::string_view(object.key).substr(snapshots_.prefix.size());
                const auto slash = key.find('/');
                if (slash == std::string_view::npos) {
                    return Result<void>{};
                }
                std::string name(key.substr(0, slash));
                if (key.substr(slash + 1) == kSnapshotManifest) {
                    complete.insert(name);
                }
                all.insert(std::move(name));
                return Result<void>{};
            });
        if (!listed) {
            return tl::unexpected(std::move(listed.error()));
        }
        Names names;
        for (const std::string& name : all) {
            if (!validate_snapshot_name(name, "snapshot name")) {
                continue;  // not rpmirror's
            }
            (complete.contains(name) ? names.complete : names.incomplete).push_back(name);
        }
        return names;
    }

    // Removes what interrupted creations left (the lease held: no creation is running).
    Result<void> remove_incomplete() {
        auto names = snapshot_names();
        if (!names) {
            return tl::unexpected(std::move(names.error()));
        }
        for (const std::string& name : names->incomplete) {
            if (auto removed = remove_prefix({snapshots_.bucket, snapshot_prefix(name)});
                !removed) {
                return removed;
            }
        }
        return {};
    }

    Result<void> remove_prefix(const s3::S3Location& where) {
        auto objects = client_.list_all_objects(where.bucket, where.prefix);
        if (!objects) {
            return tl::unexpected(std::move(objects.error()));
        }
        std::vector<std::string> keys;
        for (const s3::ListedObject& object : *objects) {
            keys.push_back(object.key);
        }
        return keys.empty() ? Result<void>{} : client_.delete_objects(where.bucket, keys);
    }

    // The manifest of published name `published_name`, nullopt iff there is none.
    Result<std::optional<nlohmann::json>> published_manifest(std::string_view published_name) {
        const std::string key = published_.prefix + std::string(published_name) + "/" +
                                root_.repo_id + "/" + std::string(kPublishedManifest);
        auto body = client_.get_object(published_.bucket, key);
        if (!body && body.error().code == ErrorCode::NotFound) {
            return std::optional<nlohmann::json>();
        }
        if (!body) {
            return tl::unexpected(std::move(body.error()));
        }
        auto manifest = parse_manifest(*body, s3::object_url(published_.bucket, key));
        if (!manifest) {
            return tl::unexpected(std::move(manifest.error()));
        }
        return std::optional<nlohmann::json>(std::move(*manifest));
    }

    const SnapshotRoot& root_;
    s3::S3Config config_;
    s3::S3Client client_;
    s3::S3Location repo_;
    s3::S3Location snapshots_;  // <base>/snapshots/<repo id>/
    s3::S3Location published_;  // <base>/published/
    std::string acl_;           // the mirror's --s3-acl, from its state
    std::unique_ptr<RepoLock> lease_;
};

}  // namespace

Result<std::unique_ptr<Backend>> s3_backend(const SnapshotRoot& root) {
    auto config =
        s3::resolve_config(root.s3.value_or(s3::S3Overrides{}), s3::process_environment());
    if (!config) {
        return tl::unexpected(std::move(config.error()));
    }
    auto repo = s3::S3Location::parse(root.repo_dir.native());
    auto snapshots = s3::S3Location::parse(root.snapshots_dir.native());
    auto published = s3::S3Location::parse(root.published_dir.native());
    for (const auto* location : {&repo, &snapshots, &published}) {
        if (!*location) {
            return tl::unexpected(location->error());
        }
    }
    return std::unique_ptr<Backend>(std::make_unique<S3Backend>(
        root, std::move(*config), std::move(*repo), std::move(*snapshots), std::move(*published)));
}

}  // namespace rpmirror::snapshot
