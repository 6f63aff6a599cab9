// `rpmirror sync --config-file FILE [--job GLOB]...`: job mode, the jobs of rpmirror.conf run
// concurrently (cli/jobs.cpp).
#pragma once

#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "repo_options.hpp"
#include "rpmirror/jobs/jobs.hpp"
#include "rpmirror/run/sync_jobs.hpp"
#include "s3_options.hpp"
#include "unattended.hpp"

namespace rpmirror::cli {

struct JobModeArgs {
    std::string config_file;        // --config-file
    std::vector<std::string> jobs;  // --job, one value per occurrence (comma lists)
    unsigned parallel_jobs = 0;     // --parallel-jobs; 0: not given
    unsigned max_per_host = 0;      // --max-per-host
    std::string shard;              // --shard K/N (job mode and dnf mode)
    CLI::Option* config_file_option = nullptr;
    CLI::Option* max_per_host_option = nullptr;
    CLI::Option* shard_option = nullptr;
};

// The exit code of one job's (one repository's) outcome: 0 synced; 2 refused as a mistake
// before anything changed; 3 its metadata published without the packages that failed
// (--publish-partial) and nothing else failed; 1 anything else that failed.
int outcome_exit_code(const JobOutcome& outcome);

// Registers --config-file, --job, --parallel-jobs, --max-per-host and --shard on `app` (sync).
void add_job_mode_options(CLI::App& app, JobModeArgs& args);

// Returns true iff the command line asks for job mode (--config-file or --job given).
bool job_mode_requested(const JobModeArgs& args);

// Returns --shard parsed (nullopt iff not given), or Error{BadInput} naming the value.
Result<std::optional<Shard>> shard_from_command_line(const JobModeArgs& args);

// Prints the line of a shard's run that names the `what` (jobs, repositories) of other workers
// it skipped (run_sync's SyncRunEvents::shard_skipped).
void print_shard_skipped(const Shard& shard, std::span<const std::string> skipped,
                         std::string_view what);

// What making a sync run's jobs tells, printed (both modes): the config stage's warnings as -q
// and -v say, the notes on repositories from their mirrors' records unless -q.
class SetupLines final : public SyncSetupEvents {
  public:
    SetupLines(bool quiet, bool verbose) : quiet_(quiet), noise_(config_noise(quiet, verbose)) {}

    void config_warning(const ConfigWarning& warning) override;
    void note(const std::string& line) override;

  private:
    const bool quiet_;
    const ConfigNoise noise_;
};

// The options of `rpmirror sync` that job mode shares with dnf mode.
struct JobModeShared {
    bool quiet = false;
    bool verbose = false;
    bool no_cache = false;
    unsigned parallel = 0;  // -j; 0: not given
    std::string json_file;
    const RunStateArgs* state = nullptr;
    const UnattendedArgs* unattended = nullptr;  // --metrics-file, --on-change (over [main])
    const S3Args* s3 = nullptr;                  // --s3-endpoint etc. (over [main])
};

// Runs job mode: refuses (exit 2) every option of `app` given on the command line that job mode
// does not take (repositories, destinations and filters belong in the file), loads the
// configuration, runs the selected jobs and prints `JOB: ` lines. Returns the exit code (0 all
// jobs ok, 1 some failed, 2 usage or configuration error); `stop` ends the run early (the caller
// turns a signal into 130/143).
int run_job_mode(const CLI::App& app, const JobModeArgs& args, const JobModeShared& shared,
                 std::stop_token stop);

}  // namespace rpmirror::cli
