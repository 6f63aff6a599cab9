// The ObjectStore of a prefix in an S3 bucket (store/object_store.hpp), over src/s3/. A bucket has
// no hard links, no rename and no symlinks; what stands in for them:
//   - a link or a copy is a CopyObject inside the store (no byte passes through this host), pinned
//     to the source's ETag (s3::copy_stored: an object replaced meanwhile fails the copy);
//   - a tree is built at its own prefix, repository metadata copied after the rest
//     (publication_rank), and is a tree once its marker `.rpmirror/snapshot.json` exists, written
//     last; a prefix without a marker is an interrupted build, removed by the next build beside it;
//   - an alias is a copy of its tree written in publication order (packages and records first,
//     the old repomd.xml.asc removed, repomd.xml replaced in one PUT, its signature after it),
//     with a marker `.rpmirror/published.json` naming the tree; the records of the revision it
//     replaced stay one more switch for readers that fetched the old index, as a sync keeps them.
#include <algorithm>
#include <chrono>
#include <set>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "s3/client.hpp"
#include "s3/config.hpp"
#include "s3/mirror_state.hpp"
#include "s3/upload.hpp"
#include "store/object_store.hpp"
#include "store/recorded_content.hpp"
#include "store/staging.hpp"

namespace rpmirror::store {

namespace s3_objects {
namespace {

constexpr std::string_view kTreeMarker = ".rpmirror/snapshot.json";
constexpr std::string_view kAliasMarker = ".rpmirror/published.json";

bool is_marker(std::string_view key) {
    const auto ends_in = [&](std::string_view marker) {
        return key == marker || (key.size() > marker.size() && key.ends_with(marker) &&
                                 key[key.size() - marker.size() - 1] == '/');
    };
    return ends_in(kTreeMarker) || ends_in(kAliasMarker);
}

// True iff `key` is in a repository's metadata directory (at the root or in a tree).
bool is_record_key(std::string_view key) {
    return key.starts_with("repodata/") || key.find("/repodata/") != std::string_view::npos;
}

bool is_own_key(std::string_view key) {
    return key.starts_with(s3::kStateDirName);
}

s3::PutOptions json_document() {
    s3::PutOptions options;
    options.content_type = "application/json";
    return options;
}

Result<nlohmann::json> parse_marker(const std::string& body, const std::string& shown) {
    auto json = nlohmann::json::parse(body, nullptr, false);
    if (json.is_discarded() || !json.is_object() || json.value("version", 0) != 1) {
        return make_error(ErrorCode::BadInput, "not an rpmirror manifest", shown);
    }
    return json;
}

class S3Objects;

class S3Tree final : public TreeBuild {
  public:
    S3Tree(S3Objects& store, std::string key) : store_(store), key_(std::move(key)) {}
    ~S3Tree() override;

    const std::string& staging() const override { return key_; }
    Result<void> copy(std::span<const CopyRequest> copies, const CopyOptions& options) override;
    Result<void> copy_from(ObjectStore& source, std::span<const CopyRequest> copies,
                           const CopyOptions& options) override;
    Result<void> put(std::string_view relative, std::string_view bytes) override;
    Result<void> commit(RepoLock* lock) override;

  private:
    S3Objects& store_;
    std::string key_;
    bool committed_ = false;
};

class S3Objects final : public ObjectStore {
  public:
    S3Objects(s3::S3Config config, s3::S3Location where)
        : config_(config), client_(std::move(config)), where_(std::move(where)) {}

    std::string describe(std::string_view key) const override {
        if (key.empty()) {
            std::string url = where_.to_string();
            while (url.ends_with('/') && url.size() > 5) {
                url.pop_back();
            }
            return url;
        }
        return s3::object_url(where_.bucket, full(key));
    }

    Result<std::optional<ObjectInfo>> stat(std::string_view key) override {
        if (auto valid = check_key(key); !valid) {
            return tl::unexpected(std::move(valid.error()));
        }
        auto head = client_.head_object(where_.bucket, full(key));
        if (!head && head.error().code == ErrorCode::NotFound) {
            return std::optional<ObjectInfo>();
        }
        if (!head) {
            return tl::unexpected(std::move(head.error()));
        }
        return std::optional<ObjectInfo>(ObjectInfo{head->size, head->etag, 1});
    }

