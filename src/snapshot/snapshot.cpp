// Snapshots, written once: snapshot/backend.hpp's Backend over one store::ObjectStore (a directory
// tree or a bucket alike: a snapshot is a tree built aside and committed whole, packages linked,
// or copied with --copy, metadata copied; a published name an alias switched at once), and the
// rules over it: names, the repository's lock, "exists already", "is published as", keep-N. The
// layout and its guarantees: rpmirror/snapshot/snapshot.hpp.
#include "rpmirror/snapshot/snapshot.hpp"
#include "checksum/hasher.hpp"
#include "snapshot/snapshot.hpp"
#include "store/destination.hpp"

#include <algorithm>
#include <ctime>
#include <map>

#include <fmt/core.h>

#include "metadata/treeinfo.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "snapshot/backend.hpp"

namespace rpmirror {

namespace snapshot {

Error no_snapshot(const SnapshotRoot& root, std::string_view name, std::string subject) {
    return Error{ErrorCode::NotFound,
                 fmt::format("no snapshot {} of repository {}", name, root.repo_id),
                 std::move(subject), 0};
}

Result<std::unique_ptr<Backend>> open_backend(const SnapshotRoot& root) {
    // The live mirror's store, and the store of the snapshot base: <base>/snapshots/<repo id>/
    // and <base>/published/ (another directory tree, another bucket of the endpoint, or around
    // the mirror).
    auto live = store::MirrorRoot::open(root.repo_dir.native(), {{}, root.s3});
    if (!live) {
        return tl::unexpected(std::move(live.error()));
    }
    auto base = store::open_object_store(root.published_dir.parent_path().native(), root.s3);
    if (!base) {
        return tl::unexpected(std::move(base.error()));
    }
    return std::make_unique<Backend>(root, std::make_unique<store::MirrorRoot>(std::move(*live)),
                                     std::move(*base));
}

Result<std::optional<LiveTree>> read_live_tree(store::MirrorStore& mirror) {
    auto text = mirror.read(kTreeinfoName);
    if (!text && text.error().code == ErrorCode::NotFound) {
        return std::nullopt;
    }
    if (!text) {
        return tl::unexpected(std::move(text.error()));
    }
    auto tree = parse_treeinfo(*text, mirror.describe(kTreeinfoName));
    if (!tree) {
        return tl::unexpected(std::move(tree.error()));
    }
    return LiveTree{std::move(*text), std::move(*tree)};
}

Backend::Backend(const SnapshotRoot& root, std::unique_ptr<store::MirrorRoot> live,
                 std::unique_ptr<store::ObjectStore> base)
    : root_(root),
      live_root_(std::move(live)),
      source_(live_root_->objects()),
      store_(std::move(base)),
      snapshots_key_("snapshots/" + root.repo_id),
      published_key_(root.published_dir.filename().string()) {}

Result<void> Backend::lock(const SnapshotLock& lock) {
    std::unique_ptr<store::MirrorStore> mirror = live_root_->repository("", lock.state_dir);
    auto held = mirror->lock_present(lock.wait);
    if (!held) {
        return tl::unexpected(std::move(held.error()));
    }
    lock_ = std::move(*held);
    mirror_ = std::move(mirror);
    live_ = std::make_unique<LiveMirror>(root_, *live_root_, lock.state_dir);
    return {};
}

std::string Backend::snapshot_key(std::string_view name) const {
    return store::join_key(snapshots_key_, name);
}

Result<bool> Backend::exists(std::string_view name) {
    return store_->tree(snapshot_key(name)).map([](const auto& created) {
        return created.has_value();
    });
}

Result<SnapshotInfo> Backend::build(const std::string& name, const SnapshotCreateOptions& options) {
    if (!live_) {
        return make_error(ErrorCode::BadInput, "the repository is not locked",
                          root_.repo_dir.string());
    }
    const std::string key = snapshot_key(name);
    const auto exists_already = [&](Error error) {
        if (error.code == ErrorCode::BadInput && error.message == "exists already") {
            return Error{
                ErrorCode::BadInput,
                fmt::format("snapshot {} of repository {} exists already", name, root_.repo_id),
                (root_.snapshots_dir / name).string(), 0};
        }
        return error;
    };
    // The build first: it removes what an interrupted one left, which unlinks live files' links
    // (a ctime change on disk) and would otherwise refuse the copies pinned by the check.
    auto build = store_->build_tree(key, "snapshot");
    if (!build) {
        return tl::unexpected(exists_already(std::move(build.error())));
    }
    auto files = live_->check(options);
    if (!files) {
        return tl::unexpected(std::move(files.error()));
    }
    std::vector<store::CopyRequest> copies;
    copies.reserve(files->size());
    for (LiveFile& file : *files) {
        const bool copy = options.copy || file.is_metadata;
        copies.push_back({file.key, file.key, copy ? store::CopyMode::Copy : store::CopyMode::Link,
                          std::move(file.pin)});
    }
    if (auto copied = (*build)->copy_from(source_, copies, {live_->acl()}); !copied) {
        Error error = std::move(copied.error());
        if (error.code == ErrorCode::Unsupported) {
            // The store refused a link ("cannot hard-link FROM to"): the way out is --copy.
            std::string what = error.message;
            if (what.ends_with(" to")) {
                what.resize(what.size() - 3);
            }
            return make_error(ErrorCode::Unsupported,
                              what +
                                  " here (snapshots must be on the mirror's filesystem, or taken "
                                  "with --copy)",
                              root_.snapshots_dir.string(), error.sys_errno);
        }
        if (error.code == ErrorCode::Corrupt) {
            return make_error(ErrorCode::Corrupt, "changed while the snapshot was taken",
                              error.subject);
        }
        return tl::unexpected(std::move(error));
    }
    if (auto committed = (*build)->commit(lock_.get()); !committed) {
        return tl::unexpected(exists_already(std::move(committed.error())));
    }
    live_->committed();
    return describe(name);
}

Result<std::pair<std::string, std::int64_t>> Backend::existing(std::string_view name) {
    const std::string key = snapshot_key(name);
    auto created = store_->tree(key);
    if (!created) {
        return tl::unexpected(std::move(created.error()));
    }
    if (!*created) {
        return tl::unexpected(no_snapshot(root_, name, store_->describe(key)));
    }
    return std::pair{key, **created};
}

Result<SnapshotInfo> Backend::describe(std::string_view name) {
    auto found = existing(name);
    if (!found) {
        return tl::unexpected(std::move(found.error()));
    }
    const auto& [key, created_ns] = *found;
    auto listing = store_->list(key);
    if (!listing) {
        return tl::unexpected(std::move(listing.error()));
    }
    SnapshotInfo info;
    info.name = std::string(name);
    info.dir = store_->describe(key);
    info.created_ns = created_ns;
    const std::string prefix = key + "/";
    for (const auto& [file, object] : *listing) {
        const std::string_view relative = std::string_view(file).substr(prefix.size());
        if (relative.starts_with(".rpmirror/")) {
            continue;  // the store's own
        }
        ++info.files;
        info.bytes += object.size;
        info.unique_bytes += object.links == 1 ? object.size : 0;
        info.packages += relative.ends_with(".rpm") ? 1 : 0;
    }
    return info;
}

Result<std::filesystem::path> Backend::location(std::string_view name) {
    auto found = existing(name);
    if (!found) {
        return tl::unexpected(std::move(found.error()));
    }
    return std::filesystem::path(store_->describe(found->first));
}

Result<std::vector<std::string>> Backend::names() {
    auto trees = store_->trees(snapshots_key_);
    if (trees) {
        // What is no snapshot name is not rpmirror's.
        std::erase_if(*trees, [](const std::string& name) {
            return !validate_snapshot_name(name, "snapshot name");
        });
    }
    return trees;
}

Result<std::multimap<std::string, std::string>> Backend::published() {
    std::multimap<std::string, std::string> by_snapshot;
    auto names = store_->list_dirs(published_key_);
    if (!names) {
        return tl::unexpected(std::move(names.error()));
    }
    for (const std::string& published_name : *names) {
        auto target = store_->alias_target(
            store::join_key(store::join_key(published_key_, published_name), root_.repo_id));
        if (!target) {
            return tl::unexpected(std::move(target.error()));
        }
        if (!*target) {
            continue;
        }
        // Markers written before aliases named their tree's key hold the snapshot's name only.
        if ((*target)->find('/') == std::string::npos) {
            by_snapshot.emplace(**target, published_name);
        } else if (store::parent_of(**target) == snapshots_key_) {
            by_snapshot.emplace(store::name_of(**target), published_name);
        }
    }
    return by_snapshot;
}

Result<void> Backend::point(std::string_view published_name, std::string_view name) {
    return store_->point_alias(
        store::join_key(store::join_key(published_key_, published_name), root_.repo_id),
        snapshot_key(name), lock_.get());
}

Result<void> Backend::erase(const SnapshotInfo& info) {
    return store_->remove_tree(snapshot_key(info.name));
}

Result<std::optional<std::string>> Backend::read_small(std::optional<std::string_view> name,
                                                       std::string_view key) {
    auto read = name ? store_->read(store::join_key(snapshot_key(*name), key)) : source_.read(key);
    if (!read) {
        if (read.error().code == ErrorCode::NotFound) {
            return std::optional<std::string>();
        }
        return tl::unexpected(std::move(read.error()));
    }
    return std::optional<std::string>(std::move(*read));
}

}  // namespace snapshot

namespace {

constexpr std::size_t kMaxNameBytes = 200;

// The backend of `root`, holding the repository's lock.
Result<std::unique_ptr<snapshot::Backend>> locked_backend(const SnapshotRoot& root,
                                                          const SnapshotLock& lock) {
    auto backend = snapshot::open_backend(root);
    if (!backend) {
        return backend;
    }
    if (auto held = (*backend)->lock(lock); !held) {
        return tl::unexpected(std::move(held.error()));
    }
    return backend;
}

// Every snapshot of `backend`, oldest first (by created_ns, then name), with its published names.
Result<std::vector<SnapshotInfo>> sorted_snapshots(snapshot::Backend& backend) {
    auto names = backend.names();
    if (!names) {
        return tl::unexpected(std::move(names.error()));
    }
    auto published = backend.published();
    if (!published) {
        return tl::unexpected(std::move(published.error()));
    }
    std::vector<SnapshotInfo> snapshots;
    for (const std::string& name : *names) {
        auto info = backend.describe(name);
        if (!info) {
            return tl::unexpected(std::move(info.error()));
        }
        snapshots.push_back(std::move(*info));
    }
    for (SnapshotInfo& info : snapshots) {
        for (auto [it, end] = published->equal_range(info.name); it != end; ++it) {
            info.published_as.push_back(it->second);
        }
        std::sort(info.published_as.begin(), info.published_as.end());
    }
    std::sort(snapshots.begin(), snapshots.end(),
              [](const SnapshotInfo& left, const SnapshotInfo& right) {
                  return left.created_ns != right.created_ns ? left.created_ns < right.created_ns
                                                             : left.name < right.name;
              });
    return snapshots;
}

// remove_snapshot with the lock held.
Result<SnapshotInfo> remove_locked(snapshot::Backend& backend, std::string_view name) {
    auto info = backend.describe(name);
    if (!info) {
        return info;
    }
    auto published = backend.published();
    if (!published) {
        return tl::unexpected(std::move(published.error()));
    }
    std::vector<std::string> names;
    for (auto [it, end] = published->equal_range(std::string(name)); it != end; ++it) {
        names.push_back(it->second);
    }
    if (!names.empty()) {
        std::sort(names.begin(), names.end());
        std::string list;
        for (const std::string& published_name : names) {
            list += (list.empty() ? "" : ", ") + published_name;
        }
        return make_error(ErrorCode::BadInput,
                          fmt::format("is published as {}; publish another snapshot under that "
                                      "name first",
                                      list),
                          info->dir.string());
    }
    if (auto erased = backend.erase(*info); !erased) {
        return tl::unexpected(std::move(erased.error()));
    }
    return info;
}

}  // namespace

Result<SnapshotRoot> snapshot_root(std::string_view repo_id, const std::filesystem::path& repo_dir,
                                   const std::filesystem::path& base,
                                   const std::optional<s3::S3Overrides>& store) {
    SnapshotRoot root;
    root.repo_id = std::string(repo_id);
    root.s3 = store;
    const store::Destination mirror = store::Destination::of(repo_dir.native());
    const store::Destination above = store::Destination::of(base.native());
    if (!mirror.same_medium(above)) {
        return make_error(ErrorCode::BadInput,
                          mirror.in_bucket()
                              ? "the snapshots of an s3:// mirror are kept in its store: "
                                "give an s3:// --snapshot-dir"
                              : "the snapshots of a local mirror are kept beside it (hard "
                                "links): give a local --snapshot-dir",
                          base.string());
    }
    for (const store::Destination& place : {mirror, above}) {
        if (auto parsed = store::Destination::parse(place.given()); !parsed) {
            return tl::unexpected(std::move(parsed.error()));
        }
    }
    // The store's settings iff the mirror is in a bucket (each unset one from the environment).
    root.s3 = mirror.in_bucket() ? std::optional(store.value_or(s3::S3Overrides{})) : std::nullopt;
    root.repo_dir = mirror.path();
    const store::Destination snapshots = above.join("snapshots");
    root.snapshots_dir = snapshots.join(repo_id).path();
    root.published_dir = above.join("published").path();
    for (const std::filesystem::path& reserved : {snapshots.path(), root.published_dir}) {
        if (root.repo_dir == reserved || root.repo_dir.parent_path() == reserved) {
            return make_error(ErrorCode::BadInput,
                              mirror.in_bucket()
                                  ? "the repository is where snapshots would be kept; choose "
                                    "another --snapshot-dir"
                                  : "the repository directory is where snapshots would be kept; "
                                    "choose another --snapshot-dir",
                              root.repo_dir.string());
        }
    }
    return root;
}

Result<void> validate_snapshot_name(std::string_view name, std::string_view what) {
    const auto bad = [&](std::string_view why) {
        return make_error(ErrorCode::BadInput, fmt::format("invalid {}: {}", what, why),
                          std::string(name));
    };
    if (name.empty()) {
        return bad("empty");
    }
    if (name.size() > kMaxNameBytes) {
        return bad(fmt::format("longer than {} bytes", kMaxNameBytes));
    }
    if (name.starts_with('.')) {
        return bad("starts with '.' (reserved for temporary names; '.' and '..' are not names)");
    }
    for (const char c : name) {
        if (c == '/') {
            return bad("contains '/'");
        }
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
            return bad("contains a control character");
        }
    }
    return {};
}

