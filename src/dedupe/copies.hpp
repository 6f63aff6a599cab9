// --dedupe over the store, one stage for every medium: the packages a sync is about to download
// that a repository beside it (or a --dedupe-dir tree) already holds are found by the store
// (ObjectStore::find_content: on disk the trees walked and the size-matching files verified; in
// a bucket the siblings' state objects) and copied inside it (ObjectStore::copy pinned to what
// was found: a hard link or a reflink on disk, a server-side copy in a bucket, no byte through
// this host) instead of downloaded. Tested over the memory store.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stop_token>
#include <string>
#include <vector>

#include "dedupe/dedupe.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "rpmirror/dedupe/dedupe.hpp"
#include "store/object_store.hpp"
#include "store/sync_store.hpp"

namespace rpmirror::dedupe {

// A package the repository lacks.
struct Wanted {
    std::string key;  // relative to the repository; may climb out of it ("../blobs/a.rpm")
    ChecksumType checksum_type = ChecksumType::Sha256;
    std::string digest;      // hex, any case
    std::uint64_t size = 0;  // kUnknownSize: never copied (nothing to match on)
};

// Where the copies are looked for, and how they are made.
struct Search {
    DedupeMode mode = DedupeMode::Hardlink;  // Off: nothing is looked for
    // Where to look and how to copy, as the sync's store says (store::Siblings: the repository's
    // key, "" for none; which directories beside it are mirrors, searched in name order, null:
    // every one; --dedupe-dir's trees, searched whole after them; what is never searched; whose
    // cache entries are believed; the copies' options; whether copies are described by one
    // listing, and whether a download's ".NAME.part" at a copy's name is removed). Its `shared`
    // store is not used: copy_duplicates is given the store.
    store::Siblings where;
    bool use_cache = true;  // FindOptions::use_cache
    std::stop_token stop;   // once requested, nothing more is searched
};

// The search where a sync's store says to look (store::SyncStore::siblings), with --dedupe's
// `mode`, --no-cache (`use_cache` false) and the sync's `stop`.
Search search_of(store::Siblings siblings, DedupeMode mode, bool use_cache, std::stop_token stop);

// A package copied.
struct Copied {
    std::size_t index = 0;     // into the wanted list
    store::ObjectInfo object;  // the copy, as the store describes it (Search::describe_copies)
    std::string source;        // the store's name of what it was copied from
};

// What the copies did (DedupeOutcome: per wanted package, their bytes, the fallbacks: copies
// the medium refused or whose source changed since it was found; one note "--dedupe: ..." per
// package not copied for a reason, per tree passed over, or for a search that failed), with the
// copies made.
struct Outcome : DedupeOutcome {
    std::vector<Copied> copied;
};

// Copies into `search.repository` of `store` the packages of `wanted` that a mirror beside it
// (ObjectStore::list_dirs of its parent, Search::mirror) or a tree of `search.trees` holds: found
// by one ObjectStore::find_content, then one pinned copy each (CopyMode::Link, or Clone for
// DedupeMode::Reflink), all in one ObjectStore::copy batch (each alone only when the batch
// fails). A copy's name never holds a partial file. Never fails: a package not copied is left to
// the download.
Outcome copy_duplicates(store::ObjectStore& store, std::span<const Wanted> wanted,
                        const Search& search);

}  // namespace rpmirror::dedupe
