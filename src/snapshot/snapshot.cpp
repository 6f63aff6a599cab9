// The snapshot rules, written once over the backends of snapshot/backend.hpp (a directory tree,
// a bucket): names, the repository's lock, "exists already", "is published as", keep-N. The
// layout and its guarantees: rpmirror/snapshot/snapshot.hpp.
#include "rpmirror/snapshot/snapshot.hpp"

#include <algorithm>
#include <array>
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
    if (root.s3) {
        return s3_backend(root);
    }
    return local_backend(root);
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
    const bool s3_mirror = s3::is_s3_url(repo_dir.native());
    if (s3_mirror != s3::is_s3_url(base.native())) {
        return make_error(ErrorCode::BadInput,
                          s3_mirror ? "the snapshots of an s3:// mirror are kept in its store: "
                                      "give an s3:// --snapshot-dir"
                                    : "the snapshots of a local mirror are kept beside it (hard "
                                      "links): give a local --snapshot-dir",
                          base.string());
    }
    if (s3_mirror) {
        // URLs, never normalised as paths ("s3://" is not "s3:/").
        const auto without_slash = [](std::string text) {
            while (text.ends_with('/')) {
                text.pop_back();
            }
            return text;
        };
        for (const std::filesystem::path& url : {repo_dir, base}) {
            if (auto location = s3::S3Location::parse(url.native()); !location) {
                return tl::unexpected(std::move(location.error()));
            }
        }
        if (!root.s3) {
            root.s3.emplace();
        }
        root.repo_dir = without_slash(repo_dir.native());
        root.snapshots_dir = without_slash(base.native()) + "/snapshots/" + std::string(repo_id);
        root.published_dir = without_slash(base.native()) + "/published";
        for (const std::filesystem::path& reserved :
             {root.snapshots_dir.parent_path(), root.published_dir}) {
            if (root.repo_dir == reserved || root.repo_dir.parent_path() == reserved) {
                return make_error(ErrorCode::BadInput,
                                  "the repository is where snapshots would be kept; choose "
                                  "another --snapshot-dir",
                                  root.repo_dir.string());
            }
        }
        return root;
    }
    root.s3.reset();
    root.repo_dir = std::filesystem::absolute(repo_dir).lexically_normal();
    const std::filesystem::path absolute_base = std::filesystem::absolute(base).lexically_normal();
    root.snapshots_dir = absolute_base / "snapshots" / repo_id;
    root.published_dir = absolute_base / "published";
    for (const auto& reserved : {absolute_base / "snapshots", root.published_dir}) {
        if (root.repo_dir == reserved || root.repo_dir.parent_path() == reserved) {
            return make_error(ErrorCode::BadInput,
                              "the repository directory is where snapshots would be kept; "
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
    return (*backend)->describe(name).map([](SnapshotInfo info) { return std::move(info.dir); });
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
