// Pieces of an audit report shared by the audit (audit.cpp), the audit of a tree's files
// (tree_audit.cpp), the repair (repair.cpp) and verify's run (verify_run.cpp).
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <stop_token>

#include "audit/audit.hpp"
#include "index/index.hpp"
#include "metadata/metadata.hpp"
#include "store/mirror_store.hpp"

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

// One audit, over the stores of audit.cpp's Auditor (audit_repository and verify's run fill it
// in).
struct StoreAudit {
    store::MirrorStore& mirror;
    // Where the reference metadata is read (--remote: upstream's, fetched); nullptr = the
    // mirror's own, and then a mirror without published metadata is audited against the files
    // its store recorded with their checksums (if it records any).
    store::MirrorStore* reference = nullptr;
    std::filesystem::path report_dir = {};        // the report's repo_dir, and problems' root
    std::filesystem::path report_reference = {};  // the report's reference_root
    // Where plan_sync places packages (the repository directory); "" = a scratch directory
    // (a bucket: only the keys matter).
    std::filesystem::path plan_root = {};
    std::optional<std::filesystem::path> safe_write_path = {};
    SelectionOptions selection = {};
    bool use_cache = true;
    bool report_extra = false;
    unsigned threads = 0;
    // An on-demand mirror (RecordedSync::on_demand): a listed package it lacks is not held
    // (RepoAuditReport::not_held), not missing. Metadata must still be there.
    bool packages_on_demand = false;
};

// Audits `repo_id` as audit/audit.hpp describes, over `audit`'s stores. Never throws.
RepoAuditReport audit_store(std::string_view repo_id, const StoreAudit& audit);

// The problem a store's `found` (anything but Finding::Intact) is for `expected`: its kind, sizes,
// digests and detail. The caller sets where it is (path, root, destination, is_metadata).
AuditProblem problem_of(const store::ExpectedFile& expected, const store::CheckedFile& found);

// Audits the files an installation tree's `.treeinfo` (read from `tree`, its root's store) vouches
// for (its [checksums]: kernel, initrd, install.img, EFI/, ...): each must be a regular file
// there (never followed through a symlink) with the listed checksum, checked with check_files on
// `threads` workers (the store's cache believed iff `use_cache`, and then also what the tree's
// record, sync/stored_record.hpp, holds with that checksum while the file is the one recorded);
// and the images its [images-*] and [stage2] name without a checksum, which must only be there
// (counted in `images` and `intact`, not in `verified`). The report is named `tree_id`, counts
// `images`, and lists missing, not-regular and mismatching files as problems rooted at
// `report_dir`; an unreadable or malformed `.treeinfo` is its error. The tree's repositories are
// audited as repositories. Read-only but for the checksum cache.
RepoAuditReport audit_tree_store(std::string_view tree_id, store::MirrorStore& tree,
                                 const std::filesystem::path& report_dir, bool use_cache,
                                 unsigned threads);

// verify --repair over `mirror` (audit/audit.hpp's repair_repository): under the mirror's
// lock, what the last sync recorded is read (its publishing, its ACL), the record forgets every
// damaged or missing file, the damaged packages (and symlinks in their place) are removed, and
// `repo` is synced with `sync_options` and what was recorded. Never throws; failures are in the
// report.
RepairReport repair_store(Syncer& syncer, const RepoConfig& repo, store::MirrorStore& mirror,
                          const RepoAuditReport& audit, SyncOptions sync_options,
                          std::stop_token stop);

// Sorts the report's problems (metadata first, then by path) and sets its duration since
// `started`.
void finish(RepoAuditReport& report, std::chrono::steady_clock::time_point started);

}  // namespace rpmirror::audit_parts
