// `rpmirror import`: a bundle checked whole, then placed into a mirror as a sync places what it
// fetched (rpmirror/export/export.hpp), through the sync's own store: SyncStore's lock, staging
// area and publication, so a directory and a bucket are imported alike.
#include <map>
#include <memory>
#include <set>
#include <utility>

#include <fmt/core.h>

#include "export/bundle_check.hpp"
#include "export/chunks.hpp"
#include "export/manifest.hpp"
#include "export/repository_files.hpp"
#include "fs/durable.hpp"
#include "fs/scratch_dir.hpp"
#include "fs/tree.hpp"
#include "publish/publish.hpp"
#include "rpmirror/export/export.hpp"
#include "rpmirror/snapshot/snapshot.hpp"
#include "snapshot/snapshot.hpp"
#include "store/mirror_root.hpp"
#include "store/sync_store.hpp"
#include "sync/sync_settings.hpp"

namespace rpmirror {

namespace {

using bundle::BundleFile;
using bundle::BundleRepository;
using bundle::Manifest;

bool is_metadata_key(std::string_view key) {
    return key.starts_with("repodata/");
}

// One repository of a checked bundle, placed into its mirror.
class Placement {
  public:
    Placement(const ImportOptions& options, const Manifest& manifest,
              const BundleRepository& repository, const std::filesystem::path& scratch)
        : options_(options), manifest_(manifest), repository_(repository), scratch_(scratch) {}

    Result<ImportedRepository> run(std::vector<std::string>& warnings) {
        SyncOptions sync;
        sync.download_path = options_.destination;
        sync.state_dir = options_.state_dir;
        sync.lock_wait = options_.lock_wait;
        if (options_.s3) {
            sync.s3 = *options_.s3;
        }
        where_ = sync_store_options(sync, repository_.id);
        auto opened = store::SyncStore::open(where_);
        if (!opened) {
            return tl::unexpected(std::move(opened.error()));
        }
        std::unique_ptr<store::SyncStore> destination = std::move(*opened);
        auto lock = destination->lock(options_.lock_wait, {});
        if (!lock) {
            return tl::unexpected(std::move(lock.error()));
        }
        destination->hold({lock->get()});
        if (auto loaded = destination->load(); !loaded) {
            return tl::unexpected(std::move(loaded.error()));
        }
        store::MirrorStore& mirror = destination->mirror();
        auto staging = destination->stage({});
        if (!staging) {
            return tl::unexpected(std::move(staging.error()));
        }
        if (auto placed = place_files(**staging, mirror); !placed) {
            return tl::unexpected(std::move(placed.error()));
        }
        if (auto ready = mirror.ready_packages(); !ready) {
            return tl::unexpected(std::move(ready.error()));
        }
        auto record = publish(**staging, mirror);
        if (!record) {
            return tl::unexpected(std::move(record.error()));
        }
        if (auto removed = remove_gone(mirror); !removed) {
            return tl::unexpected(std::move(removed.error()));
        }
        // Recorded last: a run killed before this does it all again (holds_already).
        if (auto recorded = mirror.record_sync(*record, warnings); !recorded) {
            return tl::unexpected(std::move(recorded.error()));
        }
        mirror.tidy();
        return done_;
    }

