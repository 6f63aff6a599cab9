// The place files live, at the level of one file: a directory tree on a local (or NFS/FUSE)
// filesystem, a prefix in an S3 bucket, or a map in memory (for unit tests). Modelled on leveldb's
// Env and Arrow's FileSystem: features are written once over an ObjectStore, and only the
// implementations (disk_objects.cpp over src/fs/, s3_objects.cpp over src/s3/,
// memory_objects.cpp) touch files or build requests. open_object_store is the one place a
// destination string is turned into a store.
//
// Keys are '/'-separated relative paths beneath the store's root ("Packages/a/foo.rpm"), without
// empty, "." or ".." segments; "" names the root itself where a prefix is asked for. A key that
// is not one is refused with Error{BadInput}. A symlink is never followed (on disk: the last
// component never, directories on the way only while they stay beneath the root).
//
// Besides files, two things features need to publish at once:
//   - a tree: a prefix whose files appear all at once (built aside, then committed: on disk a
//     temporary sibling directory renamed into place; in a bucket a marker object written last,
//     without which the prefix is no tree);
//   - an alias ("published name"): a key that shows a committed tree and is switched from one to
//     another so a reader sees the old tree or the new one (on disk a symlink replaced by one
//     rename; in a bucket a copy of the tree written in a repository's publication order:
//     packages and records, then repodata/repomd.xml, then its signature, then .treeinfo).
//
// And, for files made locally by a writer that needs a path (the Downloader: a temporary name,
// verified, renamed), a staging area (ObjectStore::stage): on disk the store's own directory, so
// the writer's rename is the commit and nothing is copied; in a bucket a bounded spool whose
// files are uploaded by a pool of workers (multipart above the part size) and unlinked; in memory
// a temporary directory whose files are read in.
//
// Thread-compatible: one thread at a time per store (an implementation may use threads inside).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
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
#include "s3/config.hpp"
#include "store/repo_lock.hpp"

namespace rpmirror::store {

// A file as its store describes it without reading it.
struct ObjectInfo {
    std::uint64_t size = 0;
    // Changes whenever the content may have changed: "MTIME_NS INODE CTIME_NS" of a file on disk
    // (LocalStore's version), the ETag of an object, a counter in memory.
    std::string version;
    // Names sharing the file's content (st_nlink on disk; 1 in a bucket, where a copy is an
    // object of its own): a file with one frees its bytes when removed.
    std::uint64_t links = 1;
    // When the content last changed, in ns since the epoch, where the store knows it (a file's
    // mtime on disk); 0: unknown (an object's listing, memory). Not part of equality: `version`
    // already changes with it.
    std::int64_t modified_ns = 0;