std::string default_snapshot_name(std::chrono::system_clock::time_point when) {
    const std::time_t seconds = std::chrono::system_clock::to_time_t(when);
    std::tm utc{};
    ::gmtime_r(&seconds, &utc);
    std::array<char, 32> text{};
    const std::size_t length = std::strftime(text.data(), text.size(), "%Y%m%dT%H%M%SZ", &utc);
    return std::string(text.data(), length);
}

// What a snapshot of the mirror holds, in a few bytes, as `backend` reads it from snapshot `name`
// or the live mirror (nullopt): .treeinfo and, for every repository (the tree's, or the mirror's
// own), the SHA-256 of its repomd.xml, repomd.xml.asc and comps.xml ("-" for one absent). Two
// equal identities hold the same packages and metadata: repomd.xml lists every record by
// checksum, and the records every package.
Result<std::string> mirror_identity(snapshot::Backend& backend,
                                    std::optional<std::string_view> name) {
    std::string identity;
    const auto add = [&](const std::string& key) -> Result<void> {
        auto read = backend.read_small(name, key);
        if (!read) {
            return tl::unexpected(std::move(read.error()));
        }
        identity += key + "=" + (*read ? hash_bytes(ChecksumType::Sha256, **read) : "-") + "\n";
        return {};
    };
    auto treeinfo = backend.read_small(name, kTreeinfoName);
    if (!treeinfo) {
        return tl::unexpected(std::move(treeinfo.error()));
    }
    std::vector<std::string> parts{""};
    if (*treeinfo) {
        identity += ".treeinfo=" + hash_bytes(ChecksumType::Sha256, **treeinfo) + "\n";
        auto tree = parse_treeinfo(**treeinfo, std::string(kTreeinfoName));
        if (!tree) {
            return tl::unexpected(std::move(tree.error()));
        }
        parts = tree->repositories;
    }
    for (const std::string& part : parts) {
        const std::string prefix = part.empty() ? "" : part + "/";
        for (const char* key : {"repodata/repomd.xml", "repodata/repomd.xml.asc", "comps.xml"}) {
            if (auto added = add(prefix + key); !added) {
                return tl::unexpected(std::move(added.error()));
            }
        }
    }
    return identity;
}

