// `rpmirror export`: a mirror's repositories into a bundle (rpmirror/export/export.hpp), read
// through the store, so a directory and a bucket are exported alike.
#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include <fmt/core.h>

#include "export/chunks.hpp"
#include "export/manifest.hpp"
#include "export/repository_files.hpp"
#include "fs/durable.hpp"
#include "fs/scratch_dir.hpp"
#include "fs/tree.hpp"
#include "rpmirror/export/export.hpp"
#include "rpmirror/snapshot/snapshot.hpp"
#include "signature/signature.hpp"
#include "snapshot/snapshot.hpp"
#include "store/mirror_root.hpp"

namespace rpmirror {

namespace {

using bundle::BaseIdentity;
using bundle::BundleFile;
using bundle::Manifest;

// What the far side holds: its identity and each repository's files by key.
struct Base {
    BaseIdentity identity;
    std::map<std::string, std::map<std::string, BundleFile>> files;
};

// `listed` of the repository at `prefix` of `store`, hashed, with its local file.
Result<std::pair<BundleFile, bundle::LocalFile>> hashed_file(store::ObjectStore& store,
                                                             std::string_view prefix,
                                                             const bundle::ListedFile& listed,
                                                             const std::filesystem::path& scratch) {
    auto local = bundle::local_file(store, store::join_key(prefix, listed.key), scratch);
    if (!local) {
        return tl::unexpected(std::move(local.error()));
    }
    auto digest = bundle::sha256_of(local->path());
    if (!digest) {
        return tl::unexpected(std::move(digest.error()));
    }
    return std::pair{BundleFile{listed.key, listed.size, std::move(*digest), std::nullopt},
                     std::move(*local)};
}

Result<Base> base_from_bundle(const std::filesystem::path& dir,
                              const std::vector<std::string>& ids) {
    const std::filesystem::path path = dir / bundle::kManifestName;
    auto text = fs::read_file(path);
    if (!text) {
        return tl::unexpected(std::move(text.error()));
    }
    auto manifest = bundle::parse_manifest(*text, path.string());
    if (!manifest) {
        return tl::unexpected(std::move(manifest.error()));
    }
    Base base;
    base.identity = bundle::identity_after(*manifest);
    for (bundle::BundleRepository& repository : manifest->repositories) {
        for (BundleFile& file : repository.files) {
            file.carried.reset();
            base.files[repository.id].emplace(file.key, std::move(file));
        }
    }
    for (const std::string& id : ids) {
        base.identity.repositories.try_emplace(id, std::nullopt);
    }
    return base;
}

std::filesystem::path snapshots_base(const ExportOptions& options) {
    return options.snapshot_dir.empty() ? std::filesystem::path(options.destination)
                                        : options.snapshot_dir;
}

// The base `given` (--base) as the snapshot `name` of each of `ids` (none found: nullopt).
Result<std::optional<Base>> base_from_snapshot(const ExportOptions& options,
                                               store::MirrorRoot& root,
                                               const std::vector<std::string>& ids,
                                               const std::string& given, const std::string& name,
                                               const std::filesystem::path& scratch) {
    Base base;
    base.identity.name = given;
    bool found_any = false;
    for (const std::string& id : ids) {
        auto layout =
            snapshot_root(id, root.repository_path(id), snapshots_base(options), options.s3);
        if (!layout) {
            return tl::unexpected(std::move(layout.error()));
        }
        auto location = snapshot_location(*layout, name);
        if (!location && location.error().code == ErrorCode::NotFound) {
            base.identity.repositories[id] = std::nullopt;
            continue;
        }
        if (!location) {
            return tl::unexpected(std::move(location.error()));
        }
        auto store = store::open_object_store(location->string(), options.s3);
        if (!store) {
            return tl::unexpected(std::move(store.error()));
        }
        auto files = bundle::list_repository(**store, "");
        if (!files) {
            return tl::unexpected(std::move(files.error()));
        }
        found_any = true;
        for (const bundle::ListedFile& listed : *files) {
            auto file = hashed_file(**store, "", listed, scratch / "base");
            if (!file) {
                return tl::unexpected(std::move(file.error()));
            }
            if (file->first.key == store::kIndexKey) {
                base.identity.repositories[id] = file->first.sha256;
            }
            base.files[id].emplace(file->first.key, std::move(file->first));
        }
    }
    if (!found_any) {
        return std::nullopt;
    }
    return base;
}

// --base auto: the bundle name of the newest snapshot export-NAME every repository of `ids` holds
// (nullopt: none does, the bundle is complete).
Result<std::optional<std::string>> newest_export(const ExportOptions& options,
                                                 store::MirrorRoot& root,
                                                 const std::vector<std::string>& ids) {
    struct Held {
        std::size_t repositories = 0;
        std::int64_t newest_ns = 0;
    };
    std::map<std::string, Held> held;
    for (const std::string& id : ids) {
        auto layout =
            snapshot_root(id, root.repository_path(id), snapshots_base(options), options.s3);
        if (!layout) {
            return tl::unexpected(std::move(layout.error()));
        }
        auto snapshots = list_snapshots(*layout);
        if (!snapshots) {
            return tl::unexpected(std::move(snapshots.error()));
        }
        for (const SnapshotInfo& info : *snapshots) {
            if (info.name.starts_with(kExportSnapshotPrefix)) {
                Held& counted = held[info.name];
                ++counted.repositories;
                counted.newest_ns = std::max(counted.newest_ns, info.created_ns);
            }
        }
    }
    std::optional<std::string> newest;
    std::int64_t newest_ns = 0;
    for (const auto& [name, counted] : held) {
        if (counted.repositories == ids.size() && (!newest || counted.newest_ns >= newest_ns)) {
            newest = name.substr(kExportSnapshotPrefix.size());
            newest_ns = counted.newest_ns;
        }
    }
    return newest;
}

// The base --base names: a bundle directory (its manifest), a snapshot, or the name of a bundle
// exported here (its snapshot export-NAME).
Result<Base> load_base(const ExportOptions& options, store::MirrorRoot& root,
                       const std::vector<std::string>& ids, const std::filesystem::path& scratch) {
    const std::string& given = *options.base;
    if (std::filesystem::is_regular_file(std::filesystem::path(given) / bundle::kManifestName)) {
        return base_from_bundle(given, ids);
    }
    if (auto valid = validate_snapshot_name(given, "--base"); !valid) {
        return tl::unexpected(std::move(valid.error()));
    }
    for (const std::string& name : {given, bundle::export_snapshot_name(given)}) {
        auto base = base_from_snapshot(options, root, ids, given, name, scratch);
        if (!base || *base) {
            return base ? Result<Base>(std::move(**base)) : tl::unexpected(std::move(base.error()));
        }
    }
    return make_error(ErrorCode::BadInput,
                      fmt::format("neither a bundle directory (with {}) nor a snapshot {} or {} of "
                                  "any of the repositories exported under {} (removed? `rpmirror "
                                  "snapshot list` shows those kept); give the far side's bundle "
                                  "directory, or make a complete bundle (no --base)",
                                  bundle::kManifestName, given, bundle::export_snapshot_name(given),
                                  snapshots_base(options).string()),
                      "--base " + given);
}

// A directory removed with everything in it unless kept.
class TemporaryBundle {
  public:
    explicit TemporaryBundle(std::filesystem::path path) : path_(std::move(path)) {}
    TemporaryBundle(const TemporaryBundle&) = delete;
    TemporaryBundle& operator=(const TemporaryBundle&) = delete;
    ~TemporaryBundle() {
        if (!path_.empty()) {
            (void)fs::remove_tree(path_);  // best effort: a leftover is a dot-named sibling
        }
    }
    const std::filesystem::path& path() const { return path_; }
    void keep() { path_.clear(); }

