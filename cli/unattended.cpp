// --metrics-file and --on-change of `rpmirror sync` (cli/unattended.hpp).
#include "unattended.hpp"

#include <fmt/core.h>

namespace rpmirror::cli {

void add_unattended_options(CLI::App& app, UnattendedArgs& args) {
    app.add_option("--metrics-file", args.metrics_file,
                   "write Prometheus metrics of every repository (job) to FILE at the end of the "
                   "run, atomically, keeping other jobs' lines (node_exporter's textfile "
                   "collector reads *.prom files)")
        ->option_text("FILE");
    app.add_option("--on-change", args.on_change,
                   "after a repository (job) whose mirror changed, run CMD with /bin/sh -c "
                   "(environment: RPMIRROR_JOB, RPMIRROR_REPO_ID, RPMIRROR_DESTINATION, "
                   "RPMIRROR_METADATA_DIR); its failure fails the run")
        ->option_text("CMD");
}

}  // namespace rpmirror::cli