    Result<ObjectListing> list(std::string_view prefix) override {
        if (auto valid = check_key(prefix, true); !valid) {
            return tl::unexpected(std::move(valid.error()));
        }
        ObjectListing listing;
        auto listed = listed_below(prefix, [&](std::string key, const s3::ListedObject& object) {
            if (!is_marker(key)) {
                listing.emplace(std::move(key), ObjectInfo{object.size, object.etag, 1});
            }
        });
        if (!listed) {
            return tl::unexpected(std::move(listed.error()));
        }
        return listing;
    }

    Result<std::vector<std::string>> list_dirs(std::string_view prefix) override {
        if (auto valid = check_key(prefix, true); !valid) {
            return tl::unexpected(std::move(valid.error()));
        }
        const std::string below = dir_prefix(prefix);
        auto prefixes = client_.list_prefixes(where_.bucket, below);
        if (!prefixes) {
            return tl::unexpected(std::move(prefixes.error()));
        }
        std::vector<std::string> names;
        for (const std::string& each : *prefixes) {
            if (each.size() > below.size() + 1 && each.starts_with(below)) {
                names.push_back(each.substr(below.size(), each.size() - below.size() - 1));
            }
        }
        std::sort(names.begin(), names.end());
        return names;
    }

    Result<std::string> read(std::string_view key) override {
        if (auto valid = check_key(key); !valid) {
            return tl::unexpected(std::move(valid.error()));
        }
        return client_.get_object(where_.bucket, full(key));
    }

    Result<std::filesystem::path> local_copy(std::string_view key,
                                             const std::filesystem::path& scratch) override {
        if (auto valid = check_key(key); !valid) {
            return tl::unexpected(std::move(valid.error()));
        }
        const std::filesystem::path path = scratch / std::string(key);
        if (auto got = s3::get_object_to_file(client_, where_, key, path); !got) {
            return tl::unexpected(std::move(got.error()));
        }
        return path;
    }

    Result<void> put(std::string_view key, std::string_view bytes) override {
        return put_object(key, bytes, {});
    }

    // Streams the file: one PUT up to the part size, a multipart upload above it (s3/upload.hpp),
    // its body mapped from the file, never read onto the heap.
    Result<void> put_file(std::string_view key, const std::filesystem::path& path) override {
        if (auto valid = check_key(key); !valid) {
            return valid;
        }
        return s3::upload_file(client_, where_.bucket, full(key), path, s3::UploadSpec{})
            .map([](const s3::StoredObject&) {});
    }

    // The spool (store/spool.hpp) and options.parallel upload workers, one client each.
    Result<std::unique_ptr<Staging>> stage(const StageOptions& options) override {
        s3::UploadSpec base;
        base.part_size = std::max(options.part_size, s3::kMinPartSize);
        base.acl = options.acl;
        base.content_type = options.content_type;
        return spool_staging(
            options, true,
            [this, base](std::atomic<std::uint64_t>& requests) -> CommitFile {
                auto client = std::make_shared<s3::S3Client>(config_);
                return [this, base, client, &requests](
                           const StagedFile& staged,
                           const std::filesystem::path& file) -> Result<ObjectInfo> {
                    if (auto valid = check_key(staged.key); !valid) {
                        return tl::unexpected(std::move(valid.error()));
                    }
                    s3::UploadSpec spec = base;
                    spec.checksum_type = staged.type;
                    spec.digest = staged.digest;
                    const std::uint64_t before = client->request_count();
                    auto stored =
                        s3::upload_file(*client, where_.bucket, full(staged.key), file, spec);
                    requests += client->request_count() - before;
                    if (!stored) {
                        return tl::unexpected(std::move(stored.error()));
                    }
                    return ObjectInfo{stored->size, stored->etag, 1};
                };
            },
            [this](std::string_view key) { return describe(key); });
    }

