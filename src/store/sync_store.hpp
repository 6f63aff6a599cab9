// A repository's mirror opened for a sync (SyncStore::open, the one place a sync tells a
// directory from a bucket): besides the mirror's store (MirrorStore, what the sync publishes
// through), what only a sync asks of it: the repository's lock, the locks it must confirm before
// a write only the holder may make, what the store already holds of the packages the sync wants
// (a directory's files hashed, their checksum cache believed; a bucket's state object and one
// listing), the staging area packages are made in (ObjectStore::stage: on disk the directory
// itself, in a bucket a bounded spool), the repositories beside it whose record says what they
// hold (where --dedupe copies from: the repositories beside it) and the requests it cost.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "checksum/hasher.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "rpmirror/s3/s3.hpp"
#include "rpmirror/util/error.hpp"
#include "store/mirror_store.hpp"
#include "store/object_store.hpp"
#include "store/repo_lock.hpp"

namespace rpmirror::store {

// Where and how a sync opens its repository's mirror.
struct SyncStoreOptions {
    // -p as given (a directory, or s3://BUCKET/PREFIX), and --metadata-path as given iff set:
    // either an s3:// URL makes the mirror a bucket's (both must then name one location).
    std::string destination;
    std::optional<std::string> metadata_destination;
    // The repository: <destination>/<id> (<destination> with --norepopath), beneath `layout_root`
    // iff that is set (--upstream-layout: the root beneath which its packages may lie, itself
    // <destination>/<id>); repo_directory's spelling (an s3:// URL in a bucket).
    std::filesystem::path repository;
    std::filesystem::path layout_root;
    std::filesystem::path metadata_dir;  // a local mirror's metadata directory (metadata_directory)
    std::filesystem::path state_dir;     // a local mirror's state directory
    s3::S3Overrides s3;  // a bucket's settings (each unset one from the environment)
    // What only a directory can do, refused in a bucket (Error{Unsupported} naming the option):
    // --remote-time, --safe-write-path, --dedupe-dir.
    bool remote_time = false;
    bool safe_write_path = false;
    std::vector<std::filesystem::path> dedupe_dirs;  // absolute
    bool use_checksum_cache = true;  // false (--no-cache): nothing is held by a cache or record
    bool durable = true;  // false: a directory's mirror is never flushed (SyncOptions::dnf_cache)
    // A bucket's staging area and writes: --s3-spool-dir, --s3-spool-size, --s3-parallel,
    // --s3-part-size, --s3-acl.
    std::filesystem::path spool_dir;
    std::uint64_t spool_size = 512ULL << 20;
    unsigned parallel = 4;
    std::uint64_t part_size = 64ULL << 20;
    std::string acl;
};

// One file a sync wants the store to hold (a package).
struct WantedFile {
    // Relative to the repository; beneath a layout root it may climb out ("../../blobstore/…").
    std::string key;
    ChecksumType checksum_type = ChecksumType::Sha256;
    std::string digest;      // lowercase hex
    std::uint64_t size = 0;  // kUnknownSize: the metadata lists none
    bool found = false;      // the plan found a file at its place: a directory looks no further
    bool beyond = false;     // beyond the repository (a layout root, --safe-write-path)
    std::string shown;       // beyond: the file's name as the plan spells it, for messages
    // Set by SyncStore::survey: the store holds it as its record describes, but it passes through
    // the staging area to be judged (--gpgcheck) and is never stored again
    // (StagedFile::judge_only).
    bool stored = false;
};

// What a store holds of one wanted file that it does not lack.
enum class Holding {
    Held,      // as wanted: kept
    Replace,   // damaged: fetched again
    Conflict,  // beyond the repository, holding other content: never replaced (the package fails)
};

struct Judgement {
    std::size_t item = 0;  // into the wanted files
    Holding holding = Holding::Held;
    std::string held;   // Conflict: "sha256 HEX" or "N bytes"
    std::string where;  // Conflict: the file's name for messages
};

struct Survey {
    std::vector<std::size_t> absent;             // to fetch now (and those to judge: `stored`)
    std::future<std::vector<Judgement>> judged;  // the rest, judged meanwhile
};

struct SurveyOptions {
    unsigned threads = 0;  // files hashed at once (a directory's); 0 = all cores
    // --gpgcheck while storing (a staging area not in place): the trusted key ids. A store whose
    // record does not vouch that every package it holds was checked against them hands every
    // held package back in `absent`, marked `stored`, to be judged as it passes through.
    std::optional<std::string> judged_with;
    std::stop_token stop;
};

// Where --dedupe looks for the packages a sync lacks, inside the store holding the repository
// and what it copies from (dedupe/copies.hpp's Search, as the medium sets it).
struct Siblings {
    ObjectStore* shared = nullptr;  // holds this repository, its siblings and the trees searched
    std::string repository;         // this repository's key in it
    // True iff the directory `key` beside the repository is a mirror to search: on disk one that
    // holds repodata/repomd.xml or that the state directory holds a sync state for; null in a
    // bucket (every one: its state object says what it holds).
    std::function<bool(const std::string& key)> mirror;
    std::vector<std::string> trees;           // --dedupe-dir's directories (keys), searched whole
    std::vector<std::string> excluded;        // the metadata directory (a key), never searched
    std::shared_ptr<const CacheTrust> trust;  // whose checksum cache entries are believed
    CopyOptions copy;                         // how copies are made (a bucket's ACL)
    bool describe_copies = false;             // record_copied needs each copy described (a bucket)
    bool partials = false;  // a download may have left ".NAME.part" at a copy's name
};

// A repository's mirror opened for one sync. Not thread-safe.
class SyncStore {
  public:
    // Opens the mirror `options` name; reads nothing yet. A bucket: Error{BadInput} iff the
    // location does not parse, --metadata-path is not the same location, the settings cannot be
    // resolved, --s3-part-size is below 5 MiB or --s3-spool-size below it; Error{Unsupported}
    // naming the option for what a bucket cannot do (SyncStoreOptions).
    static Result<std::unique_ptr<SyncStore>> open(const SyncStoreOptions& options);

