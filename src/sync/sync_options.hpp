// The sync's own helpers over rpmirror/sync/sync_options.hpp's SyncOptions.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/sync/sync_options.hpp"

namespace rpmirror {

// Returns "immediate", "on-demand" or "streamed".
std::string_view download_policy_name(DownloadPolicy policy);

// The selection `prefetch` (active) makes among the packages `selection` selects: the options
// select_packages is given, whose result is intersected with the sync's own selection.
SelectionOptions prefetch_selection(const Prefetch& prefetch, const SelectionOptions& selection);

// Refuses, naming the option, what --with-dependencies (a job's with-dependencies) cannot be
// combined with: the selections the closure replaces (--source, --min-buildtime: the solver
// picks each package's version; -n/--keep-versions are the closure's own,
// ClosureRequest::keep_versions) and the layouts it does not solve for (--treeinfo,
// --upstream-layout).
Result<void> check_closure_options(const SyncOptions& options);

}  // namespace rpmirror