    Result<void> copy(std::span<const CopyRequest> copies, const CopyOptions& options) override {
        return copy_all(copies, "", options);
    }

    // By the trees' state objects (store/recorded_content.hpp): an object read to be hashed
    // would cost its download.
    Result<FoundContent> find_content(std::span<const WantedContent> wanted,
                                      const FindOptions& options) override {
        return find_recorded_content(*this, wanted, options);
    }

    Result<void> remove(std::span<const std::string> keys) override {
        std::vector<std::string> full_keys;
        for (const std::string& key : keys) {
            if (auto valid = check_key(key); !valid) {
                return valid;
            }
            full_keys.push_back(full(key));
        }
        return full_keys.empty() ? Result<void>{}
                                 : client_.delete_objects(where_.bucket, full_keys);
    }

    Result<std::unique_ptr<TreeBuild>> build_tree(std::string_view key,
                                                  std::string_view /*what*/) override {
        if (auto valid = check_key(key); !valid) {
            return tl::unexpected(std::move(valid.error()));
        }
        auto exists = has_tree_marker(key);
        if (!exists) {
            return tl::unexpected(std::move(exists.error()));
        }
        if (*exists) {
            return make_error(ErrorCode::BadInput, "exists already", describe(key));
        }
        // What interrupted builds left beside it: prefixes without a marker.
        const std::string parent = parent_of(key);
        std::set<std::string> all;
        std::set<std::string> complete;
        auto listed = listed_below(parent, [&](std::string child, const s3::ListedObject&) {
            const std::string_view rest =
                std::string_view(child).substr(parent.empty() ? 0 : parent.size() + 1);
            const auto slash = rest.find('/');
            if (slash == std::string_view::npos || rest.starts_with('.')) {
                return;
            }
            std::string name(rest.substr(0, slash));
            if (rest.substr(slash + 1) == kTreeMarker) {
                complete.insert(name);
            }
            all.insert(std::move(name));
        });
        if (!listed) {
            return tl::unexpected(std::move(listed.error()));
        }
        for (const std::string& name : all) {
            if (!complete.contains(name)) {
                if (auto removed = remove_below(join_key(parent, name)); !removed) {
                    return tl::unexpected(std::move(removed.error()));
                }
            }
        }
        return std::unique_ptr<TreeBuild>(std::make_unique<S3Tree>(*this, std::string(key)));
    }

    Result<std::optional<std::int64_t>> tree(std::string_view key) override {
        if (auto valid = check_key(key); !valid) {
            return tl::unexpected(std::move(valid.error()));
        }
        const std::string marker = join_key(key, kTreeMarker);
        auto body = client_.get_object(where_.bucket, full(marker));
        if (!body && body.error().code == ErrorCode::NotFound) {
            return std::optional<std::int64_t>();
        }
        if (!body) {
            return tl::unexpected(std::move(body.error()));
        }
        auto json = parse_marker(*body, describe(marker));
        if (!json) {
            return tl::unexpected(std::move(json.error()));
        }
        return std::optional<std::int64_t>(json->value("created_ns", std::int64_t{0}));
    }

    Result<std::vector<std::string>> trees(std::string_view prefix) override {
        if (auto valid = check_key(prefix, true); !valid) {
            return tl::unexpected(std::move(valid.error()));
        }
        std::set<std::string> names;
        auto listed = listed_below(prefix, [&](std::string child, const s3::ListedObject&) {
            const std::string_view rest =
                std::string_view(child).substr(prefix.empty() ? 0 : prefix.size() + 1);
            const auto slash = rest.find('/');
            if (slash != std::string_view::npos && rest.substr(slash + 1) == kTreeMarker) {
                names.insert(std::string(rest.substr(0, slash)));
            }
        });
        if (!listed) {
            return tl::unexpected(std::move(listed.error()));
        }
        return std::vector<std::string>(names.begin(), names.end());
    }