    bool operator==(const ObjectInfo& other) const {
        return size == other.size && version == other.version && links == other.links;
    }
};

// Files by key (relative to the store's root), in key order.
using ObjectListing = std::map<std::string, ObjectInfo>;

// What a copy must find at its source: the object a record vouches for.
struct Pin {
    std::uint64_t size = 0;
    std::string version;  // ObjectInfo::version
    // The content's digest iff known: lets a bucket accept a copy of a multipart object, to which
    // the store gives a new ETag (s3::copy_stored).
    ChecksumType type = ChecksumType::Sha256;
    std::string digest;
};

enum class CopyMode {
    Link,        // the same content without copying bytes (a hard link; inside a bucket a
                 // server-side copy); Error{Unsupported} iff the medium refuses (EXDEV, ...)
    LinkOrCopy,  // a link, or the bytes copied when the medium refuses links
    Copy,        // the bytes copied (mode and times kept on disk): a file of its own
    Clone,       // a file of its own sharing the content without copying bytes (a reflink on
                 // disk; inside a bucket a server-side copy); Error{Unsupported} iff the medium
                 // refuses (no FICLONE, EXDEV)
};

struct CopyRequest {
    std::string from;
    std::string to;
    CopyMode mode = CopyMode::LinkOrCopy;
    std::optional<Pin> pin;  // refuse (Error{Corrupt} naming the source) unless it is this one
};

struct CopyOptions {
    std::string acl;  // a bucket's canned ACL for the new objects ("" = none sent); disk: unused
};

// Keys in the order a repository is published: everything else (0), then each repository's
// repodata/repomd.xml (1), its repomd.xml.asc (2), then a tree's .treeinfo (3).
int publication_rank(std::string_view key);

// --- Finding content (--dedupe) ---

// A content ObjectStore::find_content looks for: a package's checksum and size.
struct WantedContent {
    ChecksumType type = ChecksumType::Sha256;
    std::string digest;  // hex, any case
    std::uint64_t size = 0;
};

// Where ObjectStore::find_content looks, and which files it may answer with.
struct FindOptions {
    // The directories searched (keys), in order: the first file found of a content is the one
    // answered. An absent one holds nothing; one reached twice is searched once.
    std::vector<std::string> trees;
    // Directories never searched, even inside a tree (keys).
    std::vector<std::string> excluded;
    // The key the found files are to be copied below: on disk only files on its filesystem (of
    // the nearest directory above it that exists) are looked at.
    std::string near;
    // The found file is to be shared, not copied (a hard link): on disk only a file this user owns
    // that neither group nor others may write (each other one is a note), as a link makes its
    // inode the copy's.
    bool shared = false;
    bool use_cache = true;  // on disk: believe the checksum cache where `trust` vouches for it
    std::shared_ptr<const CacheTrust> trust = nullptr;
    std::stop_token stop;  // once requested, nothing more is searched
};

// A file holding a wanted content, with the pin that makes a copy take exactly it.
struct FoundFile {
    std::string key;
    Pin pin;
};

struct FoundContent {
    std::vector<std::optional<FoundFile>> found;  // per wanted content
    std::size_t hashed = 0;  // files read and hashed to know their content (on disk)
    // One line per file or tree passed over for a reason worth telling (a tree that cannot be
    // read, a file someone else may change), naming it.
    std::vector<std::string> notes;
};

class ObjectStore;

// The files of a tree being built (ObjectStore::build_tree). Destroyed without commit(): what it
// holds is removed (best effort: a leftover is removed by the next build_tree beside it).
class TreeBuild {
  public:
    virtual ~TreeBuild() = default;
    TreeBuild(const TreeBuild&) = delete;
    TreeBuild& operator=(const TreeBuild&) = delete;

    // The key under which the tree's files sit until commit() (a temporary sibling on disk, the
    // tree's own key in a bucket): for reading back what was copied, never for writing.
    virtual const std::string& staging() const = 0;

    // Copies each of `copies` from the store (`from`: any key) into the tree (`to`: relative to
    // the tree), several at a time where the medium allows, repository metadata last in
    // publication_rank order. Returns the first failure; copies made before it stay until the
    // build is abandoned.
    virtual Result<void> copy(std::span<const CopyRequest> copies, const CopyOptions& options) = 0;

    // As copy, each `from` a key of `source`, another store of this one's kind (as
    // open_object_store opened it: a wrapper is not one), for a tree kept apart from what it
    // copies: on disk across directory trees (a hard link, Error{Unsupported} iff the filesystems
    // refuse one; with CopyMode::Copy or LinkOrCopy the bytes), in a bucket from another bucket or
    // prefix of the same endpoint (server-side copies, sent with this store's credentials).
    // Error{Unsupported} naming `source` iff it is of another kind or endpoint.
    virtual Result<void> copy_from(ObjectStore& source, std::span<const CopyRequest> copies,
                                   const CopyOptions& options) = 0;

    // Writes `bytes` as the tree's file `relative`.
    virtual Result<void> put(std::string_view relative, std::string_view bytes) = 0;

    // Makes the tree appear at its key, whole, at once (durable first on disk), after confirming
    // `lock` (when given). Error{BadInput} "exists already" iff something holds the key (nothing
    // replaced), the store's error otherwise; on any error the tree does not appear.
    virtual Result<void> commit(RepoLock* lock) = 0;

