// `rpmirror verify` as one call: the repositories of a mirror (a directory or s3://BUCKET/PREFIX)
// chosen, each audited with the selection its last sync recorded (overridden field by field),
// and, when asked, repaired with the sync stage and audited again. The audit and the repair
// themselves are internal (a directory or a bucket).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/audit/audit_report.hpp"
#include "rpmirror/config/config.hpp"
#include "rpmirror/index/selection.hpp"
#include "rpmirror/s3/s3.hpp"
#include "rpmirror/util/error.hpp"

namespace rpmirror {

// The selection filters given to `verify`, each replacing the recorded one when set.
struct SelectionOverrides {
    // -a (comma lists already split): replaces the arches and clears source-only.
    std::optional<std::vector<std::string>> arches;
    bool source = false;                         // --source
    bool newest_only = false;                    // -n
    std::optional<std::uint32_t> keep_versions;  // --keep-versions N (implies newest_only)
    std::optional<std::int64_t> min_build_time;  // --min-buildtime, seconds since the epoch
    bool all_packages = false;                   // ignore the recorded selection
};

struct VerifyRunOptions {
    std::string download_path = ".";         // the mirror: <DIR>/<id>/, or s3://BUCKET/PREFIX/<id>/
    std::vector<std::string> repo_patterns;  // --repo globs; none: every repository found
    bool remote = false;                     // audit against the repository's current metadata
    bool extra = false;                      // also report unlisted *.rpm files
    bool use_checksum_cache = true;          // false: hash every file (--no-cache)
    bool repair = false;                     // repair what is damaged, then audit again
    unsigned threads = 0;                    // hashing threads; 0 = all cores
    std::filesystem::path safe_write_path;   // "" = none (local mirrors only)
    SelectionOverrides selection;
    std::filesystem::path state_dir;                // as SyncOptions::state_dir ("" = default)
    std::optional<std::chrono::seconds> lock_wait;  // as SyncOptions::lock_wait
    s3::S3Overrides s3;                             // an s3:// mirror: the store's settings
    // The configured repositories (for --remote and --repair: their sources), called at most
    // once and only when needed. Its error refuses the run.
    std::function<Result<std::vector<RepoConfig>>()> load_sources;
};

// What verify_mirror reports as it goes, in order, per repository: selection, audited, then for a
// repair either repair_skipped or repaired and audited again ("after repair"). Called on the
// calling thread. Every method does nothing by default.
class VerifyRunEvents {
  public:
    virtual ~VerifyRunEvents() = default;
    // Before the audit: the selection it uses and where that came from (choose_selection).
    virtual void selection(std::string_view repo_id, const SelectionOptions& selection,
                           std::string_view origin);
    // An audit ended; `stage` is "" or "after repair".
    virtual void audited(const RepoAuditReport& report, std::string_view stage);
    // A repair ran.
    virtual void repaired(const RepoAuditReport& audit, const RepairReport& repair);
    // A repair was asked for but not attempted; `reason` is the rest of the line "ID: repair: ...".
    virtual void repair_skipped(std::string_view repo_id, std::string_view reason);
    // No configuration defines the repository, and its source is the one its mirror records in
    // `record` (store/source_record.hpp): with --remote before the selection, with
    // --repair before the repair (or repair_skipped).
    virtual void source(std::string_view repo_id, std::string_view record);
};

struct VerifyRunOutcome {
    // Set iff nothing was verified because the request names nothing verifiable or cannot be
    // carried out (a usage error: a --repo matching nothing, not a directory, an option the
    // store does not support, a source that cannot be loaded): the message.
    std::optional<std::string> refused;
    // Set iff the repositories of an s3:// mirror could not be listed (the store's error).
    std::optional<Error> error;
    std::vector<AuditRunEntry> entries;  // one per repository verified, in order

    // Returns true iff a repository was verified and each is sound (repaired and sound after).
    bool ok() const;
};

// Verifies the repositories of the mirror `request.download_path` (a directory or
// "s3://BUCKET/PREFIX", opened once): chooses them (the --repo globs over those found: each <id>
// with repodata/repomd.xml or a sync's state, and the repositories of each installation tree;
// with `remote` also configured ones, from --repofrompath), audits each through its store with
// choose_selection over what its sync recorded (with `remote`, against freshly fetched metadata
// plus the configuration's includepkgs and excludepkgs), and with `repair` repairs each damaged
// one (as repair_repository; it needs the repository's source: the configuration's, else the one
// its mirror records at <id>/.rpmirror/source.repo) and audits it again. Reports each
// step to `events` (may be null). Never throws; the outcome holds every report. Not thread-safe
// (one Syncer per call; run one at a time per mirror).
VerifyRunOutcome verify_mirror(const VerifyRunOptions& request, VerifyRunEvents* events = nullptr);

}  // namespace rpmirror
