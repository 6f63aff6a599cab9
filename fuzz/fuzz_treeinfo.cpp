// Fuzzes the .treeinfo reader (parse_treeinfo, what --treeinfo does with an upstream's
// .treeinfo): the configuration's INI dialect, [checksums] entries, variant and addon
// repositories. Its contract: every path it returns is a relative, lexically normal path inside
// the tree (a repository may be "", the tree's root; one outside the tree is listed apart,
// climbing out by leading ".." then a safe path), every digest lowercase hex, no path twice,
// no image (with a checksum or without) at a name rpmirror owns (fs::is_reserved_key: a metadata or
// staging directory, its .rpmirror state and lease, a .part download) or at .treeinfo itself.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <string_view>

#include "fs/walk.hpp"
#include "metadata/metadata.hpp"
#include "metadata/treeinfo.hpp"

namespace {

// True iff `path` is what safe_relative_path makes of it: relative, normal, inside.
bool inside(const std::string& path) {
    auto safe = rpmirror::safe_relative_path(path, "fuzz");
    return safe && safe->generic_string() == path && *safe->begin() != "..";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto tree = rpmirror::parse_treeinfo(text, ".treeinfo");
    if (!tree) {
        (void)tree.error().to_string();
        return 0;
    }
    std::set<std::string> files;
    for (const auto& file : tree->files) {
        if (!inside(file.path) || !files.insert(file.path).second || file.digest.empty() ||
            file.digest.find_first_not_of("0123456789abcdef") != std::string::npos)
            __builtin_trap();
        if (rpmirror::fs::is_reserved_key(file.path) || file.path == rpmirror::kTreeinfoName)
            __builtin_trap();
    }
    for (const std::string& metadata : tree->repository_metadata) {
        if (!inside(metadata))
            __builtin_trap();
    }
    for (const std::string& image : tree->unchecksummed_images) {
        if (!inside(image) || files.contains(image) || rpmirror::fs::is_reserved_key(image) ||
            image == rpmirror::kTreeinfoName)
            __builtin_trap();
    }
    std::set<std::string> repositories;
    for (const std::string& repository : tree->repositories) {
        if ((!repository.empty() && !inside(repository)) || !repositories.insert(repository).second)
            __builtin_trap();
    }
    // A repository outside the tree: lexically normal, climbing out, then a safe path.
    std::set<std::string> outside;
    for (const auto& repository : tree->outside_repositories) {
        const std::filesystem::path path(repository.path);
        std::filesystem::path rest;
        bool climbing = true;
        for (const auto& part : path) {
            climbing = climbing && part == "..";
            if (!climbing)
                rest /= part;
        }
        if (path.lexically_normal().generic_string() != repository.path || *path.begin() != ".." ||
            rest.empty() || !inside(rest.generic_string()) ||
            !outside.insert(repository.path).second || repository.section.empty())
            __builtin_trap();
    }
    if (tree->repositories.empty() && tree->outside_repositories.empty())
        __builtin_trap();  // none named: the root
    return 0;
}
