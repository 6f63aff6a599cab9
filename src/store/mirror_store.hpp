// The place one repository's mirror lives, behind one interface: a directory tree on a local
// (or NFS/FUSE) filesystem, or a prefix in an S3 bucket. Modelled on leveldb's Env: the stages
// above ask a MirrorStore what the mirror holds and to change it, and only the implementations
// (local_store.cpp over src/fs/, s3_store.cpp over src/s3/) touch the files or build requests.
//
// Keys are the relative paths a local mirror has ("Packages/a/foo.rpm", "repodata/repomd.xml"),
// '/'-separated, lexically normal. What the interface covers (doc/design.md, "The destination
// seam"): listing the mirror's packages, the size and version of any file, removing packages,
// reading and checking files against their checksums, what the last sync recorded, the
// repository's lock, and a sync's end (comps.xml, the metadata published in order, the sync
// recorded); --delete, verify --extra, the no-op, the publication, the audit and its repair are
// written once over it (below, sync/publish.cpp, src/audit/).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "checksum/hasher.hpp"
#include "plan/plan.hpp"
#include "publish/publish.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "rpmirror/util/error.hpp"
#include "store/object_store.hpp"
#include "store/repo_lock.hpp"

namespace rpmirror::store {

// One file of a mirror as its store describes it without reading it.
struct StoredFile {
    std::uint64_t size = 0;
    // Changes whenever the content may have changed: "MTIME_NS INODE CTIME_NS" of a local file
    // (a `cp -p` or a rewrite with its mtime put back still changes it), the ETag of an object.
    std::string version;

    bool operator==(const StoredFile&) const = default;
};

// The keys of a mirror's index, its signature and -m's comps file.
inline constexpr std::string_view kIndexKey = "repodata/repomd.xml";
inline constexpr std::string_view kSignatureKey = "repodata/repomd.xml.asc";
inline constexpr std::string_view kCompsKey = "comps.xml";

// Files by key, in key order.
using Listing = std::map<std::string, StoredFile>;

// True iff `key` is a package of the mirror: a `*.rpm` outside its metadata (the top-level
// `repodata/` and the staging directories beside it, fs/walk.hpp) and outside rpmirror's own
// `.rpmirror/` (the state and lease of a mirror in a bucket), and not beyond it ("../": the
// blobs of an --upstream-layout root, which its catalogue owns). What --delete may remove and
// verify --extra reports; the one definition every store uses.
bool is_package_key(std::string_view key);

// One file the metadata says the mirror must hold.
struct ExpectedFile {
    std::string key;
    ChecksumType type = ChecksumType::Sha256;
    std::string digest;                 // lowercase hex
    std::optional<std::uint64_t> size;  // nullopt: the metadata lists none (old createrepo)
};

// What a store found at an ExpectedFile's key.
enum class Finding {
    Intact,          // the right size and digest
    Missing,         // nothing there
    NotRegular,      // a symlink (never followed), a directory, ...: `detail` says which
    Escapes,         // a symlinked directory on the way leads outside the root; not followed
    SizeMismatch,    // `actual_size`
    DigestMismatch,  // `actual_size`, `actual_digest`
    Unreadable,      // `detail`: the error
};

struct CheckedFile {
    Finding finding = Finding::Intact;
    std::uint64_t actual_size = 0;
    std::string actual_digest;
    std::string detail;
    bool from_cache = false;       // Intact without reading: the store's cache vouched for it
    std::uint64_t bytes_read = 0;  // hashed to decide
    // Intact: the file's version (StoredFile::version) as it was checked, for a copy to pin
    // (ObjectStore's Pin) so that it copies what was checked; "" iff the store cannot tell (the
    // file changed while it was checked).
    std::string version;
};

struct CheckOptions {
    unsigned threads = 0;   // files (or ranges of one) read at once; 0 = all cores
    bool use_cache = true;  // false (--no-cache): read every file, trust no cache
    // Whose record the cache is believed for (rpmirror/checksum/checksum.hpp's CacheTrust); null:
    // the store's own (a local mirror's sync state and catalogues; a bucket's ETags).
    std::shared_ptr<const CacheTrust> trust = nullptr;
};

// What the last complete sync of the mirror recorded (the local state file, the state object
// of a mirror in a bucket). Empty strings: not recorded.
struct RecordedSync {
    bool exists = false;                           // a state was found
    std::optional<RecordedSelection> selection;    // what it selected with
    std::optional<RecordedPublishing> publishing;  // how it published the metadata
    std::string acl;  // the canned ACL its objects were given (s3 only; "" = the default)
    // Every file it recorded with its checksum, for a mirror without published metadata; empty
    // when the store records none (a local state records sizes and times only).
    std::vector<ExpectedFile> files;
    // The no-op's record: upstream's repomd.xml it mirrored (SHA-256; empty: no sync completed
    // since), the options it synced with, the packages it holds, and every file it wrote or
    // kept (packages, the published metadata, comps.xml) with the version it had then; nullopt
    // iff the store recorded some without one (nothing to compare: no no-op).
    std::string repomd_sha256;
    std::string fingerprint;
    // Of the repomd.xml the last sync published iff it is not upstream's (a filtered mirror's
    // rewritten metadata); empty otherwise.
    std::string published_repomd_sha256;
    std::vector<std::string> packages;
    std::optional<Listing> versions;

