// Pieces of an audit report shared by the audit of a local mirror (audit.cpp) and of one in
// object storage (s3_audit.cpp).
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>

#include "rpmirror/audit.hpp"
#include "rpmirror/index.hpp"
#include "rpmirror/metadata.hpp"

namespace rpmirror::audit_parts {

// Returns the relative path of `record`'s copy in the mirror, or nullopt after recording in
// `report` why it is not checked: an Unsafe problem for an unsafe href, a warning for a record
// that lives elsewhere (xml:base).
std::optional<std::filesystem::path> record_path(const RepomdRecord& record,
                                                 RepoAuditReport& report);

// Reads the selected packages of `source` (read_repo_packages), adding what it skipped and its
// warnings to the report's warnings. Returns read_repo_packages' error iff it fails.
Result<RepoPackages> read_packages(const RepoPackageSource& source,
                                   const SelectionOptions& selection, RepoAuditReport& report);

// Sorts the report's problems (metadata first, then by path) and sets its duration since
// `started`.
void finish(RepoAuditReport& report, std::chrono::steady_clock::time_point started);

}  // namespace rpmirror::audit_parts
