// Prometheus metrics of sync runs, as a file for node_exporter's textfile collector
// (--collector.textfile.directory; it reads every *.prom file there on each scrape).
//
// The file holds gauges only, each with the label `job` (the job's name, or the repo id outside
// a configuration file):
//   rpmirror_job_last_run_timestamp_seconds      when the job's last run ended (Unix time)
//   rpmirror_job_last_success_timestamp_seconds  when its last successful run ended; 0 = never
//   rpmirror_job_duration_seconds                how long the last run took
//   rpmirror_job_success                         1 iff the last run succeeded
//   rpmirror_job_up_to_date                      1 iff the last run succeeded and changed nothing
//   rpmirror_job_downloaded_bytes                bytes downloaded by the last run
//   rpmirror_job_packages{result=downloaded|kept|deleted|failed}  packages, by outcome
//   rpmirror_job_selected_packages               packages the job's filters selected
// e.g. alert on `time() - rpmirror_job_last_success_timestamp_seconds > 2 * 86400`.
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include "rpmirror/sync/job.hpp"
#include "rpmirror/util/error.hpp"

namespace rpmirror {

// Returns `value` escaped as a label value of the Prometheus text format (\\, \", \n).
std::string escape_label_value(std::string_view value);

// Returns the metrics file text for `outcomes` merged into `previous` (the text of the file
// written by an earlier run; empty for none): every job of `outcomes` gets the values of this
// run, except that a job that failed keeps the last_success timestamp `previous` has for it (0
// when it has none); every other job of `previous` keeps its lines unchanged. Lines of `previous`
// that are not rpmirror_job_* samples with a `job` label are dropped. Metrics come in a fixed
// order (HELP and TYPE, then one line per job sorted by name), label values escaped as the text
// format wants (\\, \", \n). When a job appears twice in `outcomes`, the later one counts.
std::string format_metrics(std::string_view previous, std::span<const JobOutcome> outcomes);

// Writes format_metrics(<the current content of `file`>, outcomes) to `file` atomically: to a
// temporary file in the same directory (not named *.prom, so the collector never reads it), then
// renamed over `file`, mode 0644. A missing `file` is a first run. Returns Error{Io} or
// Error{NotFound} naming `file` iff it cannot be read or written (e.g. its directory is missing or
// not writable); `file` is then unchanged and no temporary file is left. Thread-safe: processes
// and threads writing the same file take turns (flock on its directory), so none loses another's
// jobs.
Result<void> write_metrics_file(const std::filesystem::path& file,
                                std::span<const JobOutcome> outcomes);

}  // namespace rpmirror
