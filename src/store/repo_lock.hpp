// The lock of one repository: a directory's run lock (in the state directory), or the lease of
// an s3:// prefix. Held until destroyed. See lock_repository (sync/sync.hpp) and
// store::MirrorStore::lock, the one way either is taken.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rpmirror/util/error.hpp"

namespace rpmirror {

class RepoLock {
  public:
    virtual ~RepoLock() = default;
    // Returns Error{Busy} iff the lock can no longer be vouched for (a lease that lapsed or was
    // taken over): called before each change only the holder may make.
    virtual Result<void> confirm() { return {}; }
    // What the user should know about it (a store that does not honour If-None-Match).
    virtual std::vector<std::string> warnings() const { return {}; }
    // Requests it sent to a store so far (0 for a local lock).
    virtual std::uint64_t requests() const { return 0; }

  protected:
    RepoLock() = default;
    RepoLock(const RepoLock&) = default;
    RepoLock& operator=(const RepoLock&) = default;
};

}  // namespace rpmirror
