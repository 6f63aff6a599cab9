// Uploading one local file as an object (see s3/upload.hpp).
#include "s3/upload.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>
#include <vector>

#include "checksum/hasher.hpp"
#include "fs/durable.hpp"
#include "s3/config.hpp"
#include "util/mapped_file.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror::s3 {

namespace {

PutOptions put_options(const UploadSpec& spec, std::string sha256) {
    PutOptions options;
    options.content_type = spec.content_type;
    options.acl = spec.acl;
    options.sha256 = std::move(sha256);
    if (spec.checksum_type != ChecksumType::Sha256) {
        options.metadata[std::string(checksum_type_name(spec.checksum_type))] = spec.digest;
    }
    return options;
}

StoredObject stored(std::uint64_t size, std::string etag, const UploadSpec& spec) {
    return StoredObject{size, std::move(etag), spec.checksum_type, spec.digest};
}

// `length` bytes at `offset` of a file, mapped read-only (the page cache's pages, or tmpfs's: no
// copy on the heap, so uploads from a spool in memory keep the resident set flat).
struct MappedPart {
    MappedFile mapping;
    std::string_view bytes;
};

// Maps [offset, offset + length) of `fd` (the file `path`, at least that long). Returns the
// error naming `path` iff mmap fails.
Result<MappedPart> map_part(int fd, const std::filesystem::path& path, std::uint64_t offset,
                            std::uint64_t length) {
    MappedPart part;
    if (length == 0) {
        return part;
    }
    static const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    const std::uint64_t start = offset - offset % page;  // mmap's offset is page-aligned
    const std::uint64_t skip = offset - start;
    auto mapping = MappedFile::map_for_sequential_read(fd, skip + length, start);
    if (!mapping) {
        return make_errno_error("cannot map", path.string(), errno);
    }
    part.mapping = std::move(*mapping);
    part.bytes = std::string_view(reinterpret_cast<const char*>(part.mapping.data()) + skip,
                                  static_cast<std::size_t>(length));
    return part;
}

Result<StoredObject> upload_multipart(S3Client& client, std::string_view bucket,
                                      std::string_view key, int fd,
                                      const std::filesystem::path& path, std::uint64_t size,
                                      const UploadSpec& spec) {
    std::string sha256 = spec.digest;
    if (spec.checksum_type != ChecksumType::Sha256) {
        auto digest = hash_file(path, ChecksumType::Sha256);
        if (!digest) {
            return tl::unexpected(std::move(digest.error()));
        }
        sha256 = digest->hex;
    }
    auto upload_id = client.create_multipart_upload(bucket, key, put_options(spec, sha256));
    if (!upload_id) {
        return tl::unexpected(std::move(upload_id.error()));
    }
    const auto fail = [&](Error error) -> Result<StoredObject> {
        (void)client.abort_multipart_upload(bucket, key, *upload_id);
        return tl::unexpected(std::move(error));
    };
    std::vector<CompletedPart> parts;
    for (std::uint64_t offset = 0; offset < size; offset += spec.part_size) {
        const std::uint64_t length = std::min(spec.part_size, size - offset);
        auto body = map_part(fd, path, offset, length);
        if (!body) {
            return fail(std::move(body.error()));
        }
        const auto number = static_cast<unsigned>(parts.size() + 1);
        auto etag = client.upload_part(bucket, key, *upload_id, number, body->bytes);
        if (!etag) {
            return fail(std::move(etag.error()));
        }
        parts.push_back({number, std::move(*etag)});
    }
    auto completed = client.complete_multipart_upload(bucket, key, *upload_id, parts);
    // Ceph RGW's answer does not carry the ETag the client reads: the listing's is needed.
    auto info = client.head_object(bucket, key);
    if (!completed) {
        // A complete answered with an error may still have been carried out (the store
        // committed, then its answer failed; a retry of it then finds NoSuchUpload): the object
        // is ours iff it has this size and the SHA-256 this upload was created with. The upload
        // is aborted either way: an object of the same content stored earlier under this key
        // passes the same check, and the parts of an upload that was not carried out would then
        // stay behind (after a complete that was carried out, the abort finds NoSuchUpload).
        const bool carried_out = info && info->size == size && info->metadata.contains("sha256") &&
                                 info->metadata.at("sha256") == sha256;
        (void)client.abort_multipart_upload(bucket, key, *upload_id);
        if (!carried_out) {
            return tl::unexpected(std::move(completed.error()));
        }
    }
    if (!info) {
        return tl::unexpected(std::move(info.error()));
    }
    if (info->size != size) {
        return make_error(ErrorCode::Corrupt,
                          "stored object has " + std::to_string(info->size) + " bytes, expected " +
                              std::to_string(size),
                          object_url(bucket, key));
    }
    return stored(size, info->etag, spec);
}

}  // namespace

Result<StoredObject> upload_file(S3Client& client, std::string_view bucket, std::string_view key,
                                 const std::filesystem::path& path, const UploadSpec& spec) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (fd.get() < 0) {
        return make_errno_error("cannot open", path.string(), errno);
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) {
        return make_errno_error("cannot stat", path.string(), errno);
    }
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (size > spec.part_size) {
        return upload_multipart(client, bucket, key, fd.get(), path, size, spec);
    }
    auto body = map_part(fd.get(), path, 0, size);
    if (!body) {
        return tl::unexpected(std::move(body.error()));
    }
    return upload_bytes(client, bucket, key, body->bytes, spec);
}

Result<StoredObject> upload_bytes(S3Client& client, std::string_view bucket, std::string_view key,
                                  std::string_view body, const UploadSpec& spec) {
    std::string sha256 = spec.checksum_type == ChecksumType::Sha256 ? spec.digest : std::string();
    if (sha256.empty()) {
        sha256 = hash_bytes(ChecksumType::Sha256, body);
    }
    auto etag = client.put_object(bucket, key, body, put_options(spec, std::move(sha256)));
    if (!etag) {
        return tl::unexpected(std::move(etag.error()));
    }
    return stored(body.size(), std::move(*etag), spec);
}

}  // namespace rpmirror::s3
