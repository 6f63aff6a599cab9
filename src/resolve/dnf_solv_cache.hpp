// dnf's solver caches, written ahead of dnf: what libdnf builds from the repositories' metadata
// the first time it loads them, so that dnf loads them from these instead of the XML.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "rpmirror/util/error.hpp"

namespace rpmirror {

// One repository dnf loads, its metadata in dnf's cache.
struct DnfSolvCacheRepo {
    std::string id;
    std::filesystem::path repomd;           // <cachedir>/<id>-<hash>/repodata/repomd.xml
    std::filesystem::path plain_primary;    // its primary, decompressed (write_plain_record)
    std::filesystem::path plain_filelists;  // its filelists, decompressed; empty: none listed
    bool write = true;                      // false: in the pool only (dnf's caches are current)
};

struct DnfSolvCaches {
    std::vector<DnfSolvCacheRepo> repos;  // every repository dnf loads, in dnf's order
    std::filesystem::path cachedir;       // dnf's [main] cachedir
};

// Writes <cachedir>/<id>.solv and, when it lists filelists, <cachedir>/<id>-filenames.solvx of
// each repository to write, as libdnf 0.6x (dnf 4) writes them on a run that finds their metadata
// new: the same libsolv calls on a pool holding the same repositories, so the same bytes (a test
// compares them with dnf's own): each repository's repomd.xml and primary written whole and read
// back, its filelists added and written alone; then the file provides the pool's dependencies
// need (pool_addfileprovides), which libdnf records in each main file and writes it again. The
// installed packages, which dnf's pool holds too, are left out (their rpm database is the solve's
// to read, and librpm is no place for two threads): a file dependency only they have makes dnf
// write <id>.solv again from what it loaded from it, never from the XML. Each
// file carries what libdnf checks before it uses one (the SHA-256 of repomd.xml, libsolv's
// solv_toolversion, libdnf's cache-format magic and version): a libdnf that would not accept
// them (another libsolv, another format, dnf 5's other paths) builds its own as if they were
// absent. Each file is written beside its name and renamed over it. Returns Error{BadInput}
// naming the file iff libsolv cannot read it, Error{Unsupported} iff libsolv's version does not
// fit libdnf's stamp, Error{Io} iff a file cannot be written.
Result<void> write_dnf_solv_caches(const DnfSolvCaches& caches);

}  // namespace rpmirror