    // True iff that sync left packages to `rpmirror serve` (its fingerprint names a download
    // policy other than immediate, sync/sync_settings.cpp): the mirror may lack listed packages
    // not fetched yet, or removed again (cache-max-size).
    bool on_demand() const { return fingerprint.find(" policy=") != std::string::npos; }
};

// The metadata a sync publishes: `repomd_xml` and the records it lists, staged in `stage` under
// their names in repodata/.
struct MetadataRelease {
    MetadataStage* stage = nullptr;
    std::string repomd_xml;
    std::optional<std::string> signature;  // repomd.xml.asc; none: a stale one is removed
    std::int64_t repomd_time = -1;         // --remote-time: repomd.xml's mtime (s); -1: now
};

// What a complete sync records (read back by recorded()).
struct SyncRecord {
    std::string repomd_sha256;  // of upstream's repomd.xml
    std::string fingerprint;    // of the options it synced with
    // Of the repomd.xml it published iff that is not upstream's (rewritten); empty otherwise.
    std::string published_repomd_sha256;
    RecordedSelection selection;
    RecordedPublishing publishing;
    // Every package the mirror holds, each placed by the sync (a bucket records those its state
    // has: uploaded, kept or copied by this sync or an earlier one).
    std::vector<std::string> packages;
    std::vector<std::string> metadata;  // every other file it publishes (repodata/..., comps.xml)
    // --gpgcheck: the trusted key ids every package was checked against; empty: not checked.
    std::string signatures_checked;
};

// One file a sync stored (store::Staging::commit) and the checksum it was verified against.
struct PlacedFile {
    std::string key;
    StoredFile stored;
    ChecksumType type = ChecksumType::Sha256;
    std::string digest;  // lowercase hex
};

// Where a record rpmirror keeps of the files beneath a key lives (MirrorStore::record_of): the
// key `key` of `objects`, read with its read and written with its atomic put.
struct RecordPlace {
    std::unique_ptr<ObjectStore> objects;
    std::string key;
    // True iff the record is kept apart from the files it is about (a directory's, in the state
    // directory): removing them leaves it, and only runs with the same state directory see it.
    // False iff it lies beneath them (record_key: a bucket's), gone with them.
    bool apart = false;
};

// The key of the record `name` of the files beneath `below` where a store keeps its records
// beside the files: `below`/.rpmirror/`name` (".rpmirror/release" of "a/b":
// "a/b/.rpmirror/release").
std::string record_key(std::string_view below, std::string_view name);

class MirrorStore {
  public:
    virtual ~MirrorStore() = default;

    // Where the record `name` (a file name: "release", "source.repo") of the files beneath the
    // key `below` ("" = the mirror's root) is kept, the one rule every record rpmirror keeps
    // besides a sync's own follows: on disk in the state directory, the state entry of that
    // directory (fs::state_entry) + "." + `name` (apart: the mirror's tree holds only what a
    // client reads); in a bucket the object record_key(`below`, `name`) of the mirror's prefix.
    // Nothing is read or created.
    virtual RecordPlace record_of(std::string_view below, std::string_view name) = 0;

    // The file's name for messages: "/srv/mirror/fedora/Packages/a.rpm",
    // "s3://bucket/prefix/fedora/Packages/a.rpm".
    virtual std::string describe(std::string_view key) const = 0;

    // Every package of the mirror (is_package_key) that is a regular file (an object), never
    // reached through a symlink, and never inside another tree nested in the mirror (a
    // directory with its own repodata/repomd.xml, or a snapshot being built: fs/walk.hpp's
    // NestedTrees::Skip, the same rule in a bucket; on disk also a directory the state
    // directory holds another mirror's sync state for). An absent mirror holds nothing. Returns
    // Error{Unsafe} iff the mirror's root is itself a symlink, or the store's error (Error{Io}, a
    // request's) naming what could not be read.
    virtual Result<Listing> list_packages() = 0;