    virtual ~SyncStore() = default;
    SyncStore(const SyncStore&) = delete;
    SyncStore& operator=(const SyncStore&) = delete;

    // Takes the repository's lock (MirrorStore::lock: a directory's run lock, a bucket prefix's
    // lease), waiting up to `wait`.
    virtual Result<std::unique_ptr<RepoLock>> lock(std::optional<std::chrono::seconds> wait,
                                                   std::stop_token stop) = 0;

    // The locks the sync holds: each is confirmed (a lease renewed when due; Error{Busy} iff one
    // was lost) before every write only the holder may make (a bucket's state and metadata).
    // Each must outlive the store's last write.
    virtual void hold(std::vector<RepoLock*> locks) = 0;

    // Reads what the mirror's record says it holds (a bucket's state object and listing; nothing
    // to read for a directory, whose files are their own record). The store's error naming what
    // could not be read.
    virtual Result<void> load() = 0;

    // The mirror's store, over what load() read. Needs load().
    virtual MirrorStore& mirror() = 0;

    // The directories beyond the repository's where the sync's plan places packages too
    // (--safe-write-path, the layout root): a directory's MirrorStore::ready_packages flushes
    // them. Nothing in a bucket, whose keys are its record.
    virtual void set_package_roots(std::vector<std::filesystem::path> roots) { (void)roots; }

    // The staging area packages are made in (ObjectStore::stage), rooted where the repository's
    // packages may lie (the layout root, or the repository): on disk the directory itself (in
    // place); in a bucket a spool of --s3-spool-size uploading with --s3-parallel workers. Stopped
    // by `stop`. Error{Io} naming the spool iff it cannot be created. Destroy it before the store.
    virtual Result<std::unique_ptr<Staging>> stage(std::stop_token stop) = 0;

    // Sorts `files` into those the store lacks (Survey::absent, by index) and those it holds,
    // judged: on disk those `found` hashed on worker threads while the others download (their
    // checksum cache believed); in a bucket from load()'s record (a blob beyond the repository
    // that no repository recorded is read). A file beyond the repository holding other content is
    // a Conflict. Sets `stored` (SurveyOptions::judged_with). `files` and the store must outlive
    // the future, which is waited for before the next survey.
    virtual Survey survey(std::span<WantedFile> files, const SurveyOptions& options) = 0;

    // Where --dedupe copies from the repositories beside this one (and --dedupe-dir's trees)
    // inside the store: on disk a directory holding them all, their files verified; in a bucket
    // the bucket, by the siblings' state objects. nullopt iff there is nothing beside the
    // repository.
    virtual std::optional<Siblings> siblings() = 0;

    // Records `file`, copied from a sibling by this sync, as held (and stored by it).
    virtual void record_copied(const PlacedFile& file) = 0;

    // Requests sent to the store so far, all of its clients (0 for a directory).
    virtual std::uint64_t requests() const = 0;

  protected:
    SyncStore() = default;
};

// The directory's SyncStore (sync_store.cpp), and the bucket's (s3_sync_store.cpp).
Result<std::unique_ptr<SyncStore>> open_disk_sync_store(const SyncStoreOptions& options);
Result<std::unique_ptr<SyncStore>> open_bucket_sync_store(const SyncStoreOptions& options);

}  // namespace rpmirror::store
