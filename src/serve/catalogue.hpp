// What `rpmirror serve` may serve of one job's mirror: the files its published repository lists
// (repodata/repomd.xml, the records it names, repomd.xml.asc, the packages primary lists), read
// through the job's store (store/object_store.hpp), and nothing else.
//
// A Revision is one publication, loaded whole: repomd.xml's bytes as they were parsed, each
// record's file held open (a descriptor on disk, its bytes elsewhere) so that it can be served
// after the next sync's publication removed it, and each package's size and checksum. A
// JobCatalogue swaps revisions atomically when repomd.xml changes and keeps the revisions it
// replaced for a grace period, so a client that read the old repomd.xml can still fetch its
// records.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fs/scratch_dir.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "rpmirror/util/error.hpp"
#include "store/object_store.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror::serve {

// The content of a file held by a revision: an open descriptor (a store with local files) or the
// bytes themselves. Immutable.
struct HeldFile {
    UniqueFd fd;
    std::string bytes;  // when !fd
    std::uint64_t size = 0;
};

// One file a revision lists.
struct ListedFile {
    std::uint64_t size = 0;          // as the metadata says; 0 = unknown (the file's own)
    std::string etag;                // quoted checksum of the content: "\"<hex>\""
    std::int64_t last_modified = 0;  // seconds since the epoch; 0 = unknown
    ChecksumType checksum_type = ChecksumType::Sha256;  // of the etag's digest
    std::shared_ptr<const HeldFile> held;  // null: read from the store at each request (packages)
};

struct Revision {
    std::string version;  // repodata/repomd.xml's ObjectInfo::version when it was read
    std::unordered_map<std::string, ListedFile> files;  // by key
};

// Reads the revision published at the root of `store`. `shown` names the repository in errors.
// Returns Error{NotFound} iff nothing is published there (no repodata/repomd.xml), the store's or
// the parsers' errors otherwise (a record whose href leaves repodata/ is refused, a package whose
// href leaves the repository or has an xml:base is left out). Thread-compatible (the store).
Result<std::shared_ptr<const Revision>> load_revision(store::ObjectStore& store,
                                                      const std::string& shown,
                                                      const std::filesystem::path& scratch);

// The content of `key` in `store`: the store's own file, opened (never through a symlink), when
// local_copy gives one; else its bytes (store.read). Errors as local_copy and read.
Result<HeldFile> hold_file(store::ObjectStore& store, const std::string& key,
                           const std::filesystem::path& scratch);

// A listed file found for a request: what the revision says of it, and how to read it.
struct Found {
    ListedFile file;
    std::shared_ptr<const Revision> revision;  // keeps `file.held` valid
};

// One job's mirror as served: its store, its current revision and those retired within the
// grace period. Thread-safe: every method may be called from any thread (the store is used by
// one thread at a time).
class JobCatalogue {
  public:
    JobCatalogue(std::string name, std::unique_ptr<store::ObjectStore> store,
                 std::chrono::seconds grace);

    const std::string& name() const { return name_; }

    // Loads the published revision if repomd.xml changed since the last check (always when
    // `check` is true, else at most once a second). Errors of a reload are returned; the revision
    // served until then stays. Error{NotFound} iff nothing was ever published.
    Result<void> refresh(bool check);

    // The file `key` as the current revision lists it, else as a revision retired less than the
    // grace period ago lists it; nullopt iff none does.
    std::optional<Found> find(const std::string& key);

    // Opens the content of a listed package (a file `find` gave without `held`). Error{NotFound}
    // iff the store does not hold it.
    Result<HeldFile> open(const std::string& key);

    // True iff the store holds a regular file at `key`. The store's errors.
    Result<bool> holds(const std::string& key);

    // What the store says of `key` (nullopt: it holds nothing there). The store's errors.
    Result<std::optional<store::ObjectInfo>> stat(const std::string& key);

    // Removes the package `key` from the store (cache-max-size: serve/eviction.hpp); its next
    // request finds it listed, not held. A response that opened it keeps what it opened. The
    // store's errors.
    Result<void> remove(const std::string& key);

    // The revision served now (refresh()); null iff none was ever loaded.
    std::shared_ptr<const Revision> current();

    // A staging area of the store (ObjectStore::stage) for packages fetched on demand: on disk
    // the mirror itself (a verified file renamed into place is kept), in a bucket a spool whose
    // files are uploaded. Must be destroyed before this. The store's errors.
    Result<std::unique_ptr<store::Staging>> stage(const store::StageOptions& options);

    // Commits `file`, complete at staging.directory()/file.key (`staging` one of stage()'s), and
    // waits for it: kept under its key (confirmed in place on disk, uploaded from a bucket's
    // spool, the spool's file then unlinked). The commit's error iff it was not kept.
    Result<void> keep(store::Staging& staging, store::StagedFile file);

  private:
    Result<void> reload_locked();
    Result<std::filesystem::path> scratch_locked();

    const std::string name_;
    std::mutex mutex_;
    std::unique_ptr<store::ObjectStore> store_;
    std::chrono::seconds grace_;
    std::shared_ptr<const Revision> current_;
    std::vector<std::pair<std::chrono::steady_clock::time_point, std::shared_ptr<const Revision>>>
        retired_;  // with the time each was replaced
    std::optional<std::chrono::steady_clock::time_point> checked_;
    std::optional<ScratchDir> scratch_;  // for local_copy (a store without local files)
};

}  // namespace rpmirror::serve
