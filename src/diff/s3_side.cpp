// `rpmirror diff` of a repository in a bucket (a mirror, a snapshot or a published name): its
// repomd.xml and the records the diff reads (primary, updateinfo) fetched from the store into a
// scratch directory, then read as a local repository is (verified against repomd.xml); and of an
// installation tree there: its .treeinfo, then each repository it names as such a repository.
#include <fmt/core.h>

#include "fs/durable.hpp"
#include "metadata/treeinfo.hpp"
#include "rpmirror/diff/diff.hpp"
#include "rpmirror/metadata/metadata.hpp"
#include "s3/client.hpp"
#include "fs/scratch_dir.hpp"

namespace rpmirror {

namespace {

// The location `url` names and a client of its store (`overrides`, then the environment).
struct Store {
    s3::S3Location location;
    s3::S3Client client;
};

Result<Store> open_store(std::string_view url, const s3::S3Overrides& overrides) {
    auto location = s3::S3Location::parse(url);
    if (!location) {
        return tl::unexpected(std::move(location.error()));
    }
    auto config = s3::resolve_config(overrides, s3::process_environment());
    if (!config) {
        return tl::unexpected(std::move(config.error()));
    }
    return Store{std::move(*location), s3::S3Client(std::move(*config))};
}

}  // namespace

Result<RepoContents> read_s3_repo_contents(std::string_view url, const s3::S3Overrides& overrides) {
    auto store = open_store(url, overrides);
    if (!store) {
        return tl::unexpected(std::move(store.error()));
    }
    const s3::S3Location& location = store->location;
    s3::S3Client& client = store->client;
    auto scratch = ScratchDir::create("rpmirror-diff");
    if (!scratch) {
        return tl::unexpected(std::move(scratch.error()));
    }
    const std::string shown = location.to_string();
    const std::filesystem::path repomd_path = scratch->path() / "repodata" / "repomd.xml";
    if (auto got = s3::get_object_to_file(client, location, "repodata/repomd.xml", repomd_path);
        !got) {
        if (got.error().code == ErrorCode::NotFound) {
            return make_error(ErrorCode::NotFound, "no repository here (no repodata/repomd.xml)",
                              shown);
        }
        return tl::unexpected(std::move(got.error()));
    }
    auto text = fs::read_file(repomd_path);
    if (!text) {
        return tl::unexpected(std::move(text.error()));
    }
    auto repomd = parse_repomd(*text, shown + "/repodata/repomd.xml");
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
        if (auto got = s3::get_object_to_file(client, location, relative->generic_string(),
                                              scratch->path() / *relative);
            !got) {
            return tl::unexpected(std::move(got.error()));
        }
    }
    return read_repo_contents(scratch->path(), shown);
}

Result<std::optional<TreeContents>> read_s3_tree_contents(std::string_view url,
                                                          const s3::S3Overrides& overrides) {
    auto store = open_store(url, overrides);
    if (!store) {
        return tl::unexpected(std::move(store.error()));
    }
    const s3::S3Location& location = store->location;
    s3::S3Client& client = store->client;
    auto text = client.get_object(location.bucket, location.key(kTreeinfoName));
    if (!text) {
        if (text.error().code == ErrorCode::NotFound) {
            return std::optional<TreeContents>();
        }
        return tl::unexpected(std::move(text.error()));
    }
    std::string shown = location.to_string();
    while (shown.ends_with('/')) {
        shown.pop_back();
    }
    auto tree = read_tree_contents(*text, shown, [&](const std::string& path) {
        return read_s3_repo_contents(path.empty() ? shown : shown + "/" + path, overrides);
    });
    if (!tree) {
        return tl::unexpected(std::move(tree.error()));
    }
    return std::optional<TreeContents>(std::move(*tree));
}

}  // namespace rpmirror
