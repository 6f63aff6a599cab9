// Job mode of `rpmirror sync`: rpmirror.conf's jobs, run concurrently, reported as `JOB: ` lines.
#include "jobs.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <string_view>

#include <fmt/core.h>
#include <fmt/format.h>

#include "command.hpp"
#include "output.hpp"
#include "rpmirror/jobs/jobs.hpp"
#include "rpmirror/report/report.hpp"
#include "rpmirror/run/sync_run.hpp"
#include "snapshot.hpp"
#include "unattended.hpp"

namespace rpmirror::cli {
namespace {

// The options job mode takes from the command line; every other one given is a usage error.
constexpr const char* kJobModeOptions[] = {
    "--config-file",  "--job",       "--parallel-jobs", "--parallel",     "--max-per-host",
    "--metrics-file", "--on-change", "--quiet",         "--verbose",      "--json",
    "--state-dir",    "--wait-lock", "--no-cache",      "--shard",        "--help",
    "--s3-endpoint",  "--s3-region", "--s3-profile",    "--s3-addressing"};

// Returns the first option of `app` given on the command line that job mode refuses, or null.
const CLI::Option* refused_option(const CLI::App& app) {
    for (const CLI::Option* option : app.get_options()) {
        if (option->count() == 0) {
            continue;
        }
        bool allowed = false;
        for (const char* name : kJobModeOptions) {
            allowed = allowed || option->check_name(name);
        }
        if (!allowed) {
            return option;
        }
    }
    return nullptr;
}

// Job mode's output: whole lines, each written with one write(2) so that lines of concurrent
// jobs never interleave on a pipe; on a terminal (stderr) a block of progress lines, one per
// running job, redrawn below the event lines. Thread-safe.
class JobLines final : public SyncRunEvents {
  public:
    JobLines(const JobModeShared& shared, bool draw_progress, std::FILE* human)
        : quiet_(shared.quiet),
          verbose_(shared.verbose),
          draw_progress_(draw_progress),
          human_fd_(::fileno(human)) {}

    // Prints each line of `lines` prefixed with "NAME: " (unless it already starts so) on `fd`,
    // in one write.
    void line(int fd, const std::string& job, std::string_view lines) {
        const std::string prefix = job + ": ";
        std::string text;
        while (!lines.empty()) {
            const std::size_t end = std::min(lines.find('\n'), lines.size());
            const std::string_view line = lines.substr(0, end);
            if (!line.starts_with(prefix)) {
                text += prefix;
            }
            text += line;
            text += '\n';
            lines.remove_prefix(std::min(end + 1, lines.size()));
        }
        const std::lock_guard lock(mutex_);
        write_above_progress(fd, text);
    }

    void started(const JobConfig& job) override {
        {
            const std::lock_guard lock(mutex_);
            running_[job.name] = Running{};
        }
        if (!quiet_) {
            line(human_fd_, job.name,
                 fmt::format("started: {} -> {}", source_of(job.repo),
                             job.options.download_path.string()));
        }
    }

    void progress(const JobConfig& job, const TransferProgress& progress) override {
        if (!draw_progress_) {
            return;
        }
        const std::lock_guard lock(mutex_);
        running_[job.name].progress = progress;
        const auto now = std::chrono::steady_clock::now();
        if (now - last_draw_ >= std::chrono::milliseconds(100)) {
            last_draw_ = now;
            write_above_progress(STDERR_FILENO, "");
        }
    }

    void finished(const JobConfig& job, JobOutcome& outcome) override {
        {
            const std::lock_guard lock(mutex_);
            running_.erase(job.name);
        }
        const RepoSyncReport& report = outcome.report;
        for (const std::string& error : outcome.errors) {
            line(STDERR_FILENO, job.name, error);
        }
        if (!outcome.errors.empty() && report.repo_id.empty()) {
            line(STDERR_FILENO, job.name, "FAILED: not run");
            return;
        }
        for (const std::string& problem : format_problems(report)) {
            line(STDERR_FILENO, job.name, problem);
        }
        if (!quiet_) {
            for (const auto& deleted : report.deleted) {
                line(human_fd_, job.name, fmt::format("deleted {}", deleted.string()));
            }
        }
        if (!quiet_ || report.error) {
            line(report.error ? STDERR_FILENO : human_fd_, job.name, format_summary(report));
        }
    }

