// Configuration jobs: rpmirror.conf(5) read into jobs (one per section); rpmirror/jobs/jobs.hpp
// runs them (`rpmirror sync --config-file FILE`, "job mode").
//
// The file is INI as dnf's: a [main] section (main file only) with settings of the run and
// defaults of every job, then one section per job, named by the job. The main file is followed by
// every `*.conf` of the `conf.d/` directory beside it, in name order. Keys: `-` and `_` are the
// same. A job's repository keys are dnf's `.repo` keys, validated exactly as in a `.repo` file.
//
// Errors are kept local: an unknown key is a warning ("FILE:LINE: unknown key 'KEY' in job
// 'NAME'") and the job still runs; a bad value (or no source, two sources) fails only its job
// (JobConfig::errors, "FILE:LINE: job 'NAME': KEY: what is wrong"). Trees that overlap
// (destinations, metadata-path, the snapshot trees of snapshot-dir) fail
// both of their jobs, every job compared, enabled or not. Only a file that cannot be read or
// parsed, a bad [main], or a configuration without jobs fails the whole load.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/config/config.hpp"
#include "rpmirror/s3/s3.hpp"
#include "rpmirror/sync/sync_options.hpp"
#include "rpmirror/util/error.hpp"

namespace rpmirror {

// The default main file (`--config-file` overrides it).
inline constexpr const char* kDefaultJobsConfigFile = "/etc/rpmirror/rpmirror.conf";

// One job: a repository and how it is mirrored.
struct JobConfig {
    std::string name;           // the section name; also the repository's id
    ConfigLocation defined_at;  // the [name] line
    bool enabled = true;        // enabled=0: skipped unless --job names it
    RepoConfig repo;            // its source (`repo = ID` or baseurl/mirrorlist/metalink) and keys
    // Where and how: download_path is the repository directory itself (norepopath is set);
    // selection, metadata, --delete, --gpgcheck, ... as the job's keys say. `events` is unset.
    SyncOptions options;
    // `snapshot = BOOL|NAME`: unset = no snapshot; "" = a snapshot named by the run's start time.
    std::optional<std::string> snapshot;
    std::size_t keep_snapshots = 0;  // `keep-snapshots = N` (0: keep all)
    std::optional<std::filesystem::path> snapshot_dir;
    std::string exec_on_change;  // `exec-on-change = CMD`; empty = none
    // `packages = SPEC ...` and `packages-file = FILE` (both may be given: their union). With
    // `with-dependencies = 1`, the job's repository mirrors its share of their dependency
    // closure, solved over every job of the run with the same packages before any job runs;
    // without, the specs are added to its includepkgs.
    std::vector<std::string> packages;
    bool with_dependencies = false;
    // `releases = A B latest` (with upstream-layout): the job is one JobConfig per release, named
    // "NAME:RELEASE", each with $releasever = RELEASE, the same destination (the layout root
    // they share) and, unless lock-wait says otherwise, waiting for that root's lock so that
    // they run one after the other. The release this JobConfig mirrors; empty otherwise.
    std::string release;
    bool weak_dependencies = true;  // `weak-dependencies = 0`: no Recommends or Supplements
    // `installed-base = PATH`: what the machines already have (ClosureRequest::installed_base).
    std::filesystem::path installed_base;
    // `modules = NAME:STREAM ...`: the module streams the machines enable
    // (ClosureRequest::modules).
    std::vector<std::string> modules;
    // `closure-repos = ID ...`: repositories of dnf's configuration the closure may take
    // dependencies from without mirroring them (assign_closure's closure_only).
    std::vector<RepoConfig> closure_repos;
    // Each a complete "FILE:LINE: job 'NAME': KEY: what is wrong". Not empty: the job fails
    // without running.
    std::vector<std::string> errors;
};

// One worker's share of the jobs when N machines split a configuration (`--shard K/N`,
// `shard = K/N`): worker K of N (1 <= K <= N) runs the jobs (or, without a configuration file,
// the repositories) whose name falls into shard K.
struct Shard {
    unsigned index = 1;  // K, 1-based
    unsigned count = 1;  // N

