// The files of one repository as a bundle carries them (repository_files.hpp).
#include "export/repository_files.hpp"

#include <utility>

#include "fs/tree.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "store/mirror_store.hpp"

namespace rpmirror::bundle {

bool is_published_key(std::string_view key) {
    std::size_t start = 0;
    while (start <= key.size()) {
        if (start < key.size() && key[start] == '.') {
            return false;
        }
        const std::size_t slash = key.find('/', start);
        if (slash == std::string_view::npos) {
            break;
        }
        start = slash + 1;
    }
    return true;
}

Result<std::vector<ListedFile>> list_repository(store::ObjectStore& store,
                                                std::string_view prefix) {
    auto listing = store.list(prefix);
    if (!listing) {
        return tl::unexpected(std::move(listing.error()));
    }
    std::vector<ListedFile> files;
    bool indexed = false;
    const std::string lead = prefix.empty() ? std::string() : std::string(prefix) + "/";
    for (const auto& [key, info] : *listing) {
        std::string relative = key.substr(lead.size());
        if (!is_published_key(relative)) {
            continue;
        }
        indexed = indexed || relative == store::kIndexKey;
        files.push_back(ListedFile{std::move(relative), info.size});
    }
    if (!indexed) {
        return make_error(ErrorCode::BadInput, "no repository here (no repodata/repomd.xml)",
                          store.describe(prefix));
    }
    return files;
}

LocalFile::~LocalFile() {
    if (fetched_) {
        (void)fs::remove_file(path_);  // best effort: a leftover is in the scratch directory
    }
}

Result<LocalFile> local_file(store::ObjectStore& store, std::string_view key,
                             const std::filesystem::path& scratch) {
    auto path = store.local_copy(key, scratch);
    if (!path) {
        return tl::unexpected(std::move(path.error()));
    }
    const bool fetched = path->string().starts_with(scratch.string() + "/");
    return LocalFile(std::move(*path), fetched);
}

Result<std::string> sha256_of(const std::filesystem::path& path) {
    HashOptions options;
    options.use_cache = false;
    auto digest = hash_file(path, ChecksumType::Sha256, options);
    if (!digest) {
        return tl::unexpected(std::move(digest.error()));
    }
    return std::move(digest->hex);
}

}  // namespace rpmirror::bundle