  private:
    std::filesystem::path path_;
};

// The repository `id` at `prefix` of `objects` into `writer` (its files end to end, or each whole
// at repos/<id>/<key> in layout Trees): a file the base (`held`, nullptr: none) holds with the
// same size is hashed first and carried only if its content differs; every other one is hashed
// as it is copied. Counts into `done`.
Result<bundle::BundleRepository> export_repository(
    store::ObjectStore& objects, std::string_view prefix, const std::string& id,
    const std::map<std::string, BundleFile>* held, bundle::Layout layout,
    bundle::ChunkWriter& writer, const std::filesystem::path& scratch, ExportedRepository& done) {
    auto files = bundle::list_repository(objects, prefix);
    if (!files) {
        return tl::unexpected(std::move(files.error()));
    }
    bundle::BundleRepository repository;
    repository.id = id;
    done.files = files->size();
    std::set<std::string> keys;
    for (const bundle::ListedFile& listed : *files) {
        keys.insert(listed.key);
        const BundleFile* before = nullptr;
        if (held != nullptr) {
            const auto found = held->find(listed.key);
            if (found != held->end() && found->second.size == listed.size) {
                before = &found->second;
            }
        }
        const std::string key = store::join_key(prefix, listed.key);
        auto local = bundle::local_file(objects, key, scratch);
        if (!local) {
            return tl::unexpected(std::move(local.error()));
        }
        BundleFile file{listed.key, listed.size, {}, std::nullopt};
        if (before != nullptr) {
            auto digest = bundle::sha256_of(local->path());
            if (!digest) {
                return tl::unexpected(std::move(digest.error()));
            }
            file.sha256 = std::move(*digest);
        }
        if (before == nullptr || file.sha256 != before->sha256) {
            const auto expected = before != nullptr ? std::optional(file.sha256) : std::nullopt;
            auto placed =
                layout == bundle::Layout::Trees
                    ? writer.append_whole(
                          fmt::format("{}/{}/{}", bundle::kTreesDir, id, listed.key), local->path(),
                          listed.size, expected, objects.describe(key))
                    : writer.append(local->path(), listed.size, expected, objects.describe(key));
            if (!placed) {
                return tl::unexpected(std::move(placed.error()));
            }
            file.carried = placed->first;
            file.sha256 = std::move(placed->second);
            ++done.carried;
            done.carried_bytes += file.size;
        }
        if (file.key == store::kIndexKey) {
            repository.repomd_sha256 = file.sha256;
        }
        repository.files.push_back(std::move(file));
    }
    if (held != nullptr) {
        for (const auto& [key, file] : *held) {
            if (!keys.contains(key)) {
                repository.removed.push_back(key);
            }
        }
    }
    done.removed = repository.removed.size();
    return repository;
}

// The snapshots export-<bundle> taken of the repositories exported, removed unless kept (the
// bundle was not made).
class ExportSnapshots {
  public:
    ExportSnapshots(const ExportOptions& options, std::string name)
        : options_(options), name_(std::move(name)) {}
    ExportSnapshots(const ExportSnapshots&) = delete;
    ExportSnapshots& operator=(const ExportSnapshots&) = delete;
    ~ExportSnapshots() {
        for (const SnapshotRoot& layout : taken_) {
            (void)remove_snapshot(layout, name_, lock());
        }
    }

