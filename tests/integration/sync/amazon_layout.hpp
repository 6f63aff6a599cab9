// An Amazon-Linux-shaped upstream built here, shared by the --upstream-layout tests of a local
// destination and of a bucket: every package of a test repository as a blob at
// `blobstore/<sha256>/<name>.rpm`, and releases as GUID directories
// (`al2023/core/guids/<guid>/x86_64/`) whose primary.xml names their blobs by hrefs climbing to
// the root ("../../../../../blobstore/…", createrepo_c --location-prefix). Header-only.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "integration/sync/sync_harness.hpp"

namespace rpmirror::test {

// Copies every package of `packages` (a directory of .rpm files) into `upstream`/blobstore/ and
// returns the blobs as "<sha256>/<name>.rpm", sorted.
inline std::vector<std::string> make_blobstore(const std::filesystem::path& packages,
                                               const std::filesystem::path& upstream,
                                               const std::filesystem::path& logs) {
    std::vector<std::string> blobs;
    for (const auto& entry : std::filesystem::directory_iterator(packages)) {
        if (entry.path().extension() != ".rpm") {
            continue;
        }
        const CommandResult sum = run_to_end({"sha256sum", entry.path().string()}, logs);
        if (sum.exit_code != 0 || sum.out.size() < 64) {
            throw std::runtime_error("sha256sum " + entry.path().string() + ": " + sum.err);
        }
        const std::string digest = sum.out.substr(0, 64);
        const std::filesystem::path blob =
            upstream / "blobstore" / digest / entry.path().filename();
        std::filesystem::create_directories(blob.parent_path());
        std::filesystem::copy_file(entry.path(), blob);
        blobs.push_back(digest + "/" + entry.path().filename().string());
    }
    std::sort(blobs.begin(), blobs.end());
    return blobs;
}

// Writes release `guid` of `upstream`: al2023/core/guids/<guid>/x86_64/ with metadata listing
// `blobs` (of make_blobstore) by hrefs climbing to the root. Returns its directory.
inline std::filesystem::path make_release(const std::filesystem::path& upstream,
                                          const std::string& guid,
                                          const std::vector<std::string>& blobs,
                                          const std::filesystem::path& work) {
    std::string list;
    for (const std::string& blob : blobs) {
        list += blob + "\n";
    }
    const std::filesystem::path pkglist = TempDir::write_at(work / ("pkglist-" + guid), list);
    const std::filesystem::path out = upstream / "al2023/core/guids" / guid / "x86_64";
    std::filesystem::create_directories(out);
    run_checked({"createrepo_c", "--quiet", "--no-database", "--pkglist", pkglist.string(),
                 "--location-prefix", "../../../../../blobstore/", "--outputdir", out.string(),
                 (upstream / "blobstore").string()},
                work / "logs");
    return out;
}

// dnf, isolated under `work`, with the one repository "m" read through the mirror.list of the
// Amazon-shaped mirror whose root is at `mirror_url` (ending in '/'); the caller adds
// --releasever and a command.
inline std::vector<std::string> dnf_through_mirror_list(const std::filesystem::path& work,
                                                        const std::string& mirror_url) {
    std::vector<std::string> argv = isolated_dnf(work);
    std::filesystem::create_directories(work / "log");
    TempDir::write_at(work / "reposd" / "m.repo",
                      "[m]\nname=mirror\nmirrorlist=" + mirror_url +
                          "al2023/core/mirrors/$releasever/x86_64/mirror.list\ngpgcheck=0\n");
    return argv;
}

// `dnf repoquery -a` of release `releasever` through that mirror.list: the result, its stdout
// the packages' locations (one per line).
inline CommandResult dnf_query_locations(const std::filesystem::path& work,
                                         const std::string& mirror_url,
                                         const std::string& releasever,
                                         const std::filesystem::path& logs) {
    std::vector<std::string> argv = dnf_through_mirror_list(work, mirror_url);
    argv.insert(argv.end(),
                {"--releasever=" + releasever, "repoquery", "-a", "--qf", "%{location}"});
    return run_to_end(argv, logs);
}

}  // namespace rpmirror::test
