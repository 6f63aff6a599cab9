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

}  // namespace rpmirror
