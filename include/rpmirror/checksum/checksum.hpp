// Checksums of files: the digest types repository metadata names, hashing files (one, many on
// worker threads, or a stream) and verifying them against expected digests and sizes, with the
// checksum cache rpmirror keeps in extended attributes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/util/error.hpp"

namespace rpmirror {

enum class ChecksumType { Md5, Sha1, Sha224, Sha256, Sha384, Sha512 };

// Returns the type named `name` as repository metadata spells it: case-insensitive, "sha" means
// sha1. Returns Error{Unsupported} naming `name` iff it is none of the six types.
Result<ChecksumType> parse_checksum_type(std::string_view name);

// How a regular file is read: chosen by measurement as hashing goes (Auto), or one way always.
// A file that changes size while it is hashed yields Error{Corrupt}, never a digest.
inline constexpr std::size_t kDefaultBufferSize = 256 * 1024;
enum class ReadMethod {
    Auto,          // chosen by measurement, per class of file sizes
    Pread,         // always pread
    Mmap,          // always mmap windows, falling back to pread only where mmap is impossible
    MmapPopulate,  // as Mmap, each window populated before it is hashed
};

// Which cached checksums may be believed (rpmirror's own records of the files it wrote or
// verified); made by cache_trust_of_state_dir (rpmirror/plan/cache_trust.hpp).
class CacheTrust;

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

// Hashes everything readable from `fd` until end of file (pipes, stdin); no cache. Returns
// Error{Io} with errno iff a read fails; `subject` names the stream in errors.
Result<FileDigest> hash_stream(int fd, ChecksumType type, std::string_view subject,
                               const HashOptions& options = {});

// Hashes the regular file at `path`. Returns the digest, or Error{NotFound} iff it does not exist,
// Error{BadInput} iff it is not a regular file (refused without reading), Error{Corrupt} iff it
// changed size while read, Error{Io} with errno otherwise; never a digest of partial content. With
// use_cache, a valid cache entry of a file `trust` vouches for is returned unhashed (from_cache),
// and a hashed file's entry is written (best effort). Thread-safe.
Result<FileDigest> hash_file(const std::filesystem::path& path, ChecksumType type,
                             const HashOptions& options = {});

struct VerifyOptions {
    HashOptions hash;
    unsigned threads = 0;  // worker threads; 0 = std::thread::hardware_concurrency()
};

// Verifies every request on a pool of worker threads, each with its own buffer; files are
// handed out one at a time, so large and small files balance across workers.
// Returns one result per request, results[i] for requests[i]. Thread-safe.
std::vector<VerifyResult> verify_files(std::span<const VerifyRequest> requests,
                                       const VerifyOptions& options = {});

// Hashes every file in `paths` with `type` on a pool of worker threads, as verify_files does.
// Returns one result per path, results[i] for paths[i], each as hash_file reports it.
// Thread-safe.
std::vector<Result<FileDigest>> hash_files(std::span<const std::filesystem::path> paths,
                                           ChecksumType type, const VerifyOptions& options = {});

}  // namespace rpmirror
