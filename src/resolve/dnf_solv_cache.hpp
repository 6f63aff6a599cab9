// dnf's solver caches, written ahead of dnf: what libdnf builds from a repository's metadata the
// first time it loads it, so that dnf loads the repository from them instead of the XML.
#pragma once

#include <filesystem>
#include <string>

#include "rpmirror/util/error.hpp"

namespace rpmirror {

// One repository whose metadata is in dnf's cache.
struct DnfSolvCache {
    std::string repo_id;
    std::filesystem::path repomd;           // <cachedir>/<id>-<hash>/repodata/repomd.xml
    std::filesystem::path plain_primary;    // its primary, decompressed (write_plain_record)
    std::filesystem::path plain_filelists;  // its filelists, decompressed; empty: none listed
    std::filesystem::path cachedir;         // dnf's [main] cachedir
};

// Writes <cachedir>/<id>.solv (from repomd.xml and primary) and, when the repository lists
// filelists, <cachedir>/<id>-filenames.solvx, as libdnf 0.6x (dnf 4) writes them when it loads a
// repository whose metadata is new: the same libsolv calls in the same order, so the same bytes
// (a test compares them with dnf's own), each stamped with what libdnf checks before it uses one
// (the SHA-256 of repomd.xml, libsolv's solv_toolversion, libdnf's cache-format magic and
// version). A libdnf that would not accept them (another libsolv, another format, dnf 5's other
// paths) rebuilds them as if they were absent. Each file is written beside its name and renamed
// over it. Returns Error{BadInput} naming the file iff libsolv cannot read a record,
// Error{Unsupported} iff libsolv's version does not fit libdnf's stamp, Error{Io} iff a file
// cannot be written. Thread-safe for distinct repositories.
Result<void> write_dnf_solv_cache(const DnfSolvCache& cache);

}  // namespace rpmirror
