// Reading rpmirror.conf into jobs, choosing and sharding them: behind
// rpmirror/jobs/jobs_config.hpp's JobConfig.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/repo_files.hpp"
#include "rpmirror/jobs/jobs_config.hpp"

namespace rpmirror {

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