Result<SnapshotInfo> create_snapshot(const SnapshotRoot& root,
                                     const SnapshotCreateOptions& options) {
    const std::string name =
        options.name.value_or(default_snapshot_name(std::chrono::system_clock::now()));
    if (auto valid = validate_snapshot_name(name, "snapshot name"); !valid) {
        return tl::unexpected(std::move(valid.error()));
    }
    auto backend = locked_backend(root, options.lock);
    if (!backend) {
        return tl::unexpected(std::move(backend.error()));
    }
    if (options.only_if_changed) {
        auto snapshots = sorted_snapshots(**backend);
        if (!snapshots) {
            return tl::unexpected(std::move(snapshots.error()));
        }
        // An export's snapshot is the far side's state, kept for the next --base, not one of the
        // mirror's dated history: a sync's snapshot is never skipped for it (nor reported as it).
        std::erase_if(*snapshots, [](const SnapshotInfo& info) {
            return info.name.starts_with(kExportSnapshotPrefix);
        });
        if (!snapshots->empty()) {
            auto newest = mirror_identity(**backend, snapshots->back().name);
            auto live = mirror_identity(**backend, std::nullopt);
            if (!live) {
                return tl::unexpected(std::move(live.error()));
            }
            // A newest snapshot that cannot be read is no reason to skip: one is taken.
            if (newest && *newest == *live) {
                SnapshotInfo same = std::move(snapshots->back());
                same.unchanged = true;
                return same;
            }
        }
    }
    auto exists = (*backend)->exists(name);
    if (!exists) {
        return tl::unexpected(std::move(exists.error()));
    }
    if (*exists) {
        return make_error(
            ErrorCode::BadInput,
            fmt::format("snapshot {} of repository {} exists already", name, root.repo_id),
            (root.snapshots_dir / name).string());
    }
    return (*backend)->build(name, options);
}

