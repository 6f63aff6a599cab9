// .treeinfo (metadata/treeinfo.hpp).
#include "metadata/treeinfo.hpp"

#include <filesystem>
#include <optional>
#include <set>

#include <fmt/core.h>

#include "checksum/hasher.hpp"
#include "fs/walk.hpp"
#include "metadata/metadata.hpp"
#include "util/ini.hpp"
#include "util/text.hpp"

namespace rpmirror {

namespace {

// `path` as a relative path inside the tree ("" for "." itself), or an error naming the line.
Result<std::string> tree_path(std::string_view path, const std::string& name, std::size_t line,
                              bool may_be_root) {
    if (may_be_root) {
        // A directory may be written with a trailing slash ("addons/HA/", "./").
        while (path.size() > 1 && path.back() == '/') {
            path.remove_suffix(1);
        }
        if (path == "." || path.empty()) {
            return std::string();
        }
    }
    auto relative = safe_relative_path(path, name);
    if (!relative) {
        return make_error(ErrorCode::BadInput,
                          fmt::format("line {}: {}", line, relative.error().message), name);
    }
    return relative->generic_string();
}

// `path` (a repository's, as written) lexically normal iff it climbs out of the tree to a
// directory other than the tree's parent and is otherwise safe (safe_relative_path's rules, but
// for the climb); nullopt otherwise.
std::optional<std::string> outside_path(std::string_view path, const std::string& name) {
    while (path.size() > 1 && path.back() == '/') {
        path.remove_suffix(1);
    }
    PathPolicy climbing;
    climbing.flatten = true;  // every rule but the climb
    if (!safe_relative_path(path, name, climbing)) {
        return std::nullopt;
    }
    const std::filesystem::path normal = std::filesystem::path(path).lexically_normal();
    if (normal.begin() == normal.end() || *normal.begin() != "..") {
        return std::nullopt;
    }
    std::string written = normal.generic_string();
    while (written.ends_with('/')) {
        written.pop_back();  // "../x/." is "../x/"
    }
    return written;
}

// An error naming the line iff `path` is .treeinfo itself or a name rpmirror owns wherever it
// appears (fs::is_reserved_key: metadata and staging directories, its own state and lease, a
// download's temporary name): nothing upstream names is ever written there.
Result<void> refuse_reserved(const std::string& path, const std::string& section,
                             const std::string& key, std::size_t line, const std::string& name) {
    if (path != kTreeinfoName && !fs::is_reserved_key(path)) {
        return {};
    }
    return make_error(ErrorCode::BadInput,
                      fmt::format("line {}: {} {} names '{}', which rpmirror owns (.treeinfo, "
                                  "repodata/ or a staging directory, its .rpmirror state and "
                                  "lease, a .part download): not written there",
                                  line, section, key, path),
                      name);
}

}  // namespace

Result<TreeInfo> parse_treeinfo(std::string_view text, const std::string& name) {
    auto sections = ini::parse_ini(text, name);
    if (!sections) {
        return tl::unexpected(std::move(sections.error()));
    }
    TreeInfo tree;
    std::set<std::string> seen_files;
    std::set<std::string> seen_repositories;
    std::set<std::string> seen_outside;
    std::vector<std::string> images;  // what [images-*] and [stage2] name
    bool named_any = false;
    const auto add_repository = [&](std::string path) {
        named_any = true;
        if (seen_repositories.insert(path).second) {
            tree.repositories.push_back(std::move(path));
        }
    };
    for (const ini::IniSection& section : *sections) {
        const bool repository_section = section.name.starts_with("variant-") ||
                                        section.name.starts_with("addon-") ||
                                        section.name == "general";
        for (const ini::IniEntry& entry : section.entries) {
            if (section.name == "checksums") {
                const std::string& key = entry.written_key;
                const std::size_t colon = entry.value.find(':');
                auto type = colon == std::string::npos
                                ? make_error(ErrorCode::BadInput, "no type", name)
                                : parse_checksum_type(entry.value.substr(0, colon));
                std::string digest =
                    text::to_lower(colon == std::string::npos ? "" : entry.value.substr(colon + 1));
                if (!type || !is_valid_hex_digest(*type, digest)) {
                    return make_error(
                        ErrorCode::BadInput,
                        fmt::format("line {}: [checksums] {} = '{}' is not TYPE:HEX (e.g. "
                                    "sha256:…)",
                                    entry.line, key, entry.value),
                        name);
                }
                auto path = tree_path(key, name, entry.line, false);
                if (!path) {
                    return tl::unexpected(std::move(path.error()));
                }
                // A repository's metadata (RHEL 7 trees list each repository's
                // repodata/repomd.xml) is the repository's own: mirrored and published by its
                // rules, never written as an image. The tree's own .treeinfo and rpmirror's
                // staging directories are nothing upstream can name.
                bool repository_metadata = false;
                for (const auto& component : std::filesystem::path(*path)) {
                    repository_metadata =
                        repository_metadata || component.native() == fs::kLiveMetadataDirName;
                }
                if (repository_metadata) {
                    tree.repository_metadata.push_back(std::move(*path));
                    continue;
                }
                if (auto refused = refuse_reserved(*path, "[checksums]", key, entry.line, name);
                    !refused) {
                    return tl::unexpected(std::move(refused.error()));
                }
                if (seen_files.insert(*path).second) {
                    tree.files.push_back({std::move(*path), *type, std::move(digest)});
                }
            } else if (section.name.starts_with("images-") || section.name == "stage2") {
                // A path that is not a safe one inside the tree is passed over: never fetched.
                if (auto path = tree_path(entry.value, name, entry.line, false); path) {
                    if (auto refused = refuse_reserved(*path, "[" + section.name + "]",
                                                       entry.written_key, entry.line, name);
                        !refused) {
                        return tl::unexpected(std::move(refused.error()));
                    }
                    images.push_back(std::move(*path));
                }
            } else if (repository_section && entry.key == "repository") {
                auto path = tree_path(entry.value, name, entry.line, true);
                if (!path) {
                    auto outside = outside_path(entry.value, name);
                    if (!outside) {
                        return tl::unexpected(std::move(path.error()));
                    }
                    named_any = true;
                    if (seen_outside.insert(*outside).second) {
                        tree.outside_repositories.push_back(
                            {section.name, std::move(*outside), entry.line});
                    }
                    continue;
                }
                add_repository(std::move(*path));
            }
        }
    }
    if (!named_any) {
        add_repository("");
    }
    std::set<std::string> unchecksummed;
    for (std::string& image : images) {
        if (!seen_files.contains(image) && unchecksummed.insert(image).second) {
            tree.unchecksummed_images.push_back(std::move(image));
        }
    }
    return tree;
}

}  // namespace rpmirror
