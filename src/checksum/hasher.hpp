// The checksum engine behind rpmirror/checksum/checksum.hpp: digest helpers, the streaming
// Hasher the downloader feeds, the per-thread FileHasher, the CacheTrust rule and the checksum
// cache kept in extended attributes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>

#include <sys/stat.h>

#include "rpmirror/checksum/checksum.hpp"

struct evp_md_ctx_st;  // OpenSSL's EVP_MD_CTX, kept out of the headers

namespace rpmirror {
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

// File hashing (FileHasher): a regular file is read one of three ways: pread() into a
// `buffer_size` buffer reused from file to file; mapped 16 MiB at a time (madvise SEQUENTIAL +
// WILLNEED) and hashed straight from the page cache; or mapped so with its pages populated first
// (MADV_POPULATE_READ). Which is fastest depends on the machine (a fault per newly mapped page
// costs more on some VMs than the copy a read() makes), so ReadMethod::Auto chooses by measurement
// as it goes: for each class of file sizes every way hashes a few files, timed in the thread's CPU
// time, then the cheapest reads the rest, with one file in 32 still given to another way to follow
// changes (read_chooser.hpp; `bench/checksum --engines` shows each way and the choice). 256 KiB
// buffers stay in L2 between the copy and the hash (`bench/checksum --sweep`). A file that changes
// size while it is hashed (truncated: SIGBUS on the mapping, or a short read; grown: a different
// size at the end) yields Error{Corrupt}, never a digest.

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

inline constexpr ChecksumType kAllChecksumTypes[] = {
    ChecksumType::Md5,    ChecksumType::Sha1,   ChecksumType::Sha224,
    ChecksumType::Sha256, ChecksumType::Sha384, ChecksumType::Sha512,
};

// Returns the lowercase name of `type` as repomd.xml writes it ("sha256").
std::string_view checksum_type_name(ChecksumType type);

// Returns "ok", "digest-mismatch", "size-mismatch", "missing" or "io-error".
std::string_view verify_status_name(VerifyStatus status);

// An expected size that upstream metadata does not give (a <package> without <size>, a repomd.xml
// record without <size>, as old createrepo wrote): such files are verified by checksum alone.
inline constexpr std::uint64_t kUnknownSize = UINT64_MAX;

}  // namespace rpmirror
