// --dedupe where a repository's siblings record what they hold: a package that a sibling
// repository beside this one holds (a repository rpmirror synced: its state object,
// `.rpmirror/state.json`, records the package with the same checksum and size) is copied inside
// the store (ObjectStore::copy with CopyMode::Link: a server-side copy in a bucket, where no byte
// passes through this host) instead of downloaded, pinned to the object the sibling's state
// vouches for. Written over store::ObjectStore, so it is tested over the memory store.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/checksum/checksum.hpp"
#include "rpmirror/dedupe/dedupe.hpp"
#include "store/object_store.hpp"

namespace rpmirror::dedupe {

// A package the repository lacks.
struct Wanted {
    std::string key;  // relative to the repository
    ChecksumType checksum_type = ChecksumType::Sha256;
    std::string digest;  // hex, any case
    std::uint64_t size = 0;
};

// A package copied from a sibling.
struct Copied {
    std::size_t index = 0;     // into the wanted list
    store::ObjectInfo object;  // the copy, as the store describes it after the copy
    std::string source;        // the store's name of what it was copied from
};

// What the copies did, in the terms of any --dedupe source (DedupeOutcome: linked per wanted
// package, their bytes, the fallbacks, at most one note "--dedupe: ..." naming the first store
// error: a failed search, or a copy that failed; those packages are left to the download), with
// the copies as the store describes them (for the sync's record).
struct SiblingOutcome : DedupeOutcome {
    std::vector<Copied> copied;
};

// Copies into the repository `repo` of `store` (a key; "" is refused: nothing beside it) the
// packages of `wanted` that a sibling repository holds: the siblings are the directories beside
// `repo` (ObjectStore::list_dirs of its parent) whose state object parses; one pinned copy per
// package, with `options`, all in one ObjectStore::copy batch and described by one listing of
// `repo` (each alone only when the batch fails). Never fails: a package not copied is left to
// the download.
SiblingOutcome copy_from_siblings(store::ObjectStore& store, std::string_view repo,
                                  std::span<const Wanted> wanted,
                                  const store::CopyOptions& options);

}  // namespace rpmirror::dedupe