    // The file at `key` (any key, metadata too), nullopt iff there is none or it is not a
    // regular file. Returns the store's error iff it cannot tell.
    virtual Result<std::optional<StoredFile>> stat(std::string_view key) = 0;

    // Removes the packages `keys` (as list_packages names them; anything else is refused with
    // Error{BadInput}). A key already gone, or that is no longer a regular file, is left alone.
    // Returns the keys removed, in the order given; on an error naming the file, those removed
    // before it stay removed.
    virtual Result<std::vector<std::string>> remove_packages(std::span<const std::string> keys) = 0;

    // A download's temporary files (".NAME.part") beneath the mirror, walked as list_packages
    // walks, by key. A store without any (a bucket: its uploads are spooled locally) holds none.
    virtual Result<Listing> list_partials() { return Listing{}; }

    // Removes the temporary files `keys` (as list_partials names them; anything else is refused
    // with Error{BadInput}), but for those a live download writes (it holds a shared flock on
    // its .part: download/destination.cpp), which are left to it (an on-demand fetch of
    // `rpmirror serve` racing a sync). Returns the keys removed; errors as remove_packages.
    virtual Result<std::vector<std::string>> remove_partials(std::span<const std::string> keys) {
        (void)keys;
        return std::vector<std::string>{};
    }

    // --- Reading and checking (the audit) ---

    // The whole content of the (small: metadata) regular file at `key`. Error{NotFound} iff
    // there is none; Error{Unsafe} iff it is not a regular file (a symlink is not followed).
    virtual Result<std::string> read(std::string_view key) = 0;

    // A local file holding the content of `key`, to parse: the file itself in a local store, a
    // copy fetched into the directory `scratch` (below it at `key`) from a bucket.
    virtual Result<std::filesystem::path> local_copy(std::string_view key,
                                                     const std::filesystem::path& scratch) = 0;

    // True iff any file lies below the directory `key` ("repodata").
    virtual Result<bool> holds_below(std::string_view key) = 0;

    // How check_files reads large files: a bucket's objects above `threshold` bytes as ranged
    // reads of `range_size` (AuditOptions' settings); a local tree reads files whole, so nothing
    // to set.
    virtual void set_ranged_reads(std::uint64_t threshold, std::uint64_t range_size) {
        (void)threshold;
        (void)range_size;
    }

    // Checks each of `files`: present, a regular file, its size, then its digest (read and
    // hashed on `options.threads` workers unless the store's cache vouches for it). One result
    // per file, in order; never an error as a whole.
    virtual std::vector<CheckedFile> check_files(std::span<const ExpectedFile> files,
                                                 const CheckOptions& options) = 0;

    // The store of the same kind at `root`: --safe-write-path's roots beside a local mirror.
    // Error{BadInput} on a store that has none (a bucket).
    virtual Result<std::unique_ptr<MirrorStore>> beside(const std::filesystem::path& root) = 0;

    // --- What the last sync recorded, and the lock (repair) ---

    virtual Result<RecordedSync> recorded() = 0;

    // Where the store keeps what its syncs record, for messages: "the state directory
    // /var/lib/rpmirror", "the state object .rpmirror/state.json".
    virtual std::string record_place() const = 0;

    // The files at the keys of `linked` were hard-linked elsewhere by this run (a snapshot's
    // links) while each was as `linked` describes it. A link moves what a local file's record
    // compares (its ctime) without changing the file: the store's records of each file still
    // that one (its sync state, a tree's image catalogue) follow it, so the next sync's no-op and
    // its cache's vouching hold. Best effort; a bucket's copies are objects of their own, so
    // there is nothing to follow.
    virtual void follow_links(const Listing& linked) { (void)linked; }

    // Makes the record vouch for none of `keys` and no longer say the mirror is up to date, so
    // the next sync verifies them instead of taking its no-op shortcut.
    virtual Result<void> forget(const std::set<std::string>& keys) = 0;

    // Removes the files at `keys` (damaged packages, or symlinks in their place: unlinked, never
    // followed), whatever they are. Returns the keys removed (those not there are left out); on
    // an error naming the file, those removed before it stay removed.
    virtual Result<std::vector<std::string>> remove_files(std::span<const std::string> keys) = 0;

