// A mirror in an S3 bucket (see store/s3_store.hpp).
#include "store/s3_store.hpp"

#include <set>
#include <string_view>

#include "fs/walk.hpp"
#include "s3/config.hpp"
#include "s3/mirror_state.hpp"

namespace rpmirror::store {

S3Store::S3Store(s3::S3Client& client, s3::S3Location repo,
                 const std::map<std::string, s3::ListedObject>* listing)
    : client_(client), repo_(std::move(repo)), given_(listing) {}

S3Store::S3Store(s3::S3Client& client, s3::S3Location repo, S3SyncView sync)
    : client_(client), repo_(std::move(repo)), given_(sync.listing), sync_(std::move(sync)) {}

std::string S3Store::describe(std::string_view key) const {
    s3::S3Location location = repo_;
    location.prefix += key;
    return location.to_string();
}

Result<const std::map<std::string, s3::ListedObject>*> S3Store::listing() {
    if (given_ != nullptr) {
        return given_;
    }
    if (!own_) {
        auto listed = s3::list_mirror(client_, repo_);
        if (!listed) {
            return tl::unexpected(std::move(listed.error()));
        }
        own_ = std::move(*listed);
    }
    return &*own_;
}

Result<Listing> S3Store::list_packages() {
    auto objects = listing();
    if (!objects) {
        return tl::unexpected(std::move(objects.error()));
    }
    // As the local walk (fs/walk.hpp's NestedTrees::Skip): a "directory" below the repository
    // that holds its own repodata/repomd.xml is another tree (a repository or a snapshot), whose
    // packages are not the mirror's; so is one that holds another mirror's state (a mirror of
    // packages only has no repodata/ to tell it by), as a local mirror's state directory says.
    // A snapshot being built is not entered either.
    std::set<std::string, std::less<>> nested;  // "a/b/" of each a/b/repodata/repomd.xml
    for (const auto& [key, object] : **objects) {
        for (const std::string_view marker : {std::string_view("/repodata/repomd.xml"),
                                              std::string_view("/.rpmirror/state.json")}) {
            if (key.size() > marker.size() && key.ends_with(marker)) {
                nested.insert(key.substr(0, key.size() - marker.size() + 1));
            }
        }
    }
    const auto inside_another_tree = [&nested](const std::string& key) {
        std::size_t start = 0;
        for (std::size_t slash = key.find('/'); slash != std::string::npos;
             slash = key.find('/', start)) {
            const std::string_view name(key.data() + start, slash - start);
            if (fs::is_snapshot_staging_name(name) ||
                nested.contains(std::string_view(key.data(), slash + 1))) {
                return true;
            }
            start = slash + 1;
        }
        return false;
    };
    Listing packages;
    for (const auto& [key, object] : **objects) {
        if (is_package_key(key) && !inside_another_tree(key)) {
            packages.emplace(key, StoredFile{object.size, object.etag});
        }
    }
    return packages;
}

Result<std::optional<StoredFile>> S3Store::stat(std::string_view key) {
    auto objects = listing();
    if (!objects) {
        return tl::unexpected(std::move(objects.error()));
    }
    const auto found = (*objects)->find(std::string(key));
    if (found == (*objects)->end()) {
        return std::optional<StoredFile>();
    }
    return std::optional<StoredFile>(StoredFile{found->second.size, found->second.etag});
}

Result<std::vector<std::string>> S3Store::remove_packages(std::span<const std::string> keys) {
    for (const std::string& key : keys) {
        if (!is_package_key(key)) {
            return make_error(ErrorCode::BadInput, "is not a package of the mirror; not removed",
                              describe(key));
        }
    }
    return remove_files(keys);
}

}  // namespace rpmirror::store
