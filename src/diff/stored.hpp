// A repository read where a store keeps it (src/diff/stored.cpp), for the features above the
// stores that read several of one store's repositories (an upstream layout's releases).
#pragma once

#include <filesystem>
#include <string>

#include "diff/diff.hpp"
#include "rpmirror/util/error.hpp"
#include "store/object_store.hpp"

namespace rpmirror {

// The repository below `prefix` of `store` ("" = its root), named `shown` in messages:
// repomd.xml and the records the diff reads made local (in place on disk, fetched below the
// caller's directory `scratch` otherwise), then read_repo_contents over them. Error{NotFound}
// "no repository here (no repodata/repomd.xml)" naming `shown` iff there is no repomd.xml;
// read_repo_contents' errors; the store's naming the file or object.
Result<RepoContents> read_repository_below(store::ObjectStore& store, const std::string& prefix,
                                           const std::string& shown,
                                           const std::filesystem::path& scratch);

}  // namespace rpmirror
