// One job's outcome: a repository synced by `rpmirror sync`, named by its job (a section of
// rpmirror.conf) or, outside a configuration file, by its repo id. What metrics, hooks and the
// summary of a run are made from.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "rpmirror/sync/sync_report.hpp"

namespace rpmirror {

struct JobOutcome {
    std::string job;        // the job's name (rpmirror.conf section), or the repo id
    RepoSyncReport report;  // default (empty) iff the job never ran (e.g. a bad value)
    std::chrono::system_clock::time_point started;
    std::chrono::system_clock::time_point finished;
    // Failures outside the report, each a complete message: a bad configuration value
    // ("FILE:LINE: job 'NAME': KEY: ..."), a failed exec-on-change hook.
    std::vector<std::string> errors;

    // Returns true iff the job ran and synced completely, and nothing else failed.
    bool ok() const { return errors.empty() && report.ok(); }

    // Returns true iff the run changed what the mirror serves: new metadata was published, or
    // packages were downloaded or deleted. (What exec-on-change hooks run after.)
    bool changed() const {
        return !report.noop &&
               (report.metadata_published || report.downloaded > 0 || !report.deleted.empty());
    }
};

}  // namespace rpmirror