    Result<void> remove_tree(std::string_view key) override {
        if (auto valid = check_key(key); !valid) {
            return valid;
        }
        // Gone for rpmirror (the marker), then for dnf and anaconda (the index, .treeinfo), then
        // the rest.
        for (const std::string_view relative : {kTreeMarker, std::string_view(".treeinfo"),
                                                std::string_view("repodata/repomd.xml")}) {
            if (auto removed = client_.delete_object(where_.bucket, full(join_key(key, relative)));
                !removed) {
                return removed;
            }
        }
        return remove_below(key);
    }

    void remove_empty_dirs(std::string_view /*key*/) override {}  // prefixes: none is left

    Result<void> point_alias(std::string_view alias, std::string_view tree,
                             RepoLock* lock) override;

    Result<std::optional<std::string>> alias_target(std::string_view alias) override {
        if (auto valid = check_key(alias); !valid) {
            return tl::unexpected(std::move(valid.error()));
        }
        auto marker = alias_marker(alias);
        if (!marker) {
            return tl::unexpected(std::move(marker.error()));
        }
        if (!*marker) {
            return std::optional<std::string>();
        }
        // Written by earlier versions without "target": the tree's name only.
        return std::optional<std::string>(
            (**marker).value("target", (**marker).value("snapshot", std::string())));
    }

    // --- for S3Tree ---

    std::string full(std::string_view key) const { return where_.key(key); }
    const std::string& endpoint() const { return config_.endpoint; }

    Result<void> put_object(std::string_view key, std::string_view bytes,
                            const s3::PutOptions& options) {
        if (auto valid = check_key(key); !valid) {
            return valid;
        }
        return client_.put_object(where_.bucket, full(key), bytes, options)
            .map([](const std::string&) {});
    }

    // Copies `copies` (each `from` a key of `source`: this store, or another of its endpoint;
    // each `to` below `to_prefix`): those of rank 0 several at a time, then the rest one by one in
    // publication_rank order.
    Result<void> copy_all(std::span<const CopyRequest> copies, std::string_view to_prefix,
                          const CopyOptions& options) {
        return copy_all(*this, copies, to_prefix, options);
    }
    Result<void> copy_all(const S3Objects& source, std::span<const CopyRequest> copies,
                          std::string_view to_prefix, const CopyOptions& options) {
        std::vector<const CopyRequest*> first;
        std::vector<const CopyRequest*> last;
        for (const CopyRequest& request : copies) {
            if (auto valid = check_key(request.from); !valid) {
                return valid;
            }
            if (auto valid = check_key(request.to); !valid) {
                return valid;
            }
            (publication_rank(request.to) == 0 ? first : last).push_back(&request);
        }
        std::stable_sort(last.begin(), last.end(), [](const auto* left, const auto* right) {
            return publication_rank(left->to) < publication_rank(right->to);
        });
        if (auto copied = copy_batch(source, first, to_prefix, options.acl); !copied) {
            return copied;
        }
        for (const CopyRequest* request : last) {
            if (auto copied = copy_batch(source, {&request, 1}, to_prefix, options.acl); !copied) {
                return copied;
            }
        }
        return {};
    }

    // Removes every object below `key` (markers included).
    Result<void> remove_below(std::string_view key) {
        auto objects = client_.list_all_objects(where_.bucket, dir_prefix(key));
        if (!objects) {
            return tl::unexpected(std::move(objects.error()));
        }
        std::vector<std::string> keys;
        for (const s3::ListedObject& object : *objects) {
            keys.push_back(object.key);
        }
        return keys.empty() ? Result<void>{} : client_.delete_objects(where_.bucket, keys);
    }

    Result<bool> has_tree_marker(std::string_view key) {
        auto head = client_.head_object(where_.bucket, full(join_key(key, kTreeMarker)));
        if (!head && head.error().code == ErrorCode::NotFound) {
            return false;
        }
        return head.map([](const s3::ObjectInfo&) { return true; });
    }

    std::chrono::system_clock::time_point now() const { return client_.store_now(); }

  private:
    std::string dir_prefix(std::string_view key) const {
        return key.empty() ? where_.prefix : full(key) + "/";
    }

