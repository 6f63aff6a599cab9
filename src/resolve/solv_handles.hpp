// Ownership of libsolv's pool and of the FILEs libsolv reads, for the resolver and dnf's solver
// caches.
#pragma once

#include <cstdio>
#include <memory>

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

}  // namespace rpmirror