    // Returns "K/N".
    std::string to_string() const;
};

// Parses "K/N" (decimal, 1 <= K <= N <= 65536). Returns Error{BadInput} whose subject is `shown`
// (e.g. "--shard" or "FILE: line 3: shard") naming the value and the expected form otherwise.
// Thread-safe.
Result<Shard> parse_shard(std::string_view text, std::string_view shown);

// Returns the shard (1..count) of the job or repository called `name`: a jump consistent hash
// (Lamping & Veach) of the first 8 bytes of SHA-256(name), read big-endian, into `count`
// buckets. The same on every machine and in every version (a fixed function of the name's
// bytes); going from N to N+1 workers moves only about 1/(N+1) of the jobs. `count` >= 1.
// Thread-safe.
unsigned shard_of(std::string_view name, unsigned count);

// Returns true iff `name` belongs to `shard` (shard_of(name, shard.count) == shard.index).
bool in_shard(std::string_view name, const Shard& shard);

// Everything rpmirror.conf defines.
struct JobsConfig {
    std::filesystem::path main_file;
    std::vector<std::filesystem::path> conf_d_files;  // read after main_file, in this order
    // [main]
    std::optional<std::filesystem::path> destination;  // base: a job without one goes to DIR/NAME
    unsigned parallel = 16;                            // total connection budget of all jobs (-j)
    unsigned parallel_jobs = 4;                        // jobs run at once
    unsigned max_per_host = 0;  // connections per host across all jobs; 0 = only the budget
    std::optional<std::filesystem::path> state_dir;
    // [main] metrics-file, else RPMIRROR_METRICS_FILE of the environment (JobsLoadOptions::
    // variables.environment; when set and not empty: the systemd unit's default, which [main]
    // overrides); `--metrics-file` overrides both.
    std::optional<std::filesystem::path> metrics_file;
    std::optional<Shard> shard;  // `shard = K/N`; `--shard` overrides it
    // `listen = ADDR:PORT ...`: where `rpmirror serve` listens (its --listen overrides it).
    std::vector<std::string> listen;
    // s3-endpoint, s3-region, s3-profile, s3-addressing: for every job with an s3:// destination
    // (copied into its SyncOptions::s3).
    s3::S3Overrides s3;
    std::vector<JobConfig> jobs;  // in file order (main file, then conf.d)
};

// How load_jobs_config finds its files and variables.
struct JobsLoadOptions {
    std::filesystem::path config_file = kDefaultJobsConfigFile;
    // The variables' environment (DNF_VAR_*) and machine; [main]'s releasever, basearch and
    // varsdir replace the rest. Defaults: the process's.
    VariableOptions variables;
};

// Reads the main file and conf.d/*.conf into jobs. Appends unknown keys (and dnf's warnings for
// the configuration `repo = ID` jobs use) to `warnings`.
// Returns Error{NotFound} iff the main file is missing; Error{Io} iff a file cannot be read;
// Error{BadInput} naming the file (and line) iff a file is not valid INI, a key precedes every
// section, [main] is in a conf.d file or has a bad value, a section name is not a valid job name,
// a job is defined twice (naming both places), or there is no job at all.
// Thread-safe if `warnings` is not shared.
Result<JobsConfig> load_jobs_config(const JobsLoadOptions& options,
                                    std::vector<ConfigWarning>& warnings);

// Chooses the jobs to run. Without patterns: the enabled ones. With patterns (`--job`, fnmatch
// globs, comma lists already split): every job matching one, enabled or not. Order is kept.
// Returns Error{BadInput} naming the pattern iff one matches no job. Thread-safe.
Result<std::vector<JobConfig>> select_jobs(std::vector<JobConfig> jobs,
                                           std::span<const std::string> patterns);

}  // namespace rpmirror