    // Calls `each` with the key (relative to the root) of every object below `prefix`.
    template <typename Each>
    Result<void> listed_below(std::string_view prefix, const Each& each) {
        auto listed = client_.list_objects(
            where_.bucket, dir_prefix(prefix), [&](const s3::ListedObject& object) {
                if (object.key.starts_with(where_.prefix)) {
                    each(object.key.substr(where_.prefix.size()), object);
                }
                return Result<void>{};
            });
        return listed.map([](std::size_t) {});
    }

    // Copies `requests` (each `to` below `to_prefix`) inside the store, several at a time; a
    // pinned one with s3::copy_stored.
    Result<void> copy_batch(const S3Objects& source, std::span<const CopyRequest* const> requests,
                            std::string_view to_prefix, std::string_view acl) {
        const s3::S3Location from_root{source.where_.bucket, source.where_.prefix};
        const s3::S3Location root{where_.bucket, where_.prefix};
        std::vector<s3::StoredCopy> pinned;
        for (const CopyRequest* request : requests) {
            const std::string to = join_key(to_prefix, request->to);
            if (request->pin) {
                s3::StoredObject expected;
                expected.size = request->pin->size;
                expected.etag = request->pin->version;
                expected.checksum_type = request->pin->type;
                expected.digest = request->pin->digest;
                pinned.push_back({from_root, request->from, expected, root, to});
                continue;
            }
            auto copied = client_.copy_object(where_.bucket, full(to), source.where_.bucket,
                                              source.full(request->from), acl);
            if (!copied) {
                return tl::unexpected(std::move(copied.error()));
            }
        }
        if (pinned.size() == 1) {
            const s3::StoredCopy& copy = pinned.front();
            return s3::copy_stored(client_, copy.from, copy.from_key, copy.expected, copy.to,
                                   copy.to_key, acl)
                .map([](const s3::StoredObject&) {});
        }
        for (auto& result : s3::copy_stored_all(config_, pinned, acl)) {
            if (!result) {
                return tl::unexpected(std::move(result.error()));
            }
        }
        return {};
    }

    // The marker of `alias`, nullopt iff there is none.
    Result<std::optional<nlohmann::json>> alias_marker(std::string_view alias) {
        const std::string key = join_key(alias, kAliasMarker);
        auto body = client_.get_object(where_.bucket, full(key));
        if (!body && body.error().code == ErrorCode::NotFound) {
            return std::optional<nlohmann::json>();
        }
        if (!body) {
            return tl::unexpected(std::move(body.error()));
        }
        auto marker = parse_marker(*body, describe(key));
        if (!marker) {
            return tl::unexpected(std::move(marker.error()));
        }
        return std::optional<nlohmann::json>(std::move(*marker));
    }

    // Every object below `key`, by key relative to it.
    Result<std::map<std::string, s3::ListedObject>> objects_below(std::string_view key) {
        return s3::list_mirror(client_, s3::S3Location{where_.bucket, full(key) + "/"});
    }

    friend class S3Tree;

