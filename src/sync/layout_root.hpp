// The root of an --upstream-layout (Amazon Linux's: each release's repository at upstream's path
// beneath it, their packages in a shared blobstore the hrefs climb to), written once over the
// root's ObjectStore for a directory and a bucket alike: when rpmirror last synced each release
// (what --keep-releases ranks by), the removal of the releases synced longest ago, and --delete's
// collection of the blobs rpmirror stored (a StoredRecord, the layout's catalogue) that no
// repository beneath the root lists any more.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fs/scratch_dir.hpp"
#include "rpmirror/s3/s3.hpp"
#include "rpmirror/util/error.hpp"
#include "store/mirror_root.hpp"
#include "store/object_store.hpp"
#include "store/repo_lock.hpp"
#include "sync/stored_record.hpp"

namespace rpmirror {

// The layout's catalogue of the blobs rpmirror stored: `.upstream-layout-catalogue` of the root
// in the state directory, `.rpmirror/upstream-layout-catalogue.json` of the root's prefix.
RecordName layout_catalogue_name();

// Where the time of each release's last successful sync is kept: the release's record "release"
// where the layout root's store keeps its records (store::MirrorStore::record_of). Releases are
// named by their key below the layout root ("al2023/core/guids/G1/x86_64").
class ReleaseClock {
  public:
    // The clock of the layout root whose store is `root`: a record beside the release's state
    // entry in the state directory (`<entry>.release`) for a directory; the object
    // `<release>/.rpmirror/release` in a bucket. `objects` (the root's) names the releases in
    // messages. Both must outlive the clock.
    static std::unique_ptr<ReleaseClock> open(store::MirrorStore& root,
                                              store::ObjectStore& objects);

    // A clock whose records lie beside the releases in `objects` (store::record_key(release,
    // "release"), the bucket's rule over any store), which must outlive it.
    static std::unique_ptr<ReleaseClock> in_objects(store::ObjectStore& objects);

    // Records now as the time `tree` was last synced. The store's error.
    Result<void> mark(const std::string& tree);

    // When `tree` was last synced (ns since the epoch); nullopt iff nothing records it (a
    // release rpmirror did not sync). Error{Corrupt} iff its record is no time; the store's error.
    Result<std::optional<std::int64_t>> last_synced(const std::string& tree);

    // Forgets `tree`'s record where it is kept apart from the release's own files (best effort;
    // a record beside them went with them).
    void forget(const std::string& tree);

    // `tree` as --keep-releases' messages name it ("/srv/mirror/amzn/.../x86_64",
    // "s3://bucket/amzn/.../x86_64/").
    std::string shown(const std::string& tree) const;

    // Whose record a release that has none lacks, for the warning (" with this state
    // directory" where records are kept apart, or "").
    std::string_view kept_by() const;

  private:
    struct Made {};  // only open() and in_objects() make a clock (through make_unique)

  public:
    ReleaseClock(Made, store::MirrorStore* root, store::ObjectStore& objects);

  private:
    // Where `tree`'s record is: `key` of `objects` (`own`, or the clock's `objects_`).
    struct Where {
        std::unique_ptr<store::ObjectStore> own;
        store::ObjectStore* objects = nullptr;
        std::string key;
    };
    Where where(const std::string& tree) const;

    store::MirrorStore* root_;  // null: the records lie beside the releases in objects_
    store::ObjectStore& objects_;
    bool apart_ = false;  // store::RecordPlace::apart
};

// What one repository's sync asks of the layout's collection.
struct LayoutCollection {
    std::string mine;            // the repository's key below the root ("" = the root itself)
    unsigned keep_releases = 0;  // --keep-releases: 0 keeps every release
    std::string mirror_url;      // --mirror-url, ending in '/' ("" = none)
};

// The keys (relative to the layout root, lexically normal) of the packages the repository `tree`
// lists (its live metadata, verified), or why they cannot be told.
using ListedBy = std::function<Result<std::vector<std::string>>(const std::string& tree)>;

// The repository lock of the release `tree` (the one a sync or a repair of it takes), or why it
// cannot be had now.
using LockRelease = std::function<Result<std::unique_ptr<RepoLock>>(const std::string& tree)>;

// What the collection removed, by key below the root.
struct LayoutRemovals {
    std::vector<std::string> releases;  // whole releases (--keep-releases)
    std::vector<std::string> files;     // mirror lists naming them, then blobs
};

// --delete over the layout root `root`: with `what.keep_releases` N, first this repository's
// other releases (is_release_of) that `clock` records, all but the N - 1 synced most recently,
// each under its own lock (LockRelease): a record that it is being removed
// (`.rpmirror/removing/<release>` of the root, so that the next run finishes what a killed one
// began), the mirror lists below the root naming it (`what.mirror_url` + release + "/"), its
// index (it stops being a repository), the rest of its files but a bucket's lease (which goes
// with the lock), its record, its emptied directories, then the removal record. A release
// `clock` does not record is never removed (a warning); nor is one whose lock is held elsewhere
// (a warning); one whose removal fails part way is finished by the next run (a warning).
// Then the blobs: every file of `blobs` that no repository beneath the root (each key ending
// in repodata/repomd.xml, outside rpmirror's reserved names) lists (`listed_by`) and that is
// still as stored is removed (collect_unlisted), and its emptied directories; any repository
// that cannot be read removes no blob (a warning). Returns what was removed; the store's error
// (reading the root's listing, removing a blob).
Result<LayoutRemovals> collect_layout(store::ObjectStore& root, StoredRecord& blobs,
                                      ReleaseClock& clock, const LayoutCollection& what,
                                      const ListedBy& listed_by, const LockRelease& lock,
                                      std::vector<std::string>& warnings);

// The layout root `root` (a directory, or an s3:// prefix: store::MirrorRoot's rule) opened for
// a sync of one of its repositories.
class LayoutRoot {
  public:
    // Error{BadInput} iff an s3:// URL does not parse or its settings cannot be resolved.
    static Result<LayoutRoot> open(const std::filesystem::path& root,
                                   const std::filesystem::path& state_dir,
                                   const std::optional<s3::S3Overrides>& s3);

    store::ObjectStore& objects() { return root_.objects(); }
    ReleaseClock& clock() { return *clock_; }

    // The layout's catalogue (layout_catalogue_name); the bucket's error.
    Result<StoredRecord> catalogue() {
        return StoredRecord::load(*store_, layout_catalogue_name());
    }

    // Each release's repository lock, through the store of its kind.
    LockRelease release_locks();

    // The packages each repository lists, read through the root's store (fetched below a
    // scratch directory of this object's from a bucket).
    ListedBy listed_by();

  private:
    explicit LayoutRoot(store::MirrorRoot root);

    store::MirrorRoot root_;
    std::unique_ptr<store::MirrorStore> store_;
    std::unique_ptr<ReleaseClock> clock_;
    std::optional<ScratchDir> scratch_;  // created on first use, removed with this object
};

}  // namespace rpmirror
