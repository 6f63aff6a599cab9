// ObjectStore::find_content where a store answers by rpmirror's records, not by reading its
// files (a bucket's and memory's): the state object of each tree searched
// (s3/mirror_state.hpp's kStateKey) names its packages with their checksums, sizes and versions.
// Internal to src/store.
#pragma once

#include <span>

#include "store/object_store.hpp"

namespace rpmirror::store {

// For each of `wanted`, the first package (in the order of `options.trees`; never below
// `options.excluded`) whose tree's state object records it with that checksum type, digest and
// size, pinned to the size, version and digest recorded. Reads one state object per tree with
// `objects` (a tree without one holds nothing known). Returns the store's error, or
// Error{BadInput} naming a state object that does not parse.
Result<FoundContent> find_recorded_content(ObjectStore& objects,
                                           std::span<const WantedContent> wanted,
                                           const FindOptions& options);

}  // namespace rpmirror::store
