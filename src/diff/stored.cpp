// A revision of a repository or an installation tree read where a mirror stores it: a directory
// or a bucket prefix, through the one store opened for it (store/object_store.hpp). Its files are
// read in place on disk and fetched into a scratch directory from a bucket, then verified and
// parsed as read_repo_contents does (diff/diff.hpp).
#include <fmt/core.h>

#include "diff/diff.hpp"
#include "diff/stored.hpp"
#include "fs/scratch_dir.hpp"
#include "metadata/metadata.hpp"
#include "metadata/treeinfo.hpp"
#include "store/object_store.hpp"

namespace rpmirror {

namespace {
constexpr std::string_view kRepomdKey = "repodata/repomd.xml";
}  // namespace

Result<RepoContents> read_repository_below(store::ObjectStore& store, const std::string& prefix,
                                           const std::string& shown,
                                           const std::filesystem::path& scratch) {
    auto repomd_path = store.local_copy(store::join_key(prefix, kRepomdKey), scratch);
    if (!repomd_path) {
        if (repomd_path.error().code == ErrorCode::NotFound) {
            return make_error(ErrorCode::NotFound, "no repository here (no repodata/repomd.xml)",
                              shown);
        }
        return tl::unexpected(std::move(repomd_path.error()));
    }
    // Where the repository's files are now: its directory, or its copy below `scratch`.
    const std::filesystem::path root = repomd_path->parent_path().parent_path();
    auto text = store.read(store::join_key(prefix, kRepomdKey));
    if (!text) {
        return tl::unexpected(std::move(text.error()));
    }
    auto repomd = parse_repomd(*text, shown + "/" + std::string(kRepomdKey));
    if (!repomd) {
        return tl::unexpected(std::move(repomd.error()));
    }
    for (const std::string_view type : {"primary", "updateinfo"}) {
        const RepomdRecord* record = repomd->find(type);
        if (record == nullptr) {
            continue;
        }
        auto relative = safe_relative_path(record->location_href, fmt::format("{} record", type));
        if (!relative) {
            return tl::unexpected(std::move(relative.error()));
        }
        if (auto made =
                store.local_copy(store::join_key(prefix, relative->generic_string()), scratch);
            !made && made.error().code != ErrorCode::NotFound) {
            return tl::unexpected(std::move(made.error()));
        }  // a missing record: read_repo_contents names it
    }
    return read_repo_contents(root, shown);
}

namespace {

struct OpenedStore {
    std::unique_ptr<store::ObjectStore> store;
    ScratchDir scratch;
    std::string shown;
};

Result<OpenedStore> open_destination(std::string_view destination, std::string_view location,
                                     const std::optional<s3::S3Overrides>& overrides) {
    auto opened = store::open_object_store(destination, overrides);
    if (!opened) {
        return tl::unexpected(std::move(opened.error()));
    }
    auto scratch = ScratchDir::create("rpmirror-diff");
    if (!scratch) {
        return tl::unexpected(std::move(scratch.error()));
    }
    std::string shown = location.empty() ? std::string(destination) : std::string(location);
    return OpenedStore{std::move(*opened), std::move(*scratch), std::move(shown)};
}

}  // namespace

Result<RepoContents> read_stored_repository(std::string_view destination, std::string_view location,
                                            const std::optional<s3::S3Overrides>& store) {
    auto opened = open_destination(destination, location, store);
    if (!opened) {
        return tl::unexpected(std::move(opened.error()));
    }
    return read_repository_below(*opened->store, "", opened->shown, opened->scratch.path());
}

Result<StoredRevision> read_stored_revision(std::string_view destination, std::string_view location,
                                            const std::optional<s3::S3Overrides>& store) {
    auto opened = open_destination(destination, location, store);
    if (!opened) {
        return tl::unexpected(std::move(opened.error()));
    }
    StoredRevision revision;
    auto treeinfo = opened->store->read(kTreeinfoName);
    if (!treeinfo && treeinfo.error().code != ErrorCode::NotFound) {
        return tl::unexpected(std::move(treeinfo.error()));
    }
    if (!treeinfo) {
        auto repository =
            read_repository_below(*opened->store, "", opened->shown, opened->scratch.path());
        if (!repository) {
            return tl::unexpected(std::move(repository.error()));
        }
        revision.repository.emplace(std::move(*repository));
        return revision;
    }
    std::string shown = opened->shown;  // a tree is named without a trailing '/'
    while (shown.size() > 1 && shown.ends_with('/')) {
        shown.pop_back();
    }
    auto tree = read_tree_contents(*treeinfo, shown, [&](const std::string& path) {
        return read_repository_below(*opened->store, path,
                                     path.empty() ? shown : shown + "/" + path,
                                     opened->scratch.path());
    });
    if (!tree) {
        return tl::unexpected(std::move(tree.error()));
    }
    revision.tree.emplace(std::move(*tree));
    return revision;
}

}  // namespace rpmirror
