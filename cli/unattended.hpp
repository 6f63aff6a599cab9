// `rpmirror sync --metrics-file FILE --on-change CMD`: what an unattended run (a systemd timer)
// needs besides the sync itself: a Prometheus metrics file written at the end of the run, and a
// command run after each job that changed the mirror (run_hook_after_job, rpmirror/jobs/hooks.hpp).
// Used by both modes of `rpmirror sync`: dnf reposync's (each repository a job named by its repo
// id) and job mode (rpmirror.conf).
#pragma once

#include <optional>
#include <span>
#include <string>

#include <CLI/CLI.hpp>

#include "rpmirror/sync/job.hpp"

namespace rpmirror::cli {

struct UnattendedArgs {
    std::string metrics_file;  // --metrics-file; empty = none
    std::string on_change;     // --on-change; empty = none
};

// Registers --metrics-file and --on-change on `app` (sync), storing into `args`.
void add_unattended_options(CLI::App& app, UnattendedArgs& args);

// Writes the metrics of `outcomes` to `file` (write_metrics_file) iff `file` is not empty.
// Returns nullopt iff nothing was to be written or it was written; else the error line to print
// on stderr ("rpmirror: FILE: cannot write the metrics file: ..."): the run then exits 1.
std::optional<std::string> write_run_metrics(const std::string& file,
                                             std::span<const JobOutcome> outcomes);

}  // namespace rpmirror::cli