  private:
    // The carried files outside repodata/ (packages, comps.xml, ...), made in the staging area
    // under a temporary name, checked as they are written, renamed, and committed.
    Result<void> place_files(store::Staging& staging, store::MirrorStore& mirror) {
        std::vector<const BundleFile*> tickets;
        std::vector<store::PlacedFile> placed;
        std::uint64_t pending = 0;
        const auto collect = [&]() -> Result<void> {
            for (store::Committed& committed : staging.wait()) {
                const BundleFile& file = *tickets[committed.ticket];
                if (committed.error) {
                    return tl::unexpected(std::move(*committed.error));
                }
                store::StoredFile stored;
                if (committed.stored) {
                    stored = store::StoredFile{committed.stored->size, committed.stored->version};
                }
                placed.push_back(
                    store::PlacedFile{file.key, stored, ChecksumType::Sha256, file.sha256});
            }
            pending = 0;
            return {};
        };
        for (const BundleFile& file : repository_.files) {
            if (!file.carried || is_metadata_key(file.key)) {
                continue;
            }
            if (pending > 0 && pending + file.size > staging.capacity()) {
                if (auto collected = collect(); !collected) {
                    return collected;
                }
            }
            const std::filesystem::path path = staging.directory() / file.key;
            const std::filesystem::path temporary =
                path.parent_path() / ("." + path.filename().string() + ".import");
            if (auto made = fs::make_directories(path.parent_path()); !made) {
                return made;
            }
            if (auto written =
                    bundle::extract_file(options_.bundle, manifest_.chunks, file, temporary);
                !written) {
                (void)fs::remove_file(temporary);
                return written;
            }
            if (auto renamed = fs::rename_file(temporary, path); !renamed) {
                (void)fs::remove_file(temporary);
                return renamed;
            }
            staging.commit(tickets.size(), store::StagedFile{file.key, ChecksumType::Sha256,
                                                             file.sha256, nullptr, false});
            tickets.push_back(&file);
            pending += file.size;
            ++done_.placed;
            done_.placed_bytes += file.size;
        }
        if (auto collected = collect(); !collected) {
            return collected;
        }
        return mirror.record_placed(placed, {}, false);
    }

    // The file `file` of repodata/ at `out`: from the bundle, or the destination's own copy (an
    // incremental bundle carries only what changed), checked against the manifest either way.
    Result<void> metadata_file(store::MirrorStore& mirror, const BundleFile& file,
                               const std::filesystem::path& out) {
        if (auto made = fs::make_directories(out.parent_path()); !made) {
            return made;
        }
        if (file.carried) {
            return bundle::extract_file(options_.bundle, manifest_.chunks, file, out);
        }
        auto local = mirror.local_copy(file.key, scratch_ / "held");
        if (!local) {
            return tl::unexpected(std::move(local.error()));
        }
        if (auto copied = fs::copy_file(*local, out); !copied) {
            return copied;
        }
        auto digest = bundle::sha256_of(out);
        if (!digest) {
            return tl::unexpected(std::move(digest.error()));
        }
        if (*digest != file.sha256) {
            return make_error(ErrorCode::Corrupt,
                              fmt::format("SHA-256 {}, bundle {} expects its base's {}", *digest,
                                          manifest_.name, file.sha256),
                              mirror.describe(file.key));
        }
        return {};
    }

    // The metadata, last: staged and published as a sync publishes it. Returns the sync's record.
    Result<store::SyncRecord> publish(store::Staging& staging, store::MirrorStore& mirror) {
        auto stage =
            MetadataStage::create(staging.in_place() ? where_.metadata_dir : staging.directory());
        if (!stage) {
            return tl::unexpected(std::move(stage.error()));
        }
        store::MetadataRelease release;
        release.stage = &*stage;
        store::SyncRecord record;
        record.repomd_sha256 = repository_.repomd_sha256;
        record.fingerprint = "import " + manifest_.name;
        for (const BundleFile& file : repository_.files) {
            if (!is_metadata_key(file.key)) {
                (store::is_package_key(file.key) ? record.packages : record.metadata)
                    .push_back(file.key);
                continue;
            }
            record.metadata.push_back(file.key);
            const bool index = file.key == store::kIndexKey || file.key == store::kSignatureKey;
            const std::filesystem::path out =
                index ? scratch_ / "index" / file.key
                      : stage->dir() / file.key.substr(std::string_view("repodata/").size());
            if (auto made = metadata_file(mirror, file, out); !made) {
                return tl::unexpected(std::move(made.error()));
            }
            if (index) {
                auto text = fs::read_file(out);
                if (!text) {
                    return tl::unexpected(std::move(text.error()));
                }
                (file.key == store::kIndexKey ? release.repomd_xml : release.signature.emplace()) =
                    std::move(*text);
            }
        }
        if (auto published = mirror.publish_metadata(release); !published) {
            return tl::unexpected(std::move(published.error()));
        }
        return record;
    }

    // What the bundle's state lacks: packages as --delete removes them, other files by key.
    Result<void> remove_gone(store::MirrorStore& mirror) {
        std::set<std::string> keep;
        for (const BundleFile& file : repository_.files) {
            keep.insert(file.key);
        }
        auto deleted = store::delete_unlisted(mirror, keep);
        if (!deleted) {
            return tl::unexpected(std::move(deleted.error()));
        }
        done_.removed = deleted->size();
        std::vector<std::string> others;
        for (const std::string& key : repository_.removed) {
            if (!store::is_package_key(key) && !is_metadata_key(key)) {
                others.push_back(key);
            }
        }
        auto removed = mirror.remove_files(others);
        if (!removed) {
            return tl::unexpected(std::move(removed.error()));
        }
        done_.removed += removed->size();
        return {};
    }

