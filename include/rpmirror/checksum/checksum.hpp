// The checksum engine: digest types, a streaming hasher, file hashing, parallel verification and
// the checksum cache kept in extended attributes.
//
// Used by the downloader (streaming, fed from curl's write callback), the sync planner and
// `rpmirror checksum` / `verify` (whole files, many at once, on worker threads).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <sys/stat.h>

#include "rpmirror/util/error.hpp"

struct evp_md_ctx_st;  // OpenSSL's EVP_MD_CTX, kept out of the public headers

namespace rpmirror {

enum class ChecksumType { Md5, Sha1, Sha224, Sha256, Sha384, Sha512 };

inline constexpr ChecksumType kAllChecksumTypes[] = {
    ChecksumType::Md5,    ChecksumType::Sha1,   ChecksumType::Sha224,
    ChecksumType::Sha256, ChecksumType::Sha384, ChecksumType::Sha512,
};

// Returns the type named `name` as repository metadata spells it: case-insensitive, "sha" means
// sha1. Returns Error{Unsupported} naming `name` iff it is none of the six types.
Result<ChecksumType> parse_checksum_type(std::string_view name);

// Returns the lowercase name of `type` as repomd.xml writes it ("sha256").
std::string_view checksum_type_name(ChecksumType type);

// Returns the number of hex characters in a digest of `type` (64 for sha256).
std::size_t digest_hex_length(ChecksumType type);

// Returns the unique type whose hex digests have `hex_length` characters, or nullopt iff none has.
std::optional<ChecksumType> checksum_type_for_hex_length(std::size_t hex_length);

// Returns true iff `digest` is exactly digest_hex_length(type) hex characters (any case).
bool is_valid_hex_digest(ChecksumType type, std::string_view digest);

// Streaming hasher over OpenSSL 3 EVP. The EVP_MD of each type is fetched once per process and
// shared; a Hasher owns only its EVP_MD_CTX.
// Not thread-safe: one Hasher per thread (the download engine keeps one per transfer).
class Hasher {
  public:
    explicit Hasher(ChecksumType type);
    Hasher(Hasher&&) noexcept;
    Hasher& operator=(Hasher&&) noexcept;
    ~Hasher();

    ChecksumType type() const { return type_; }

    // Feeds `bytes` into the digest.
    void update(std::span<const std::byte> bytes);
    void update(const void* data, std::size_t size);

    // Returns the lowercase hex digest of everything fed since construction or the last reset,
    // then resets the hasher so it can be reused for the same type.
    std::string finish();

    // Discards everything fed so far; with `type`, also switches the digest type.
    void reset();
    void reset(ChecksumType type);

  private:
    struct CtxDeleter {
        void operator()(evp_md_ctx_st* ctx) const;
    };
    ChecksumType type_;
    std::unique_ptr<evp_md_ctx_st, CtxDeleter> ctx_;
};

// Returns the lowercase hex digest of `bytes`. Thread-safe.
std::string hash_bytes(ChecksumType type, std::span<const std::byte> bytes);
std::string hash_bytes(ChecksumType type, std::string_view bytes);

// ---------------------------------------------------------------------------------------------
// File hashing
//
// A regular file is read one of three ways: pread() into a `buffer_size` buffer reused from file
// to file; mapped 16 MiB at a time (madvise SEQUENTIAL + WILLNEED) and hashed straight from the
// page cache; or mapped so with its pages populated first (MADV_POPULATE_READ). Which is fastest
// depends on the machine (a fault per newly mapped page costs more on some VMs than the copy a
// read() makes), so ReadMethod::Auto chooses by measurement as it goes: for each class of file
// sizes every way hashes a few files, timed in the thread's CPU time, then the cheapest reads the
// rest, with one file in 32 still given to another way to follow changes (src/checksum/
// read_chooser.hpp; `bench/checksum --engines` shows each way and the choice). 256 KiB buffers
// stay in L2 between the copy and the hash (`bench/checksum --sweep`).
// A file that changes size while it is hashed (truncated: SIGBUS on the mapping, or a short read;
// grown: a different size at the end) yields Error{Corrupt}, never a digest.

inline constexpr std::size_t kDefaultBufferSize = 256 * 1024;

enum class ReadMethod {
    Auto,          // chosen by measurement, per size class (above)
    Pread,         // always pread
    Mmap,          // always mmap windows, falling back to pread only where mmap is impossible
    MmapPopulate,  // as Mmap, each window populated before it is hashed
};

// The one rule for trusting a cached checksum (sync, verify, repair, dedupe and `checksum` alike):
// a cache entry is believed only for a file rpmirror's own record vouches for, by inode, size,
// mtime *and* ctime as a sync state (or a catalogue) recorded them after rpmirror wrote or
// verified the file. Anyone who can write a file can put its mtime back and write its xattrs,
// librepo's and rpmirror's alike; nobody can put back its ctime, which every write, chmod and
// xattr change moves. The record lives outside the mirror, in the state directory.
class CacheTrust {
  public:
    // Vouches for the file whose stat shows these four values.
    void vouch(std::uint64_t inode, std::uint64_t size, std::int64_t mtime_ns,
               std::int64_t ctime_ns);

