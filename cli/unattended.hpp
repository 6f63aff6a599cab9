// `rpmirror sync --metrics-file FILE --on-change CMD`: what an unattended run (a systemd timer)
// needs besides the sync itself: a Prometheus metrics file written at the end of the run, and a
// command run after each job that changed the mirror (run_hook_after_job, jobs/hooks.hpp).
// Used by both modes of `rpmirror sync`: dnf reposync's (each repository a job named by its repo
// id) and job mode (rpmirror.conf).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace rpmirror::cli {

struct UnattendedArgs {
    std::string metrics_file;  // --metrics-file; empty = none
    std::string on_change;     // --on-change; empty = none
};

// Registers --metrics-file and --on-change on `app` (sync), storing into `args`.
void add_unattended_options(CLI::App& app, UnattendedArgs& args);

}  // namespace rpmirror::cli
