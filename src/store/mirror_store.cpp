// What every store shares: which keys are packages, and the operations written once over the
// interface (see store/mirror_store.hpp).
#include "store/mirror_store.hpp"

#include <algorithm>

#include "fs/walk.hpp"

namespace rpmirror::store {

bool is_package_key(std::string_view key) {
    if (!key.ends_with(".rpm")) {
        return false;
    }
    const std::size_t slash = key.find('/');
    if (slash == std::string_view::npos) {
        return true;  // a package at the top of the repository
    }
    const std::string_view top = key.substr(0, slash);
    return !fs::is_metadata_dir_name(top) && top != ".rpmirror" && top != "..";
}

std::string record_key(std::string_view below, std::string_view name) {
    return join_key(below, ".rpmirror/" + std::string(name));
}

Result<Listing> unlisted_packages(MirrorStore& store, const std::set<std::string>& keep) {
    auto packages = store.list_packages();
    if (!packages) {
        return packages;
    }
    std::erase_if(*packages, [&keep](const auto& entry) { return keep.contains(entry.first); });
    return packages;
}

Result<std::vector<std::string>> delete_unlisted(MirrorStore& store,
                                                 const std::set<std::string>& keep) {
    auto unlisted = unlisted_packages(store, keep);
    if (!unlisted) {
        return tl::unexpected(std::move(unlisted.error()));
    }
    std::vector<std::string> keys;
    keys.reserve(unlisted->size());
    for (const auto& [key, file] : *unlisted) {
        keys.push_back(key);
    }
    auto removed = store.remove_packages(keys);
    if (removed) {
        std::sort(removed->begin(), removed->end());
    }
    return removed;
}

bool files_unchanged(MirrorStore& store, const Listing& recorded) {
    return std::all_of(recorded.begin(), recorded.end(), [&store](const auto& entry) {
        const auto now = store.stat(entry.first);
        return now && *now && **now == entry.second;
    });
}

}  // namespace rpmirror::store