    // Takes the snapshot of `id` (refused if one of that name exists: an earlier export of a
    // bundle of the same name keeps it) and returns the store it is read through.
    Result<std::unique_ptr<store::ObjectStore>> take(store::MirrorRoot& root,
                                                     const std::string& id) {
        auto layout =
            snapshot_root(id, root.repository_path(id), snapshots_base(options_), options_.s3);
        if (!layout) {
            return tl::unexpected(std::move(layout.error()));
        }
        if (auto there = snapshot_location(*layout, name_); there) {
            return make_error(ErrorCode::BadInput,
                              fmt::format("snapshot {} of repository {} exists already (an earlier "
                                          "export of a bundle of this name); remove it with "
                                          "`rpmirror snapshot remove` or name the bundle otherwise",
                                          name_, id),
                              there->string());
        }
        SnapshotCreateOptions create;
        create.name = name_;
        create.lock = lock();
        create.copy = options_.copy;
        auto created = create_snapshot(*layout, create);
        if (!created) {
            return tl::unexpected(std::move(created.error()));
        }
        taken_.push_back(*layout);
        auto location = snapshot_location(*layout, name_);
        if (!location) {
            return tl::unexpected(std::move(location.error()));
        }
        return store::open_object_store(location->string(), options_.s3);
    }