    // True iff a record vouches for the file whose (f)stat is `st`.
    bool vouches_for(const struct stat& st) const;

    std::size_t size() const { return records_.size(); }

  private:
    std::set<std::tuple<std::uint64_t, std::uint64_t, std::int64_t, std::int64_t>> records_;
};

struct HashOptions {
    // Read (for a file `trust` vouches for: rpmirror's own entry only, never librepo's) and
    // write the xattr checksum cache. Without `trust`, nothing is read from the cache.
    bool use_cache = true;
    std::shared_ptr<const CacheTrust> trust{};
    ReadMethod method = ReadMethod::Auto;
    std::size_t buffer_size = kDefaultBufferSize;
    // Once a stop is requested, hashing gives up at its next window or buffer (within 16 MiB of
    // reading) with Error{Interrupted}: SIGINT is acted on promptly even on a cold page cache.
    std::stop_token stop{};
};

struct FileDigest {
    std::string hex;          // lowercase hex digest
    std::uint64_t size = 0;   // bytes hashed (== st_size)
    bool from_cache = false;  // true iff the digest came from the xattr cache, not from hashing
};

// What verification found for one file.
enum class VerifyStatus {
    Ok,              // size and digest match
    DigestMismatch,  // size matches, digest differs (`actual_digest` holds it)
    SizeMismatch,    // st_size differs from the expected size; nothing was hashed
    Missing,         // the path does not exist
    IoError,         // any other failure; `error` says what, with errno
};

// Returns "ok", "digest-mismatch", "size-mismatch", "missing" or "io-error".
std::string_view verify_status_name(VerifyStatus status);

// An expected size that upstream metadata does not give (a <package> without <size>, a repomd.xml
// record without <size>, as old createrepo wrote): such files are verified by checksum alone.
inline constexpr std::uint64_t kUnknownSize = UINT64_MAX;

struct VerifyRequest {
    std::filesystem::path path;
    ChecksumType type = ChecksumType::Sha256;
    std::string expected_digest;                 // hex, any case
    std::optional<std::uint64_t> expected_size;  // checked with fstat before anything is hashed
};

struct VerifyResult {
    VerifyStatus status = VerifyStatus::IoError;
    std::string actual_digest;  // set when the file was hashed or found in the cache
    std::uint64_t actual_size = 0;
    bool from_cache = false;
    std::optional<Error> error;  // set iff status is Missing or IoError
};

// A reusable per-thread workspace for hashing files: one digest context and one read buffer,
// allocated once. Not thread-safe; create one per worker thread.
class FileHasher {
  public:
    explicit FileHasher(HashOptions options = {});
    FileHasher(FileHasher&&) noexcept;
    FileHasher& operator=(FileHasher&&) noexcept;
    ~FileHasher();

    // Hashes the regular file at `path`.
    // Returns the digest, or: Error{NotFound} iff the path does not exist; Error{BadInput} iff it
    // is not a regular file (directories, FIFOs and devices are refused without reading, so a
    // FIFO never blocks); Error{Corrupt} iff the file changed size while being read; Error{Io}
    // with errno for any other failure. Never returns a digest of partial content.
    // A valid cache entry is returned without hashing (from_cache = true) iff use_cache is set;
    // after hashing, the cache entry is written (best effort, silently skipped where user xattrs
    // are unsupported or not permitted). Never calls fsync.
    Result<FileDigest> hash(const std::filesystem::path& path, ChecksumType type);

    // Hashes the regular file open as `fd` (readable), as hash() does; `subject` names it in
    // errors. Reads with pread and mmap only: the file offset of `fd` is left unchanged.
    Result<FileDigest> hash_fd(int fd, ChecksumType type, std::string_view subject);

    // Hashes everything readable from `fd` until end of file (pipes, stdin); no cache.
    // Returns Error{Io} with errno iff a read fails; `subject` names the stream in errors.
    Result<FileDigest> hash_stream(int fd, ChecksumType type, std::string_view subject);

