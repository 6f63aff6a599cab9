// The jobs of a `rpmirror sync` run, made from what its command line asks (run_sync,
// rpmirror/run/sync_run.hpp, runs them). The command line parses its options into a request and
// prints what it is told; every step between the two is here:
//
//   dnf mode:  .repo files, --repofrompath ─► toggles, --repo (or its mirror's record) ─► each
//              --releasever ─► the packages: a filter, or a dependency closure's keys ─► jobs
//   job mode:  rpmirror.conf ─► --job ─► --shard ─► the command line's settings over [main]
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "rpmirror/config/config.hpp"
#include "rpmirror/jobs/jobs_config.hpp"
#include "rpmirror/run/sync_run.hpp"
#include "rpmirror/s3/s3.hpp"
#include "rpmirror/util/error.hpp"

namespace rpmirror {

// What making a run's jobs tells as it goes, before any job runs (on the caller's thread).
class SyncSetupEvents {
  public:
    virtual ~SyncSetupEvents() = default;
    // A finding of the config stage (ConfigWarningKind), in the order found; the caller chooses
    // which to show.
    virtual void config_warning(const ConfigWarning& warning) { (void)warning; }
    // A line on where a repository that no configuration defines came from (its mirror's
    // source record), or on a record ignored.
    virtual void note(const std::string& line) { (void)line; }
};

// Which repositories of dnf's configuration dnf mode mirrors.
struct RepositoryRequest {
    // -c, --reposdir, --repofrompath, --setopt, --releasever (given several times: each release
    // loaded in turn, needs SyncOptions::upstream_layout), ...
    RepoSourceRequest sources;
    std::string ip_resolve;                      // -4/-6: "4" or "6" (--setopt wins); "": neither
    std::vector<RepoSelection::Toggle> toggles;  // --enablerepo/--disablerepo, in order
    std::vector<std::string> repo_patterns;      // --repo (comma lists split)
    bool source = false;                         // --source: the -source repositories too
    bool nogpgcheck = false;  // gpgcheck and repo_gpgcheck off for every repository
    // Where a --repo ID that no configuration defines finds the source its mirror recorded: the
    // run's -p, --state-dir (as given), --norepopath and store settings.
    std::string download_path = ".";
    std::filesystem::path state_dir;
    bool norepopath = false;
    s3::S3Overrides s3;
};

// --packages, --packages-file and --with-dependencies with its options.
struct PackageRequest {
    std::vector<std::string> specs;       // --packages (comma lists split)
    std::filesystem::path packages_file;  // "": none
    bool with_dependencies = false;
    bool weak_dependencies = true;  // --no-weak-dependencies: false
    std::filesystem::path installed_base;
    std::vector<std::string> modules;        // NAME:STREAM (comma lists split)
    std::vector<std::string> closure_repos;  // repo ids (comma lists split)
};

struct RepositoryRunRequest {
    RepositoryRequest repositories;
    PackageRequest packages;
    // What every repository's job shares: its options (SyncOptions), snapshot keys.
    JobConfig each;
    // No repository enabled: no job (`reposync`, silent as dnf's) rather than an error.
    bool allow_none = false;
};

// Why repository_run_jobs made no jobs, with the step that found it (the command line words each
// its own way).
struct RepositoryRunRefusal {
    enum class Step {
        Request,     // the request itself: --releasever, --keep-releases, none enabled, packages
        Loading,     // the configuration could not be loaded or a repository selected
        Norepopath,  // --norepopath with several repositories (`error.message` is dnf's words)
    };
    Step step;
    Error error;
};

// dnf mode's jobs: loads the repositories `request.repositories` selects (with $releasever each
// of several --releasever values, one after the other), each a job copied from `request.each`
// with the repository as its source and its id as its name; --packages alone adds the specs to
// each repository's includepkgs, with --with-dependencies they are the jobs' closure keys
// (run_sync solves them), --closure-repos loaded as --repo is. Refuses, at the step named:
// several --releasever without upstream_layout, or more than keep_releases (Error{BadInput}
// naming the option); loading's or selection's error (a --repo naming none: "Unknown repo");
// none enabled unless allow_none (Error{BadInput}); --norepopath with several; a package list
// that cannot be read, --with-dependencies without packages or advisories, closure options the
// SyncOptions contradict, a --closure-repos error or unknown id (naming --closure-repos).
// `events` (may be null) hears the config stage's warnings and the records' notes.
tl::expected<std::vector<JobConfig>, RepositoryRunRefusal> repository_run_jobs(
    const RepositoryRunRequest& request, SyncSetupEvents* events = nullptr);

// Job mode: rpmirror.conf and what the command line sets over its [main].
struct JobRunRequest {
    std::filesystem::path config_file = kDefaultJobsConfigFile;  // --config-file
    std::vector<std::string> job_patterns;          // --job (comma lists split): select_jobs
    std::optional<std::string> shard;               // --shard K/N as given, over [main] shard
    unsigned parallel_jobs = 0;                     // --parallel-jobs; 0: [main]'s
    unsigned parallel = 0;                          // -j: connections of all jobs; 0: [main]'s
    std::optional<unsigned> max_per_host;           // --max-per-host; nullopt: [main]'s
    bool use_checksum_cache = true;                 // --no-cache: false
    std::filesystem::path state_dir;                // --state-dir (absolute); "": each job's own
    std::optional<std::chrono::seconds> lock_wait;  // --wait-lock; nullopt: each job's own
    s3::S3Overrides s3;                             // each setting given over [main]'s
    std::string on_change;                          // --on-change over each exec-on-change
    std::string metrics_file;                       // --metrics-file; "": [main]'s (or none)
};

// Job mode's run: loads the configuration (rpmirror.conf), its jobs that `job_patterns`
// selects, the shard (--shard, else [main]'s) and the runner's settings: `parallel` connections
// for all jobs at once, `max_per_host` to one host (one budget shared by every job),
// the command line's settings over each job's. Returns Error{BadInput} (or the configuration's)
// naming the file, the --shard value or the --job pattern at fault. `events` (may be null)
// hears the configuration's warnings, before any error.
Result<SyncRun> job_run(const JobRunRequest& request, SyncSetupEvents* events = nullptr);

}  // namespace rpmirror