    void shard_skipped(const Shard& shard, std::span<const std::string> skipped) override {
        if (verbose_) {
            print_shard_skipped(shard, skipped, "jobs");
        }
    }

    void closure_left_out(std::string_view left_out) override {
        fmt::print(stderr, "rpmirror: warning: with-dependencies: {}\n", left_out);
    }

    void snapshot_taken(const JobConfig& job, const SnapshotAndPrune& done) override {
        if (!quiet_) {
            for (const std::string& text : format_snapshot_done(job.repo.id, done)) {
                line(human_fd_, job.name, text);
            }
        }
    }

    // Printed even with -q: a snapshot's or a hook's failure is never hidden.
    void step_failed(const JobConfig& job, const std::string& text) override {
        line(STDERR_FILENO, job.name, text);
    }

    // Erases the progress block for good (before the program ends).
    void finish() {
        const std::lock_guard lock(mutex_);
        running_.clear();
        write_above_progress(STDERR_FILENO, "");
    }

  private:
    struct Running {
        TransferProgress progress;
        std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
    };

    static std::string source_of(const RepoConfig& repo) {
        if (!repo.baseurls.empty()) {
            return repo.baseurls.front();
        }
        return repo.metalink ? *repo.metalink : repo.mirrorlist.value_or("");
    }

    // Writes `text` (whole lines, possibly none) to `fd`; on a terminal, the progress block is
    // erased first and redrawn after, in the same write when `fd` is stderr. Call with mutex_.
    void write_above_progress(int fd, const std::string& text) {
        if (!draw_progress_) {
            if (!text.empty()) {
                (void)!::write(fd, text.data(), text.size());
            }
            return;
        }
        std::string erase;
        for (std::size_t i = 0; i < drawn_lines_; ++i) {
            erase += "\x1b[1A\r\x1b[K";
        }
        std::string block;
        const auto now = std::chrono::steady_clock::now();
        for (const auto& [name, running] : running_) {
            block +=
                format_progress_line(name, running.progress,
                                     std::chrono::duration<double>(now - running.started).count());
            block += "\x1b[K\n";
        }
        if (fd == STDERR_FILENO) {
            const std::string all = erase + text + block;
            (void)!::write(STDERR_FILENO, all.data(), all.size());
        } else {
            (void)!::write(STDERR_FILENO, erase.data(), erase.size());
            (void)!::write(fd, text.data(), text.size());
            (void)!::write(STDERR_FILENO, block.data(), block.size());
        }
        drawn_lines_ = running_.size();
    }

