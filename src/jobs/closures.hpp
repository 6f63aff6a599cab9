// --with-dependencies in job mode (sync/closure.hpp for one command line's
// repositories).
#pragma once

#include <stop_token>
#include <vector>

#include "rpmirror/jobs/jobs_config.hpp"
#include "rpmirror/util/error.hpp"
#include "sync/closure.hpp"

namespace rpmirror {

// Job mode: the jobs of `jobs` with with-dependencies, grouped by the same packages, weak
// dependencies and architecture (all of them when [main] gives those keys), each group solved
// as assign_closure solves a command line's repositories and each job given its share. Returns
// what was fetched, to keep until the jobs end; or the first group's error, prefixed with its
// jobs' names iff `name_jobs` (dnf mode's jobs are its repositories: the error names them).
Result<std::vector<ClosureMetadata>> assign_job_closures(std::vector<JobConfig>& jobs,
                                                         std::stop_token stop = {},
                                                         bool name_jobs = true);

}  // namespace rpmirror
