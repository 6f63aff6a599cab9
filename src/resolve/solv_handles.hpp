// What the resolver and dnf's solver caches share of libsolv: ownership of its pool and of the
// FILEs it reads, and the installed packages of an installroot.
#pragma once

#include <cstdio>
#include <filesystem>
#include <memory>

#include "rpmirror/util/error.hpp"

// `requires` is a C++20 keyword: libsolv then names the dependency members dep_requires, ...
#define LIBSOLV_SOLVABLE_PREPEND_DEP 1
#include <solv/pool.h>

namespace rpmirror {

struct PoolFree {
    void operator()(Pool* pool) const { pool_free(pool); }
};
struct FileClose {
    void operator()(FILE* file) const { std::fclose(file); }
};

// The installed repository of `base` (an installroot's rpmdb, read whole as dnf reads it; or a
// file listing NEVRAs, one per line), set as the pool's installed one. Reads the list after the
// repositories' metadata: a listed package the repositories have is copied from there. Returns
// Error{NotFound} iff `base` is neither, Error{BadInput} naming the package or line libsolv cannot
// take, the reader's error iff the database cannot be read.
Result<void> add_installed_base(Pool* pool, const std::filesystem::path& base);

}  // namespace rpmirror