    const bool quiet_;
    const bool verbose_;
    const bool draw_progress_;
    const int human_fd_;
    std::mutex mutex_;
    std::map<std::string, Running> running_;
    std::size_t drawn_lines_ = 0;
    std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace

int outcome_exit_code(const JobOutcome& outcome) {
    if (outcome.ok()) {
        return kExitOk;
    }
    // A mistake refused before anything changed (an unknown --arch, a --delete that would empty
    // the mirror) is a usage error.
    if (outcome.report.refused) {
        return kExitUsage;
    }
    const bool only_left_out =
        outcome.report.partial && !outcome.report.error && outcome.errors.empty();
    return only_left_out ? kExitPartial : kExitFailure;
}

void add_job_mode_options(CLI::App& app, JobModeArgs& args) {
    args.config_file_option =
        app.add_option("--config-file", args.config_file,
                       "run the jobs of this rpmirror.conf (and its conf.d/*.conf): job mode")
            ->option_text("FILE");
    app.add_option("--job", args.jobs,
                   "job mode: only these jobs (globs; repeatable, comma lists); without "
                   "--config-file, from " +
                       std::string(kDefaultJobsConfigFile))
        ->option_text("GLOB");
    app.add_option("--parallel-jobs", args.parallel_jobs,
                   "job mode: jobs run at once (default: [main] parallel-jobs, else 4)")
        ->check(CLI::Range(1U, 256U));
    args.max_per_host_option =
        app.add_option("--max-per-host", args.max_per_host,
                       "job mode: connections per host across all jobs (0: no limit but -j)")
            ->check(CLI::Range(0U, 256U));
    args.shard_option =
        app.add_option("--shard", args.shard,
                       "run only worker K's share of N workers: the jobs (without "
                       "--config-file, the repositories) whose name hashes to K (default: [main] "
                       "shard)")
            ->option_text("K/N");
}

Result<std::optional<Shard>> shard_from_command_line(const JobModeArgs& args) {
    if (args.shard_option == nullptr || args.shard_option->count() == 0) {
        return std::optional<Shard>();
    }
    auto shard = parse_shard(args.shard, "--shard");
    if (!shard) {
        return tl::unexpected(std::move(shard.error()));
    }
    return std::optional<Shard>(*shard);
}

void print_shard_skipped(const Shard& shard, std::span<const std::string> skipped,
                         std::string_view what) {
    if (skipped.empty()) {
        fmt::print(stderr, "rpmirror: shard {}: no {} of other workers skipped\n",
                   shard.to_string(), what);
    } else {
        fmt::print(stderr, "rpmirror: shard {}: skipped {} {} of other workers: {}\n",
                   shard.to_string(), skipped.size(), what, fmt::join(skipped, ", "));
    }
}

void SetupLines::config_warning(const ConfigWarning& warning) {
    print_config_warning(warning, noise_);
}

void SetupLines::note(const std::string& line) {
    if (!quiet_) {
        fmt::print(stderr, "rpmirror: {}\n", line);
    }
}

bool job_mode_requested(const JobModeArgs& args) {
    return args.config_file_option->count() > 0 || !args.jobs.empty();
}

int run_job_mode(const CLI::App& app, const JobModeArgs& args, const JobModeShared& shared,
                 std::stop_token stop) {
    if (const CLI::Option* option = refused_option(app)) {
        fmt::print(stderr,
                   "rpmirror: {}: not allowed with --config-file/--job: repositories, "
                   "destinations and filters belong in the configuration file\n",
                   option->get_name());
        return kExitUsage;
    }
    JobRunRequest request;
    if (!args.config_file.empty()) {
        request.config_file = args.config_file;
    }
    request.job_patterns = split_option_list(args.jobs);
    if (args.shard_option->count() > 0) {
        request.shard = args.shard;
    }
    request.parallel_jobs = args.parallel_jobs;
    request.parallel = shared.parallel;
    if (args.max_per_host_option->count() > 0) {
        request.max_per_host = args.max_per_host;
    }
    request.use_checksum_cache = !shared.no_cache;
    apply_run_state_options(*shared.state, request.state_dir, request.lock_wait);
    request.s3 = s3_overrides(*shared.s3);
    request.on_change = shared.unattended->on_change;
    request.metrics_file = shared.unattended->metrics_file;
    SetupLines setup(shared.quiet, shared.verbose);
    auto run = job_run(request, &setup);
    if (!run) {
        fmt::print(stderr, "rpmirror: {}\n", run.error().to_string());
        return kExitUsage;
    }
    const bool json_on_stdout = shared.json_file == "-";
    const bool draw_progress = !shared.quiet && ::isatty(STDERR_FILENO) == 1;
    JobLines lines(shared, draw_progress, json_on_stdout ? stderr : stdout);
    std::fflush(stdout);
    std::fflush(stderr);
    const SyncRunResult result = run_sync(std::move(*run), &lines, stop);
    lines.finish();
    if (result.closure_failed) {
        fmt::print(stderr, "rpmirror: {}\n", result.closure_failed->to_string());
        return kExitFailure;
    }
    const std::vector<JobOutcome>& outcomes = result.outcomes;
    int exit_code = kExitOk;
    for (const JobOutcome& outcome : outcomes) {
        exit_code = worse_exit_code(exit_code, outcome_exit_code(outcome));
    }
    if (result.metrics_error) {
        fmt::print(stderr, "rpmirror: {}\n", result.metrics_error->to_string());
        exit_code = worse_exit_code(exit_code, kExitFailure);
    }
    if (!shared.quiet) {  // the jobs' own lines said what failed, even with -q
        fmt::print(json_on_stdout ? stderr : stdout, "rpmirror: {}\n",
                   format_jobs_tally(tally_jobs(outcomes)));
        std::fflush(json_on_stdout ? stderr : stdout);
    }
    if (!shared.json_file.empty() &&
        !write_report(shared.json_file, format_jobs_json_report(outcomes, exit_code))) {
        fmt::print(stderr, "rpmirror: {}: cannot write the JSON report\n", shared.json_file);
        exit_code = worse_exit_code(exit_code, kExitFailure);
    }
    return exit_code;
}

}  // namespace rpmirror::cli
