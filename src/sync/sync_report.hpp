// What the sync stage decides over rpmirror/sync/sync_report.hpp's RepoSyncReport.
#pragma once

#include <cstddef>

#include "rpmirror/sync/sync_report.hpp"

namespace rpmirror {

// --delete refuses (without --force-delete) a run that would leave a mirror of at least this
// many packages with fewer than half of them; one that would leave none, whatever the size.
inline constexpr std::size_t kMassDeletionFloor = 20;

}  // namespace rpmirror