  protected:
    TreeBuild() = default;
};

// How ObjectStore::stage stages and commits.
struct StageOptions {
    // The spool's parent where the store needs one (store/spool.hpp): this directory (created if
    // missing); "" = /dev/shm when it is memory-backed with `capacity` bytes free, else $TMPDIR
    // (Staging::warning() says so).
    std::filesystem::path spool_dir;
    // The most bytes staged and not yet committed at once (a spool's size).
    std::uint64_t capacity = 512ULL << 20;
    unsigned parallel = 4;                  // commits under way at once (a bucket's uploads)
    std::uint64_t part_size = 64ULL << 20;  // a bucket's multipart part (and threshold)
    std::string acl;                        // a bucket's canned ACL for what is committed
    std::string content_type;               // a bucket's Content-Type for what is committed
    std::stop_token stop;                   // once requested, what is not yet committed is not
    // Each file is durable once wait() reports it stored (on disk: the files and their
    // directories flushed; a bucket's and memory's are at once), for a writer about to publish
    // something that vouches for them.
    bool durable = false;
};

// One file made in a Staging, handed to Staging::commit.
struct StagedFile {
    std::string key;  // the store's key; the file is Staging::directory()/key
    // Its content's verified checksum iff known ("" = unknown: a bucket computes the sha256).
    ChecksumType type = ChecksumType::Sha256;
    std::string digest;
    // Runs on a commit worker before anything is stored: false refuses the file (nothing stored,
    // Committed::refused). Called for several files at once. Null: every file is committed.
    std::function<bool(const std::filesystem::path&)> judge;
    // The store already holds this content at `key`: the file is only judged, never stored again
    // (Committed::outcome nullopt unless refused).
    bool judge_only = false;
};

// What became of one StagedFile.
struct Committed {
    std::size_t ticket = 0;  // commit()'s
    // Set iff it was not committed: Error{Interrupted} iff the stop token stopped it first,
    // Error{Unsafe} iff the judge refused it (`refused`), the store's error otherwise.
    std::optional<Error> error;
    bool refused = false;
    // What was stored, iff it was (not without `error`, nor for judge_only).
    std::optional<ObjectInfo> stored;
};

// A local directory in which files for the store's keys are made and then committed
// (ObjectStore::stage). A writer makes the file for key K at directory()/K under a temporary
// name in K's own directory (creating the directories above it), verifies it, and renames it into
// place; then hands it to commit(). Destroyed: waits for the commits under way, then removes what
// it still holds that is not in place (and its directory, but on disk).
class Staging {
  public:
    virtual ~Staging() = default;
    Staging(const Staging&) = delete;
    Staging& operator=(const Staging&) = delete;

    // Where the store's root is made: on disk the store's root itself (in_place()), otherwise a
    // fresh private directory (0700; a bucket's spool, memory-backed by default).
    virtual const std::filesystem::path& directory() const = 0;

    // True iff a file made at directory()/K is the store's K as soon as it is renamed there (on
    // disk): commit() then only confirms it is there (judge, if any, refusing removes it).
    virtual bool in_place() const = 0;

    // The most bytes that may wait in directory() uncommitted: a writer makes no more before
    // wait() (back-pressure). UINT64_MAX on disk.
    virtual std::uint64_t capacity() const = 0;

    // True iff directory() is on a memory-backed filesystem (tmpfs, ramfs).
    virtual bool in_memory() const = 0;

    // Set iff the default spool parent was unusable and the spool is on disk: says which.
    virtual const std::optional<std::string>& warning() const = 0;

    // Queues `file`, complete at directory()/file.key, to become the store's file.key: uploaded
    // by one of StageOptions::parallel workers (a bucket), read in (memory), confirmed (disk);
    // then unlinked (but on disk). Returns at once; `ticket` names it in wait()'s answer.
    // Called from one thread at a time (it may be another than the owner's).
    virtual void commit(std::size_t ticket, StagedFile file) = 0;

