// The staging areas (ObjectStore::stage, store/object_store.hpp) the stores build theirs from:
// the disk's, in place, and a spool's, whose files a store-given function commits.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "rpmirror/util/error.hpp"
#include "store/object_store.hpp"

namespace rpmirror::store {

// The staging area of a store whose root is the local directory `root` (the disk's): a file
// made there is in place; commit() confirms it with `store`.stat (in wait(), on its caller's
// thread; with `durable`, wait() then flushes the files stored and their directories).
// `store` must outlive it.
std::unique_ptr<Staging> in_place_staging(ObjectStore& store, std::filesystem::path root,
                                          bool durable);

// Stores one complete file of the spool (`file`, holding `staged`'s content) as `staged.key`.
// Returns what was stored. Called on one worker at a time.
using CommitFile =
    std::function<Result<ObjectInfo>(const StagedFile& staged, const std::filesystem::path& file)>;

// A spool's staging area: a fresh spool (store/spool.hpp: create_s3_spool with
// options.spool_dir and options.capacity), whose committed files are stored by `make_worker()`'s
// function (one per worker, counting its requests into the given counter) on options.parallel
// threads, or with `threads` false on wait()'s caller's thread; each file is unlinked after.
// `describe` names a key in errors. Error{Io} naming the spool iff it cannot be created.
Result<std::unique_ptr<Staging>> spool_staging(
    const StageOptions& options, bool threads,
    std::function<CommitFile(std::atomic<std::uint64_t>& requests)> make_worker,
    std::function<std::string(std::string_view key)> describe);

}  // namespace rpmirror::store
