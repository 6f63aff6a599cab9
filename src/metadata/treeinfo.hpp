// An installation tree's .treeinfo (productmd, or the older [general] format): the files its
// [checksums] vouch for and the repositories it names. What --treeinfo (sync/tree.hpp) reads.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/checksum/checksum.hpp"
#include "rpmirror/util/error.hpp"

namespace rpmirror {

// The file's name at the root of a tree.
inline constexpr std::string_view kTreeinfoName = ".treeinfo";

// What a .treeinfo says a tree holds.
struct TreeInfo {
    struct File {
        std::string path;  // relative to the tree, lexically normal
        ChecksumType type = ChecksumType::Sha256;
        std::string digest;  // lowercase hex
    };
    std::vector<File> files;  // [checksums], in order, but for repository metadata
    // The entries of [checksums] inside a repository's repodata/ (RHEL 7 trees list each
    // repository's repodata/repomd.xml): not images. Each repository is mirrored and published
    // by its own rules, its metadata as the repository serves it.
    std::vector<std::string> repository_metadata;
    // The files [images-*] and [stage2] name that [checksums] does not list (older trees, or
    // one image left out of [checksums]), in order, without duplicates: nothing vouches for
    // their bytes, so they are mirrored unverified (sync/tree.cpp).
    std::vector<std::string> unchecksummed_images;
    // The repositories (relative directories; "" for the tree's root), in order, without
    // duplicates: every [variant-*] and [addon-*] `repository` (productmd 1.x), [general]'s
    // (the older format), but those outside the tree; the root alone when none is named.
    std::vector<std::string> repositories;
    // A repository a section names outside the tree (Pulp's fixture tree has
    // `[variant-External] repository = ../rpm-signed/`): not part of the tree's mirror.
    struct Outside {
        std::string section;  // "variant-External"
        std::string path;     // lexically normal, relative to the tree: "../rpm-signed"
        std::size_t line = 0;
    };
    // In order, without duplicate paths (the first section naming one).
    std::vector<Outside> outside_repositories;
};

// Parses the .treeinfo `text` (named `name` in messages) with the INI reader of the
// configuration (config/ini.hpp: Python's ConfigParser dialect, which productmd writes). Keys of
// [checksums] keep their case. Returns Error{BadInput} naming the file and line for a malformed
// line, an entry of [checksums] that is not TYPE:HEX of a known type or that names .treeinfo
// itself or a staging directory of rpmirror's, or a path (a file's or a repository's) that is
// absolute, climbs out of the tree or is otherwise unsafe; but a repository that climbs out of
// the tree and is otherwise safe is listed in `outside_repositories` (the tree's parent itself,
// "..", is refused).
Result<TreeInfo> parse_treeinfo(std::string_view text, const std::string& name);

}  // namespace rpmirror