    // Waits for every queued commit. Returns each one's outcome (in no set order) once.
    virtual std::vector<Committed> wait() = 0;

    // Requests sent so far by the commit workers (a bucket's; 0 elsewhere).
    virtual std::uint64_t requests() const { return 0; }

  protected:
    Staging() = default;
};

class ObjectStore {
  public:
    virtual ~ObjectStore() = default;
    ObjectStore(const ObjectStore&) = delete;
    ObjectStore& operator=(const ObjectStore&) = delete;

    // `key`'s name for messages: "/srv/mirror/fedora/a.rpm", "s3://bucket/prefix/fedora/a.rpm".
    virtual std::string describe(std::string_view key) const = 0;

    // The regular file at `key`; nullopt iff there is none (nothing, a directory, a symlink).
    // The store's error iff it cannot tell.
    virtual Result<std::optional<ObjectInfo>> stat(std::string_view key) = 0;

    // Every regular file at or below the directory `prefix` ("" = the whole store), recursively,
    // by key, no symlink followed. An absent prefix holds nothing. What shows through an alias is
    // not listed under the alias's key on disk (a symlink) but is in a bucket (copies); the
    // markers of a bucket's trees and aliases are never listed.
    virtual Result<ObjectListing> list(std::string_view prefix) = 0;

    // The names (one segment each) of the "directories" right below `prefix`, sorted: real
    // directories on disk (not symlinks), common prefixes in a bucket. Empty iff none or absent.
    virtual Result<std::vector<std::string>> list_dirs(std::string_view prefix) = 0;

    // The whole content of the (small) regular file at `key`. Error{NotFound} iff there is none;
    // Error{Unsafe} iff something else is there (a symlink is not followed).
    virtual Result<std::string> read(std::string_view key) = 0;

    // A local file holding the content of the regular file at `key`, for a parser that reads
    // files: on disk the file itself (checked as read checks it), otherwise a copy fetched to
    // `scratch`/`key` (the caller's directory, removed by the caller). Errors as read.
    virtual Result<std::filesystem::path> local_copy(std::string_view key,
                                                     const std::filesystem::path& scratch) = 0;

    // Stores `bytes` at `key` atomically (a reader sees the old content or the new), creating the
    // directories above it. On error the old content (or nothing) stays.
    virtual Result<void> put(std::string_view key, std::string_view bytes) = 0;

    // As put, with the content of the local file `path`.
    virtual Result<void> put_file(std::string_view key, const std::filesystem::path& path) = 0;

    // A staging area (Staging) for files made locally, then committed under their keys: on disk
    // the store's root (a writer's rename is the commit, no bytes copied); in a bucket a bounded
    // spool (store/spool.hpp) and `options.parallel` upload workers; in memory a spool read in.
    // The store must outlive it; while commits are under way the store's other operations may
    // be called only where the implementation says (a bucket: any). Error{Io} naming the spool
    // iff it cannot be created.
    virtual Result<std::unique_ptr<Staging>> stage(const StageOptions& options) = 0;

    // Makes each copy's `to` hold its `from` (as CopyMode says), each replaced atomically.
    // Returns the first failure (those before it are made); Error{NotFound} iff a source is not
    // there, Error{Corrupt} iff it is not its pin.
    virtual Result<void> copy(std::span<const CopyRequest> copies, const CopyOptions& options) = 0;

    // Removes the regular files `keys`; a key already gone (or not a regular file) is left alone.
    // Returns the first failure; those removed before it stay removed.
    virtual Result<void> remove(std::span<const std::string> keys) = 0;

    // Removes the directory `key` iff it is empty, then each directory above it that is left
    // empty, up to the root (never the root itself), stopping at the first that is not empty or
    // not a directory: what remove leaves of a removed file's directories (on disk; a medium
    // whose directories are only its keys' prefixes, a bucket, has none left). Best effort: a
    // directory that cannot be removed is left, and so are those above it.
    virtual void remove_empty_dirs(std::string_view key) = 0;