    const std::string& name() const { return name_; }
    void keep() { taken_.clear(); }

  private:
    SnapshotLock lock() const { return SnapshotLock{options_.state_dir, std::nullopt}; }

    const ExportOptions& options_;
    std::string name_;
    std::vector<SnapshotRoot> taken_;
};

// --keep-exports: the export-* snapshots of each of `ids` but the newest `keep` (`taken`, the
// one the bundle just made names, always kept) and the published ones, removed; into `report`.
void prune_exports(const ExportOptions& options, store::MirrorRoot& root,
                   const std::vector<std::string>& ids, const std::string& taken,
                   ExportReport& report) {
    for (const std::string& id : ids) {
        auto layout =
            snapshot_root(id, root.repository_path(id), snapshots_base(options), options.s3);
        auto snapshots = layout ? list_snapshots(*layout)
                                : Result<std::vector<SnapshotInfo>>(tl::unexpected(layout.error()));
        if (!snapshots) {
            report.warnings.push_back(
                id + ": export snapshots not pruned: " + snapshots.error().to_string());
            continue;
        }
        std::vector<SnapshotInfo> older;
        for (SnapshotInfo& info : *snapshots) {
            if (info.name.starts_with(kExportSnapshotPrefix) && info.name != taken &&
                info.published_as.empty()) {
                older.push_back(std::move(info));
            }
        }
        // Newest first; the one just taken is the first kept.
        std::sort(older.begin(), older.end(), [](const SnapshotInfo& a, const SnapshotInfo& b) {
            return a.created_ns != b.created_ns ? a.created_ns > b.created_ns : a.name > b.name;
        });
        for (std::size_t index = options.keep_exports - 1; index < older.size(); ++index) {
            const std::string& name = older[index].name;
            auto removed =
                remove_snapshot(*layout, name, SnapshotLock{options.state_dir, std::nullopt});
            if (!removed) {
                report.warnings.push_back(id + ": snapshot " + name +
                                          " not pruned: " + removed.error().to_string());
                continue;
            }
            report.pruned.push_back(id + ": " + name);
        }
    }
}

Result<std::vector<std::string>> chosen_repositories(const ExportOptions& options,
                                                     store::MirrorRoot& root) {
    if (!options.repositories.empty()) {
        return options.repositories;
    }
    auto contents = root.discover();
    if (!contents) {
        return tl::unexpected(std::move(contents.error()));
    }
    std::vector<std::string> ids;
    for (const std::string& id : contents->repositories) {
        if (id.find('/') == std::string::npos) {
            ids.push_back(id);
        }
    }
    if (ids.empty()) {
        return make_error(ErrorCode::BadInput, "no repository to export here", root.describe());
    }
    return ids;
}

}  // namespace

Result<ExportReport> export_bundle(const ExportOptions& options) {
    const std::filesystem::path target = std::filesystem::absolute(options.bundle);
    std::error_code error;
    if (std::filesystem::symlink_status(target, error).type() !=
        std::filesystem::file_type::not_found) {
        return make_error(ErrorCode::BadInput, "exists already; give a new directory",
                          target.string());
    }
    if (target.filename().empty() || target.filename().string().front() == '.') {
        return make_error(ErrorCode::BadInput, "cannot name a bundle", target.string());
    }
    auto opened = store::MirrorRoot::open(options.destination, {options.state_dir, options.s3});
    if (!opened) {
        return tl::unexpected(std::move(opened.error()));
    }
    store::MirrorRoot& root = *opened;
    auto ids = chosen_repositories(options, root);
    if (!ids) {
        return tl::unexpected(std::move(ids.error()));
    }
    auto scratch = ScratchDir::create("rpmirror-export");
    if (!scratch) {
        return tl::unexpected(std::move(scratch.error()));
    }
    if (options.syncable && options.base) {
        return make_error(ErrorCode::BadInput,
                          "a syncable bundle is complete (plain repository trees dnf reads); "
                          "drop --base, or make an importable incremental bundle",
                          "--format syncable");
    }
    if (auto valid = validate_snapshot_name(
            bundle::export_snapshot_name(target.filename().string()), "the bundle's snapshot name");
        !valid) {
        return tl::unexpected(std::move(valid.error()));
    }
    ExportOptions resolved = options;
    if (options.base == kExportBaseAuto) {
        auto newest = newest_export(options, root, *ids);
        if (!newest) {
            return tl::unexpected(std::move(newest.error()));
        }
        resolved.base = std::move(*newest);
    }
    std::optional<Base> base;
    if (resolved.base) {
        auto loaded = load_base(resolved, root, *ids, scratch->path());
        if (!loaded) {
            return tl::unexpected(std::move(loaded.error()));
        }
        base = std::move(*loaded);
    }
    std::string pattern =
        (target.parent_path() / ("." + target.filename().string() + ".exporting-XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr) {
        return make_errno_error("cannot create the bundle's temporary directory", pattern, errno);
    }
    TemporaryBundle temporary(pattern);
    bundle::ChunkWriter writer(temporary.path(), options.chunk_size);
    Manifest manifest;
    manifest.tool_version = RPMIRROR_VERSION;
    manifest.name = target.filename().string();
    manifest.layout = options.syncable ? bundle::Layout::Trees : bundle::Layout::Chunks;
    ExportSnapshots snapshots(options, bundle::export_snapshot_name(manifest.name));
    ExportReport report;
    report.bundle = target;
    for (const std::string& id : *ids) {
        // The state exported is the snapshot's: what the next --base compares with.
        auto exported = snapshots.take(root, id);
        if (!exported) {
            return tl::unexpected(std::move(exported.error()));
        }
        ExportedRepository done{id, 0, 0, 0, 0};
        auto repository =
            export_repository(**exported, "", id, base ? &base->files[id] : nullptr,
                              manifest.layout, writer, scratch->path() / "live", done);
        if (!repository) {
            return tl::unexpected(std::move(repository.error()));
        }
        report.repositories.push_back(done);
        manifest.repositories.push_back(std::move(*repository));
    }
    auto chunks = writer.finish();
    if (!chunks) {
        return tl::unexpected(std::move(chunks.error()));
    }
    manifest.chunks = std::move(*chunks);
    if (base) {
        manifest.base = base->identity;
        report.base = base->identity.name;
    }
    manifest.snapshot = snapshots.name();
    for (const bundle::Chunk& chunk : manifest.chunks) {
        report.bytes += chunk.size;
    }
    report.chunks = manifest.chunks.size();
    const std::string text = bundle::format_manifest(manifest);
    if (auto wrote = fs::write_file(temporary.path() / bundle::kManifestName, text); !wrote) {
        return tl::unexpected(std::move(wrote.error()));
    }
    if (!options.sign_key.empty()) {
        auto signature = sign_detached(text, options.sign_key);
        if (!signature) {
            return tl::unexpected(std::move(signature.error()));
        }
        if (auto wrote = fs::write_file(temporary.path() / bundle::kSignatureName, *signature);
            !wrote) {
            return tl::unexpected(std::move(wrote.error()));
        }
        report.signed_manifest = true;
    }
    if (auto flushed = fs::flush_filesystem(temporary.path()); !flushed) {
        return tl::unexpected(std::move(flushed.error()));
    }
    if (auto renamed = fs::rename_file(temporary.path(), target); !renamed) {
        return tl::unexpected(std::move(renamed.error()));
    }
    temporary.keep();
    snapshots.keep();
    report.snapshot = snapshots.name();
    if (options.keep_exports > 0) {
        prune_exports(options, root, *ids, report.snapshot, report);
    }
    return report;
}

}  // namespace rpmirror
