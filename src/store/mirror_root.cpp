// A mirror's root and its repositories (store/mirror_root.hpp).
#include "store/mirror_root.hpp"

#include <algorithm>

#include "config/repo_files.hpp"
#include "metadata/treeinfo.hpp"
#include "rpmirror/config/config.hpp"
#include "s3/client.hpp"
#include "s3/config.hpp"
#include "s3/mirror_state.hpp"
#include "store/destination.hpp"
#include "store/local_store.hpp"
#include "store/s3_store.hpp"

namespace rpmirror::store {

namespace {

// True iff `store` holds a regular file at `key`; the store's error iff it cannot tell.
Result<bool> holds(ObjectStore& store, const std::string& key) {
    auto found = store.stat(key);
    if (!found) {
        return tl::unexpected(std::move(found.error()));
    }
    return found->has_value();
}

}  // namespace

Result<MirrorRoot> MirrorRoot::open(std::string_view destination, MirrorRootOptions options) {
    MirrorRoot root;
    auto objects = open_object_store(destination, options.s3);
    if (!objects) {
        return tl::unexpected(std::move(objects.error()));
    }
    root.objects_ = std::move(*objects);
    const Destination place = Destination::of(destination);
    if (place.in_bucket()) {
        auto where = place.location();
        auto config =
            s3::resolve_config(options.s3.value_or(s3::S3Overrides{}), s3::process_environment());
        if (!where || !config) {  // open_object_store parsed both
            return make_error(ErrorCode::BadInput, "not a bucket prefix", std::string(destination));
        }
        root.shown_ = where->to_string();
        root.where_ = std::move(*where);
        root.client_ = std::make_unique<s3::S3Client>(std::move(*config));
    } else {
        root.dir_ = std::filesystem::path(destination);
        root.shown_ = root.dir_.string();
    }
    root.options_ = std::move(options);
    return root;
}

MirrorRoot::MirrorRoot(MirrorRoot&&) noexcept = default;
MirrorRoot& MirrorRoot::operator=(MirrorRoot&&) noexcept = default;
MirrorRoot::~MirrorRoot() = default;

Result<MirrorContents> MirrorRoot::discover() {
    MirrorContents contents;
    auto names = objects_->list_dirs("");
    if (!names) {
        return tl::unexpected(std::move(names.error()));
    }
    for (const std::string& id : *names) {
        if (!is_valid_repo_id(id)) {
            continue;
        }
        for (const std::string_view marker :
             {std::string_view("repodata/repomd.xml"), s3::kStateKey}) {
            auto found = holds(*objects_, join_key(id, marker));
            if (!found) {
                return tl::unexpected(std::move(found.error()));
            }
            if (*found) {
                contents.repositories.push_back(id);
                break;
            }
        }
        auto tree = holds(*objects_, join_key(id, kTreeinfoName));
        if (!tree) {
            return tl::unexpected(std::move(tree.error()));
        }
        if (!*tree) {
            continue;
        }
        contents.trees.push_back(id);
        auto text = objects_->read(join_key(id, kTreeinfoName));
        auto parsed = text ? parse_treeinfo(*text, id) : tl::unexpected(text.error());
        if (!parsed) {
            continue;  // the tree's own audit reports it
        }
        for (const std::string& repository : parsed->repositories) {
            if (repository.empty() || !check_key(repository)) {
                continue;
            }
            auto found =
                holds(*objects_, join_key(join_key(id, repository), "repodata/repomd.xml"));
            if (found && *found) {
                contents.repositories.push_back(id + "/" + repository);
            }
        }
    }
    std::sort(contents.repositories.begin(), contents.repositories.end());
    return contents;
}

bool MirrorRoot::exists() const {
    std::error_code ignored;
    return where_ || std::filesystem::is_directory(dir_, ignored);
}

std::unique_ptr<MirrorStore> MirrorRoot::repository(std::string_view id) {
    return repository(id, options_.state_dir);
}

std::unique_ptr<MirrorStore> MirrorRoot::repository(std::string_view id,
                                                    const std::filesystem::path& state_dir) {
    if (client_) {
        return std::make_unique<S3Store>(*client_, location_of(id));
    }
    return std::make_unique<LocalStore>(directory_of(id), state_dir);
}

std::filesystem::path MirrorRoot::repository_path(std::string_view id) const {
    return where_ ? std::filesystem::path(location_of(id).to_string()) : directory_of(id);
}

std::optional<std::filesystem::path> MirrorRoot::plan_root(std::string_view id) const {
    if (where_) {
        return std::nullopt;
    }
    return directory_of(id);
}

s3::S3Location MirrorRoot::location_of(std::string_view id) const {
    return {where_->bucket, id.empty() ? where_->prefix : where_->prefix + std::string(id) + "/"};
}

std::filesystem::path MirrorRoot::directory_of(std::string_view id) const {
    return id.empty() ? dir_ : dir_ / std::string(id);
}

}  // namespace rpmirror::store