    // --- Finding content (--dedupe) ---

    // Finds, for each of `wanted` (of a known size, kUnknownSize never found), a `*.rpm` file
    // below `options.trees` holding that content, pinned to what was found. On disk by walking the
    // trees (regular files only, no symlink followed, never repodata/ nor a staging directory,
    // never another filesystem than `options.near`'s) and hashing only the files whose size a
    // wanted content has, unless the checksum cache holds an entry `options.trust` vouches for;
    // a tree that cannot be read is a note. In a bucket, and in memory, by what rpmirror's record
    // of each tree vouches for, nothing read (an object read costs its download): the state
    // object `<tree>/.rpmirror/state.json` (s3/mirror_state.hpp) records each package with its
    // checksum, size and version; a tree without one holds nothing known. Returns the store's
    // error naming what could not be read (a record that does not parse).
    virtual Result<FoundContent> find_content(std::span<const WantedContent> wanted,
                                              const FindOptions& options) = 0;

    // --- Trees ---

    // Starts building the tree that will appear at `key`, after removing what interrupted builds
    // left beside it (the caller holds the lock of whatever owns the trees there). Nothing is
    // visible at `key` until TreeBuild::commit. `what` names the tree in messages ("snapshot").
    // Error{BadInput} "exists already" iff a committed tree (on disk: anything) is at `key`.
    virtual Result<std::unique_ptr<TreeBuild>> build_tree(std::string_view key,
                                                          std::string_view what) = 0;

    // The time (ns since the epoch) the committed tree at `key` was completed; nullopt iff none.
    virtual Result<std::optional<std::int64_t>> tree(std::string_view key) = 0;

    // The names of the committed trees right below `prefix` (builds in progress and interrupted
    // ones left out), sorted.
    virtual Result<std::vector<std::string>> trees(std::string_view prefix) = 0;

    // Removes the committed tree `key`: gone for readers at once (renamed aside, or its marker
    // and index removed first), then everything in it. Nothing there is not an error.
    virtual Result<void> remove_tree(std::string_view key) = 0;

    // --- Aliases ---

    // Makes `alias` show the committed tree `tree` (replacing what it showed) after confirming
    // `lock` (when given): a reader of the alias sees the old tree or the new one, never a mix.
    // Error{Unsafe} naming the alias iff something that is no alias is there (nothing changed).
    virtual Result<void> point_alias(std::string_view alias, std::string_view tree,
                                     RepoLock* lock) = 0;

    // The key of the tree `alias` shows; nullopt iff `alias` is no alias.
    virtual Result<std::optional<std::string>> alias_target(std::string_view alias) = 0;

  protected:
    ObjectStore() = default;
};

// Returns Error{BadInput} naming `key` unless it is a key (above); "" is one iff `allow_root`.
Result<void> check_key(std::string_view key, bool allow_root = false);

// `prefix` + "/" + `relative` (either may be empty).
std::string join_key(std::string_view prefix, std::string_view relative);

// The key's parent ("a/b" of "a/b/c"; "" at the top) and its last segment ("c").
std::string parent_of(std::string_view key);
std::string name_of(std::string_view key);

// The store of the directory `root` (it need not exist yet).
std::unique_ptr<ObjectStore> disk_object_store(std::filesystem::path root);

// The store of the prefix `where` in a bucket, with the client settings `config`.
std::unique_ptr<ObjectStore> s3_object_store(s3::S3Config config, s3::S3Location where);

// An empty store in memory, for unit tests.
std::unique_ptr<ObjectStore> memory_object_store();

// The one place a destination becomes a store: an s3:// URL is a prefix in a bucket (its settings
// `s3`, each unset one from the environment), anything else a directory. Error{BadInput} iff the
// URL does not parse or the settings cannot be resolved.
Result<std::unique_ptr<ObjectStore>> open_object_store(
    std::string_view destination, const std::optional<s3::S3Overrides>& s3 = std::nullopt);

}  // namespace rpmirror::store
