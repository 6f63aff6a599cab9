// On-change hooks: a command run after a job changed what the mirror serves (--on-change CMD,
// `exec-on-change = CMD` in rpmirror.conf), e.g. to refresh a CDN or tell downstream mirrors.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "rpmirror/sync/job.hpp"
#include "rpmirror/util/error.hpp"

namespace rpmirror {

// Runs `command` with `/bin/sh -c`, waits for it, and returns how it ended. Callers run it after
// a job whose `outcome.changed()` (this function does not check). The command inherits
// rpmirror's environment, stdout and stderr (stdio buffers are flushed first), gets /dev/null as
// stdin, default signal dispositions and an empty signal mask, and these variables:
//   RPMIRROR_JOB            outcome.job
//   RPMIRROR_REPO_ID        outcome.report.repo_id
//   RPMIRROR_DESTINATION    the directory of the packages (outcome.report.repo_dir), absolute
//   RPMIRROR_METADATA_DIR   `metadata_dir` (where repodata/ is), absolute
// Returns Error{Io} with subject outcome.job, whose to_string() is the line to print, iff the
// command could not be started ("JOB: exec-on-change 'CMD' failed: cannot run /bin/sh: ..."),
// exited non-zero ("... failed: exit status N") or was killed ("... failed: killed by signal N
// (SIGNAME)"). Thread-safe (posix_spawn); blocks the calling thread while the command runs.
Result<void> run_change_hook(const std::string& command, const JobOutcome& outcome,
                             const std::filesystem::path& metadata_dir);

// What `rpmirror sync` runs after each job (either mode): `command` (--on-change, or a job's
// exec-on-change) for `outcome` iff `command` is not empty and outcome.changed(), by
// run_change_hook. Returns nullopt iff nothing ran or it succeeded; else the error line to print
// on stderr ("JOB: exec-on-change 'CMD' failed: exit status N"), which is also appended to
// outcome.errors (so the job counts as failed in the metrics and the exit status).
// Thread-safe for different outcomes; blocks while the command runs.
std::optional<std::string> run_hook_after_job(const std::string& command, JobOutcome& outcome,
                                              const std::filesystem::path& metadata_dir);

}  // namespace rpmirror