    const ImportOptions& options_;
    const Manifest& manifest_;
    const BundleRepository& repository_;
    const std::filesystem::path& scratch_;
    store::SyncStoreOptions where_;
    ImportedRepository done_;
};

// True iff the repository `repository` of `root` is at the bundle's state completely: its
// repomd.xml published (`current`) and recorded by a completed import or sync. A run killed after
// the publication and before the record is not.
Result<bool> holds_already(const ImportOptions& options, store::MirrorRoot& root,
                           const BundleRepository& repository,
                           const std::optional<std::string>& current) {
    if (current != repository.repomd_sha256) {
        return false;
    }
    auto recorded = root.repository(repository.id, options.state_dir)->recorded();
    if (!recorded) {
        return tl::unexpected(std::move(recorded.error()));
    }
    return recorded->repomd_sha256 == repository.repomd_sha256;
}

// Keeps the imported state as the snapshot named after the bundle (a warning iff it cannot).
void record_snapshot(const ImportOptions& options, store::MirrorRoot& root, const std::string& name,
                     ImportedRepository& done, std::vector<std::string>& warnings) {
    auto layout = snapshot_root(done.id, root.repository_path(done.id),
                                std::filesystem::path(options.destination), options.s3);
    if (!layout) {
        warnings.push_back(done.id + ": no snapshot: " + layout.error().to_string());
        return;
    }
    if (snapshot_location(*layout, name)) {
        done.snapshot = name;  // an earlier run of this import took it
        return;
    }
    SnapshotCreateOptions create;
    create.name = name;
    create.lock = SnapshotLock{options.state_dir, options.lock_wait};
    auto created = create_snapshot(*layout, create);
    if (!created) {
        warnings.push_back(done.id + ": snapshot " + name +
                           " not taken: " + created.error().to_string());
        return;
    }
    done.snapshot = name;
}

}  // namespace

Result<ImportReport> import_bundle(const ImportOptions& options) {
    auto manifest = bundle::read_manifest(options.bundle, options.keyring);
    if (!manifest) {
        return tl::unexpected(std::move(manifest.error()));
    }
    ImportReport report;
    report.name = manifest->name;
    const std::filesystem::path state_dir =
        options.state_dir.empty() ? state_directory(SyncOptions{}) : options.state_dir;
    const std::unique_ptr<store::ObjectStore> records = bundle::resume_records(state_dir);
    if (auto checked = bundle::check_chunks(options.bundle, *manifest, *records, report);
        !checked) {
        return tl::unexpected(std::move(checked.error()));
    }
    auto opened = store::MirrorRoot::open(options.destination, {options.state_dir, options.s3});
    if (!opened) {
        return tl::unexpected(std::move(opened.error()));
    }
    auto current = bundle::current_indexes(*opened, *manifest);
    if (!current) {
        return tl::unexpected(std::move(current.error()));
    }
    if (auto based = bundle::check_base(*manifest, *opened, *current); !based) {
        return tl::unexpected(std::move(based.error()));
    }
    auto scratch = ScratchDir::create("rpmirror-import");
    if (!scratch) {
        return tl::unexpected(std::move(scratch.error()));
    }
    for (const BundleRepository& repository : manifest->repositories) {
        ImportedRepository done;
        auto already = holds_already(options, *opened, repository, current->at(repository.id));
        if (!already) {
            return tl::unexpected(std::move(already.error()));
        }
        if (*already) {
            done.already = true;
        } else {
            auto placed =
                Placement(options, *manifest, repository, scratch->path()).run(report.warnings);
            if (!placed) {
                return tl::unexpected(std::move(placed.error()));
            }
            done = std::move(*placed);
        }
        done.id = repository.id;
        record_snapshot(options, *opened, manifest->name, done, report.warnings);
        report.repositories.push_back(std::move(done));
    }
    bundle::forget_checked_chunks(options.bundle, *manifest, *records);
    return report;
}

}  // namespace rpmirror