Result<std::vector<SnapshotInfo>> list_snapshots(const SnapshotRoot& root) {
    auto backend = snapshot::open_backend(root);
    if (!backend) {
        return tl::unexpected(std::move(backend.error()));
    }
    return sorted_snapshots(**backend);
}

Result<void> publish_snapshot(const SnapshotRoot& root, std::string_view name,
                              std::string_view published_name, const SnapshotLock& lock) {
    if (auto valid = validate_snapshot_name(published_name, "published name"); !valid) {
        return valid;
    }
    if (auto valid = validate_snapshot_name(name, "snapshot name"); !valid) {
        return valid;
    }
    auto backend = locked_backend(root, lock);
    if (!backend) {
        return tl::unexpected(std::move(backend.error()));
    }
    if (auto info = (*backend)->describe(name); !info) {
        return tl::unexpected(std::move(info.error()));
    }
    return (*backend)->point(published_name, name);
}

Result<std::filesystem::path> snapshot_location(const SnapshotRoot& root, std::string_view name) {
    if (auto valid = validate_snapshot_name(name, "snapshot name"); !valid) {
        return tl::unexpected(std::move(valid.error()));
    }
    auto backend = snapshot::open_backend(root);
    if (!backend) {
        return tl::unexpected(std::move(backend.error()));
    }
    return (*backend)->location(name);
}