    s3::S3Config config_;
    s3::S3Client client_;
    s3::S3Location where_;
};

Result<void> S3Objects::point_alias(std::string_view alias, std::string_view tree, RepoLock* lock) {
    if (auto valid = check_key(alias); !valid) {
        return valid;
    }
    if (auto valid = check_key(tree); !valid) {
        return valid;
    }
    auto objects = objects_below(tree);
    if (!objects) {
        return tl::unexpected(std::move(objects.error()));
    }
    auto there = objects_below(alias);
    if (!there) {
        return tl::unexpected(std::move(there.error()));
    }
    auto previous = alias_marker(alias);
    if (!previous) {
        return tl::unexpected(std::move(previous.error()));
    }
    if (!*previous && !there->empty()) {
        return make_error(ErrorCode::Unsafe,
                          "holds objects that are not a published snapshot's; not replaced",
                          describe(alias) + "/");
    }
    std::erase_if(*objects, [](const auto& entry) { return is_own_key(entry.first); });
    // Records of the revision being replaced stay one more switch; those of the one before, and
    // files the new tree lacks, go (at the end). The marker naming the new tree is written first:
    // a switch killed halfway leaves an alias the next switch takes over, never objects it
    // refuses as not its own.
    std::set<std::string> older;
    if (*previous) {
        for (const auto& key : (**previous).value("previous_records", nlohmann::json::array())) {
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
            garbage.push_back(join_key(alias, key));
        }
    }
    const nlohmann::json marker{{"version", 1},
                                {"snapshot", name_of(tree)},
                                {"target", std::string(tree)},
                                {"previous_records", kept_records}};
    if (auto put = put_object(join_key(alias, kAliasMarker), marker.dump(), json_document());
        !put) {
        return put;
    }
    const auto pin_of = [](const s3::ListedObject& listed) {
        Pin pin;
        pin.size = listed.size;
        pin.version = listed.etag;
        return pin;
    };
    // Packages and records first: what is there already with the same size and ETag stays.
    std::vector<CopyRequest> first;
    for (const auto& [key, object] : *objects) {
        const auto found = there->find(key);
        if (publication_rank(key) != 0 ||
            (found != there->end() && found->second.size == object.size &&
             found->second.etag == object.etag)) {
            continue;
        }
        first.push_back({join_key(tree, key), key, CopyMode::Link, pin_of(object)});
    }
    if (auto copied = copy_all(first, alias, {}); !copied) {
        return copied;
    }
    // The old signatures go, each new index replaces the old in one request, then its signature
    // comes (the sync's order: an index never sits beside a signature of another), and a tree's
    // .treeinfo after every repository.
    for (const auto& [key, object] : *there) {
        if (publication_rank(key) == 2) {
            if (auto removed = client_.delete_object(where_.bucket, full(join_key(alias, key)));
                !removed) {
                return removed;
            }
        }
    }
    if (lock != nullptr) {
        if (auto held = lock->confirm(); !held) {
            return held;
        }
    }
    std::vector<CopyRequest> last;
    for (const auto& [key, object] : *objects) {
        if (publication_rank(key) != 0) {
            last.push_back({join_key(tree, key), key, CopyMode::Link, pin_of(object)});
        }
    }
    if (auto copied = copy_all(last, alias, {}); !copied) {
        return copied;
    }
    return remove(garbage);
}

S3Tree::~S3Tree() {
    if (!committed_) {
        (void)store_.remove_below(key_);
    }
}

Result<void> S3Tree::copy(std::span<const CopyRequest> copies, const CopyOptions& options) {
    return store_.copy_all(copies, key_, options);
}

Result<void> S3Tree::copy_from(ObjectStore& source, std::span<const CopyRequest> copies,
                               const CopyOptions& options) {
    const auto* from = dynamic_cast<const S3Objects*>(&source);
    if (from == nullptr || from->endpoint() != store_.endpoint()) {
        return make_error(
            ErrorCode::Unsupported,
            "cannot copy into a bucket from a store that is no bucket of its endpoint",
            source.describe(""));
    }
    return store_.copy_all(*from, copies, key_, options);
}

Result<void> S3Tree::put(std::string_view relative, std::string_view bytes) {
    if (auto valid = check_key(relative); !valid) {
        return valid;
    }
    return store_.put_object(join_key(key_, relative), bytes, {});
}

Result<void> S3Tree::commit(RepoLock* lock) {
    auto exists = store_.has_tree_marker(key_);
    if (!exists) {
        return tl::unexpected(std::move(exists.error()));
    }
    if (*exists) {
        return make_error(ErrorCode::BadInput, "exists already", store_.describe(key_));
    }
    if (lock != nullptr) {
        if (auto held = lock->confirm(); !held) {
            return held;
        }
    }
    const nlohmann::json marker{{"version", 1},
                                {"created_ns", std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                   store_.now().time_since_epoch())
                                                   .count()}};
    if (auto put = store_.put_object(join_key(key_, kTreeMarker), marker.dump(), json_document());
        !put) {
        return put;
    }
    committed_ = true;
    return {};
}

}  // namespace
}  // namespace s3_objects

std::unique_ptr<ObjectStore> s3_object_store(s3::S3Config config, s3::S3Location where) {
    return std::make_unique<s3_objects::S3Objects>(std::move(config), std::move(where));
}

}  // namespace rpmirror::store