    // Verifies one file: fstat first (size mismatch ⇒ no hashing), then the cache, then hashing.
    // Never throws; every failure is reported in the result.
    VerifyResult verify(const VerifyRequest& request);

  private:
    struct State;
    std::unique_ptr<State> state_;
};

// Hashes the regular file at `path`; a convenience wrapper around a one-off FileHasher.
// Thread-safe.
Result<FileDigest> hash_file(const std::filesystem::path& path, ChecksumType type,
                             const HashOptions& options = {});

struct VerifyOptions {
    HashOptions hash;
    unsigned threads = 0;  // worker threads; 0 = std::thread::hardware_concurrency()
};

// Verifies every request on a pool of worker threads, each with its own FileHasher; files are
// handed out one at a time, so large and small files balance across workers.
// Returns one result per request, results[i] for requests[i]. Thread-safe.
std::vector<VerifyResult> verify_files(std::span<const VerifyRequest> requests,
                                       const VerifyOptions& options = {});

// Hashes every file in `paths` with `type` on a pool of worker threads, as verify_files does.
// Returns one result per path, results[i] for paths[i], each as FileHasher::hash reports it.
// Thread-safe.
std::vector<Result<FileDigest>> hash_files(std::span<const std::filesystem::path> paths,
                                           ChecksumType type, const VerifyOptions& options = {});

// ---------------------------------------------------------------------------------------------
// The checksum cache, in extended attributes of the file itself.
//
// rpmirror's entry: `user.rpmirror.checksum.<type>` = "v1 <size> <mtime_ns> <inode> <hex>".
//   It is valid iff the file's st_size, st_mtim (in nanoseconds) and st_ino all equal the
//   recorded ones. Size is bound because librepo's key (mtime only) trusts a file truncated or
//   extended within one timestamp tick; the inode because a file replaced by another one with the
//   same mtime (e.g. restored from a backup) must be hashed again. ctime is not bound: writing the
//   xattr itself changes it.
// librepo's entry: `user.librepo.checksum.mtime` = mtime in nanoseconds as decimal text and
//   `user.librepo.checksum.<type>` = hex digest; librepo 1.14 (dnf 4) spells it `user.Librepo.`.
//   Valid iff the mtime equals st_mtim in nanoseconds. Read, so that a mirror made by
//   `dnf reposync` is trusted without re-hashing; written (as `user.Librepo.`, beside rpmirror's
//   own entry, clearing librepo's entries of other types when the mtime changed, as librepo
//   does) so that dnf trusts files rpmirror verified.
// An entry is not written for a file modified less than kRacyWindow ago: a write in the same
// timestamp tick could change the content without changing mtime ("racy" files, as in git) —
// unless rpmirror's entry of another type is valid for the same size, mtime and inode (the file
// is already vouched for at that stat; one more type adds no exposure).

inline constexpr std::int64_t kRacyWindowNs = 2'000'000'000;

// Returns the cached digest for the open file `fd` whose fstat is `st`, or nullopt iff there is
// no valid entry (missing, stale, malformed, or user xattrs unsupported). Reads librepo's entries
// too: only for what dnf would believe (the accelerator's answers); rpmirror's own hashing reads
// read_own_cached_digest, and only for a file its CacheTrust vouches for.
std::optional<std::string> read_cached_digest(int fd, const struct stat& st, ChecksumType type);

// rpmirror's own entry only (never librepo's), as read_cached_digest.
std::optional<std::string> read_own_cached_digest(int fd, const struct stat& st, ChecksumType type);

// Records `hex` as the digest of the open file `fd` whose fstat is `st`. Best effort: returns
// false (and changes nothing) iff the file is racy or the filesystem refuses user xattrs
// (ENOTSUP, EPERM, EACCES, EROFS, ENOSPC, ...). With `trust_recent`, racy files are recorded too:
// for the downloader, which wrote every byte itself.
bool write_cached_digest(int fd, const struct stat& st, ChecksumType type, std::string_view hex,
                         bool trust_recent = false);

// Removes every `user.Librepo.checksum.*` attribute of `fd` (`prefix`: those starting with it:
// librepo 1.19 writes `user.librepo.checksum.*`), as librepo does (lr_checksum_clear_cache) when
// the recorded mtime is stale: digests of other types recorded for older content must not outlive
// it. Best effort: attributes that cannot be listed or removed stay.
void clear_librepo_entries(int fd, std::string_view prefix = "user.Librepo.checksum.");

}  // namespace rpmirror
