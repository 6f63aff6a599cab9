// Uploading one verified local file (a package from the spool, a metadata record) as an object:
// one PUT up to the part size, a multipart upload above it (aborted on any failure, so no orphan
// parts remain). Bodies are mapped from the file (mmap), never copied onto the heap. The object
// carries x-amz-meta-sha256 and, for another upstream checksum type, x-amz-meta-<type> too.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "rpmirror/checksum/checksum.hpp"
#include "rpmirror/s3/s3.hpp"
#include "rpmirror/util/error.hpp"
#include "s3/client.hpp"
#include "s3/mirror_state.hpp"

namespace rpmirror::s3 {

// The smallest part S3 accepts (but for the last).
inline constexpr std::uint64_t kMinPartSize = 5ULL * 1024 * 1024;

struct UploadSpec {
    ChecksumType checksum_type = ChecksumType::Sha256;  // of `digest`, upstream's
    std::string digest;                                 // lowercase hex; the file was verified
    std::uint64_t part_size = 64ULL * 1024 * 1024;      // >= kMinPartSize
    std::string acl;                                    // canned ACL, empty = none
    std::string content_type;                           // empty = none
};

// Uploads the file at `path` as `key` of `bucket`. With an upstream sha256 the PUT is signed
// with that digest (the store refuses a body that does not match it); otherwise the file's
// sha256 is computed. Returns what was stored (size, ETag, upstream checksum), or the first
// error (an s3:// URL and the server's code, or the local file's path for a read error); a
// failed multipart upload is aborted before returning.
Result<StoredObject> upload_file(S3Client& client, std::string_view bucket, std::string_view key,
                                 const std::filesystem::path& path, const UploadSpec& spec);

// Stores `body` (a document generated or fetched in memory: repomd.xml, its signature) as `key`
// with `spec`'s metadata, in one PUT. Returns what was stored.
Result<StoredObject> upload_bytes(S3Client& client, std::string_view bucket, std::string_view key,
                                  std::string_view body, const UploadSpec& spec);

}  // namespace rpmirror::s3