Result<std::string> published_snapshot(const SnapshotRoot& root, std::string_view published_name) {
    if (auto valid = validate_snapshot_name(published_name, "published name"); !valid) {
        return tl::unexpected(std::move(valid.error()));
    }
    auto backend = snapshot::open_backend(root);
    if (!backend) {
        return tl::unexpected(std::move(backend.error()));
    }
    auto published = (*backend)->published();
    if (!published) {
        return tl::unexpected(std::move(published.error()));
    }
    for (const auto& [snapshot_name, name] : *published) {
        if (name == published_name) {
            return snapshot_name;
        }
    }
    return make_error(ErrorCode::NotFound, "no published name of that repository",
                      (root.published_dir / published_name / root.repo_id).string());
}

Result<SnapshotInfo> remove_snapshot(const SnapshotRoot& root, std::string_view name,
                                     const SnapshotLock& lock) {
    if (auto valid = validate_snapshot_name(name, "snapshot name"); !valid) {
        return tl::unexpected(std::move(valid.error()));
    }
    auto backend = locked_backend(root, lock);
    if (!backend) {
        return tl::unexpected(std::move(backend.error()));
    }
    return remove_locked(**backend, name);
}

Result<std::vector<SnapshotInfo>> prune_snapshots(const SnapshotRoot& root, std::size_t keep,
                                                  const SnapshotLock& lock) {
    auto backend = locked_backend(root, lock);
    if (!backend) {
        return tl::unexpected(std::move(backend.error()));
    }
    auto snapshots = sorted_snapshots(**backend);
    if (!snapshots) {
        return tl::unexpected(std::move(snapshots.error()));
    }
    // An export's base is the far side's state, not the mirror's history: never rotated out.
    std::erase_if(*snapshots, [](const SnapshotInfo& info) {
        return info.name.starts_with(kExportSnapshotPrefix);
    });
    std::vector<SnapshotInfo> removed;
    const std::size_t older = snapshots->size() > keep ? snapshots->size() - keep : 0;
    for (std::size_t index = 0; index < older; ++index) {
        const SnapshotInfo& candidate = (*snapshots)[index];
        if (!candidate.published_as.empty()) {
            continue;
        }
        auto gone = remove_locked(**backend, candidate.name);
        if (!gone) {
            return tl::unexpected(std::move(gone.error()));
        }
        removed.push_back(std::move(*gone));
    }
    return removed;
}

}  // namespace rpmirror
