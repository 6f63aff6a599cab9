// What `rpmirror verify` finds and repairs, as the command reports it: a repository's audit
// (RepoAuditReport, one AuditProblem per damaged, missing or extra file), a repair's outcome
// (RepairReport) and their lines and JSON. The audit and the repair themselves are the library's
// (`verify_mirror`, rpmirror/audit/verify.hpp, runs them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/checksum/checksum.hpp"
#include "rpmirror/sync/sync_report.hpp"
#include "rpmirror/util/error.hpp"

namespace rpmirror {

enum class ProblemKind {
    Missing,           // nothing under the expected name
    SizeMismatch,      // a regular file of the wrong size (not hashed)
    ChecksumMismatch,  // the right size, the wrong digest
    NotRegularFile,    // a symlink (never followed), directory, FIFO, ... in place of the file
    Unsafe,            // the path leads outside its root through a symlinked directory
    Unreadable,        // could not be checked (permissions, I/O error); `detail` says why
    Outdated,          // repodata/repomd.xml differs from the reference's (remote audits only)
    Extra,  // a *.rpm file the metadata does not list, or a partial download (only when asked)
};

// Returns "missing", "size-mismatch", "checksum-mismatch", "not-regular-file", "unsafe",
// "unreadable", "outdated" or "extra": stable names for JSON.
std::string_view problem_kind_name(ProblemKind kind);

struct AuditProblem {
    ProblemKind kind = ProblemKind::Missing;
    std::filesystem::path path;  // relative to the repository directory, as the metadata names it
    bool is_metadata = false;    // a repodata/ file rather than a package
    std::optional<std::uint64_t> expected_size;
    std::optional<std::uint64_t> actual_size;
    std::optional<ChecksumType> checksum_type;
    std::string expected_digest;  // lowercase hex; set for checksum mismatches
    std::string actual_digest;
    std::string detail;  // "symlink", "directory", an error message, ...
    // Where the file is on disk: `root` (the repository directory, or the safe write path) and
    // `destination` below it (no ".."). Empty for Outdated.
    std::filesystem::path root;
    std::filesystem::path destination;

    // Returns the human form: "missing", "size mismatch (expected 10, found 7)",
    // "checksum mismatch (expected sha256 ab…, found cd…)", "extra", "symlink (not followed)", ...
    std::string describe() const;
};

struct RepoAuditReport {
    std::string repo_id;
    std::filesystem::path repo_dir;
    std::filesystem::path reference_root;  // where the reference repodata/ was read from
    // Set iff the repository could not be audited as a whole: no or malformed repomd.xml, a
    // damaged or unparsable primary.xml (named in the error), an unsafe href, an unreadable
    // directory. Problems found before that are still listed.
    std::optional<Error> error;
    std::size_t packages = 0;        // packages the mirror must hold
    std::size_t metadata_files = 0;  // repodata/ files checked
    std::size_t images = 0;          // an installation tree's [checksums] files checked
    std::size_t verified = 0;        // files whose size and checksum matched
    // Packages an on-demand mirror lists but does not hold (`rpmirror serve` fetches them at
    // their request, or removed them under cache-max-size): no problem.
    std::size_t not_held = 0;
    std::size_t from_cache = 0;          // ... of which the xattr cache vouched for
    std::uint64_t bytes_hashed = 0;      // bytes read to compute digests
    std::uint64_t s3_requests = 0;       // requests to the store (s3:// mirrors only)
    std::vector<AuditProblem> problems;  // sorted: metadata first, then by path
    std::vector<std::string> warnings;   // metadata oddities (skipped packages, conflicts)
    // Every file found intact beneath the repository directory, as the metadata names it
    // (relative, lexically normal), metadata records first; files beneath a safe write path
    // are not listed. What a snapshot links: exactly what was verified.
    struct IntactFile {
        std::filesystem::path path;
        bool is_metadata = false;
        std::uint64_t size = 0;
        // The file's version as it was checked (the store's: "" iff it changed meanwhile), and
        // the checksum it was checked against (digest "" for an image .treeinfo names without
        // one): what a copy pins, so that it copies what was verified.
        std::string version;
        ChecksumType type = ChecksumType::Sha256;
        std::string digest;
    };
    std::vector<IntactFile> intact;
    double seconds = 0;

    // Returns true iff the audit ran and found nothing wrong.
    bool ok() const { return !error && problems.empty(); }
};

struct RepairReport {
    std::vector<std::filesystem::path> removed;  // damaged files removed before the sync
    std::optional<Error> error;                  // a damaged file could not be removed
    RepoSyncReport sync;

    // Returns true iff every removal and the sync succeeded.
    bool ok() const { return !error && sync.ok(); }
};

// ---------------------------------------------------------------------------------------------
// Reporting

// Returns one line per problem, "<repo>: <path>: <describe()>", one per warning
// ("<repo>: warning: ..."), and the error line ("<repo>: ERROR: ...") iff there is one.
std::vector<std::string> format_audit_problems(const RepoAuditReport& report);

// Returns the summary line, e.g. "base: OK: 4 packages, 5 metadata files verified (3 from the
// checksum cache, 1.2 MB hashed) in 0.1 s" or "base: 2 problems: ...".
std::string format_audit_summary(const RepoAuditReport& report);

// Returns the summary line of a repair, e.g. "base: repair: removed 2 damaged files; <the sync's
// summary>".
std::string format_repair_summary(const RepoAuditReport& audit, const RepairReport& repair);

// One repository's outcome for the JSON report.
struct AuditRunEntry {
    RepoAuditReport audit;
    std::optional<RepairReport> repair;    // set iff a repair ran
    std::optional<RepoAuditReport> after;  // the audit after the repair
};

// Returns {"exit_code": N, "repositories": [{"id", "repo_dir", "reference", "ok", "error",
// "packages", "metadata_files", "verified", "from_cache", "bytes_hashed", "s3_requests", "seconds",
// "problems": [{"path", "kind", "metadata", "message", sizes, digests}], "warnings",
// "repair": {...}, "after_repair": {...}}]}.
std::string format_audit_json(std::span<const AuditRunEntry> entries, int exit_code);

}  // namespace rpmirror