    // Takes the repository's lock (store/repo_lock.hpp), waiting up to `wait` (nullopt:
    // Error{Busy} at once, naming the holder): the local run lock of the directory, or the
    // bucket prefix's lease, renewed from its own thread until the lock is destroyed. The one
    // way a repository is locked: by a sync (lock_repository, and a repository that lies
    // elsewhere than the one locked), a repair, a tree's files.
    virtual Result<std::unique_ptr<RepoLock>> lock(std::optional<std::chrono::seconds> wait,
                                                   std::stop_token stop) = 0;

    // Takes the same lock as lock() (a sync waits for it, and it for a sync) for a run that only
    // reads the mirror and must not create it (a snapshot): a local mirror whose directory is
    // absent is locked by its spelling alone, nothing created; a bucket's lease as lock() takes
    // it. Error{Busy} iff another run holds the lock after `wait` (nullopt: at once).
    virtual Result<std::unique_ptr<RepoLock>> lock_present(
        std::optional<std::chrono::seconds> wait) = 0;

    // --- A sync's end, in this order (sync/publish.cpp) ---
    // A sync opens the store it publishes into (LocalStore with its metadata root; a bucket's
    // S3Store over the sync's live state); other stores refuse these with Error{Unsupported}.

    // Replaces the small file at `key` (comps.xml; --mirror-url's list, whose key may climb out
    // of the repository as a blob's does) with `content` atomically; nothing is written iff it
    // holds (as this run stored it) `content` already.
    virtual Result<void> write_document(std::string_view key, std::string_view content) = 0;

    // Records what a batch of a sync's packages became, as each batch is stored: `placed` (stored
    // with their checksums); `condemned` (held, but refused by --gpgcheck: removed, except a blob
    // beyond the repository, "../", which may be another's: only no longer vouched for);
    // `checked` true iff --gpgcheck judged every package placed. A bucket updates its listing and
    // state object, marks it incomplete (until record_sync: a killed run's uploads are kept by the
    // next) and stores it, after confirming the lease (Error{Busy} iff lost); a local mirror's
    // files are their own record: nothing to do.
    virtual Result<void> record_placed(std::span<const PlacedFile> placed,
                                       std::span<const std::string> condemned, bool checked) {
        (void)placed;
        (void)condemned;
        (void)checked;
        return {};
    }

    // Readies the packages an index is about to vouch for: durable (one syncfs per local
    // filesystem holding them) and readable as the mirror's are (a bucket's objects kept from
    // earlier runs given --s3-acl's ACL when it changed). Returns Error{Busy} iff the lock was
    // lost.
    virtual Result<void> ready_packages() = 0;

    // Replaces the published metadata with `release`: records first, then the index in one step
    // (a rename, one PUT), its old signature removed before and the new one added after, so a
    // reader never pairs an index with a record it lacks or a signature of another; records
    // neither this index nor the one it replaces lists are removed. A failure leaves the old
    // index with everything it lists. Returns Error{Busy} iff the lock was lost first.
    virtual Result<void> publish_metadata(const MetadataRelease& release) = 0;

    // Records a complete sync (recorded() reads it back), after publish_metadata. Returns an
    // error iff the sync must fail (a bucket's lease lost, its state not stored); a local state
    // file that cannot be written only costs the next no-op: a warning in `warnings`.
    virtual Result<void> record_sync(const SyncRecord& record,
                                     std::vector<std::string>& warnings) = 0;

    // Removes what an interrupted publication left that no reader needs (a local mirror's
    // staging directories beside repodata/). Best effort.
    virtual void tidy() {}

    // Forgets what the store has read so far (a bucket's listing and state object): what is
    // asked next is read again. A listing given by the caller is kept.
    virtual void refresh() {}

    // Requests sent to the store so far (a bucket's; 0 for a local tree).
    virtual std::uint64_t requests() const { return 0; }

  protected:
    MirrorStore() = default;
    MirrorStore(const MirrorStore&) = default;
    MirrorStore& operator=(const MirrorStore&) = default;
};

// --- Written once, for every store --------------------------------------------------------

// The packages of `store` that `keep` does not name (verify --extra; what --delete removes).
Result<Listing> unlisted_packages(MirrorStore& store, const std::set<std::string>& keep);

// --delete: removes the packages of `store` that `keep` does not name. Returns their keys,
// sorted; errors as MirrorStore::remove_packages.
Result<std::vector<std::string>> delete_unlisted(MirrorStore& store,
                                                 const std::set<std::string>& keep);

// True iff every file of `recorded` (what an earlier run wrote) is still in `store` with the same
// size and version (the no-op's check: sizes and versions, nothing read). A store that cannot
// tell counts as changed.
bool files_unchanged(MirrorStore& store, const Listing& recorded);

}  // namespace rpmirror::store
