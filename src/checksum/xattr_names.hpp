// The extended attribute names of an open file, for the checksum caches (xattr_cache.cpp) and
// the librepo accelerator's self-check.
#pragma once

#include <string>
#include <vector>

namespace rpmirror {

// Returns the names of `fd`'s extended attributes (flistxattr), in the order the filesystem lists
// them; none iff it has none or they cannot be listed.
std::vector<std::string> xattr_names(int fd);

}  // namespace rpmirror
