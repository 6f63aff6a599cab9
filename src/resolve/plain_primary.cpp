// The primary metadata of a fetched repository, decompressed (resolve/plain_primary.hpp).
#include "resolve/plain_primary.hpp"

#include <cerrno>
#include <fstream>
#include <optional>
#include <span>

#include "fs/durable.hpp"
#include "index/index.hpp"
#include "metadata/metadata.hpp"

namespace rpmirror {

Result<void> write_plain_file(const std::filesystem::path& in,
                              std::optional<std::uint64_t> expected,
                              const std::filesystem::path& out) {
    DecompressOptions options;
    options.expected_size = expected;
    std::ofstream stream(out, std::ios::binary | std::ios::trunc);
    auto written = decompress_file(in, options, [&stream](std::span<const char> chunk) {
        stream.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
        return Result<void>{};
    });
    if (!written) {
        return tl::unexpected(std::move(written.error()));
    }
    stream.close();
    if (!stream) {
        return make_errno_error("cannot write", out.string(), errno);
    }
    return {};
}

Result<std::optional<RepomdRecord>> fetched_record(const std::filesystem::path& root,
                                                   std::string_view type) {
    const std::filesystem::path index = root / "repodata" / "repomd.xml";
    auto text = fs::read_file(index);
    if (!text) {
        return tl::unexpected(std::move(text.error()));
    }
    auto repomd = parse_repomd(*text, index.string());
    if (!repomd) {
        return tl::unexpected(std::move(repomd.error()));
    }
    const RepomdRecord* record = repomd->find(type);
    if (record == nullptr) {
        return std::nullopt;
    }
    return *record;
}

Result<void> write_plain_primary(const std::filesystem::path& root,
                                 const std::filesystem::path& out) {
    auto written = write_plain_record(root, "primary", out);
    if (!written) {
        return tl::unexpected(std::move(written.error()));
    }
    if (!*written) {
        return make_error(ErrorCode::BadInput, "the repository lists no primary metadata",
                          (root / "repodata" / "repomd.xml").string());
    }
    return {};
}

Result<bool> write_plain_record(const std::filesystem::path& root, std::string_view type,
                                const std::filesystem::path& out) {
    auto record = fetched_record(root, type);
    if (!record) {
        return tl::unexpected(std::move(record.error()));
    }
    if (!*record) {
        return false;
    }
    if (auto written = write_plain_file(root / (*record)->location_href, (*record)->open_size, out);
        !written) {
        return tl::unexpected(std::move(written.error()));
    }
    return true;
}

}  // namespace rpmirror
