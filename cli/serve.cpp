// `rpmirror serve`: serves the mirrors of rpmirror.conf's jobs over HTTP (rpmirror/serve/
// serve.hpp): parses the command line, prints what the server tells, ends on SIGINT/SIGTERM.
#include <signal.h>

#include <cstdio>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "command.hpp"
#include "rpmirror/config/config.hpp"
#include "rpmirror/serve/serve.hpp"
#include "rpmirror/snapshot/snapshot.hpp"
#include "signal_stopper.hpp"

namespace rpmirror::cli {

namespace {

struct ServeArgs {
    std::string config_file = kDefaultJobsConfigFile;
    std::vector<std::string> jobs;
    std::vector<std::string> listen;
    unsigned grace_seconds = 600;
    std::string cache_max_size;  // "" = each job's cache-max-size
};

// What the kept snapshots of `job` hold (where its snapshots are: snapshot-dir, else beside its
// destination, as a sync's `snapshot =` takes them): cache-max-size never removes those.
Result<std::unordered_set<std::string>> job_snapshot_keys(const JobConfig& job) {
    auto root = snapshot_root_of_mirror(job.name, job.options.download_path, job.snapshot_dir,
                                        job.options.s3);
    if (!root) {
        return tl::unexpected(std::move(root.error()));
    }
    return *root ? snapshot_held_keys(**root) : std::unordered_set<std::string>{};
}

// The server's events on stderr: one line each, the access log included.
class ServePrinter final : public ServeEvents {
  public:
    void serving(std::string_view job, std::string_view location) override {
        fmt::print(stderr, "rpmirror: serving job '{}' from {}\n", job, location);
    }
    void listening(std::string_view address) override {
        fmt::print(stderr, "rpmirror: listening on http://{}/\n", address);
    }
    void warning(std::string_view message) override {
        fmt::print(stderr, "rpmirror: warning: {}\n", message);
    }
    void access(std::string_view line) override { fmt::print(stderr, "{}\n", line); }
};

int run_serve(const ServeArgs& args) {
    ::signal(SIGPIPE, SIG_IGN);  // a client gone mid-response is the connection's error only
    SignalStopper stopper;
    ServeRequest request;
    request.config_file = args.config_file;
    request.job_patterns = args.jobs;
    request.listen = args.listen;
    request.grace = std::chrono::seconds(args.grace_seconds);
    if (!args.cache_max_size.empty()) {
        const std::optional<std::uint64_t> bound = parse_byte_size(args.cache_max_size);
        if (!bound || *bound == 0) {
            fmt::print(stderr,
                       "rpmirror: serve: --cache-max-size '{}': not a size above 0 (10G, 500M)\n",
                       args.cache_max_size);
            return kExitUsage;
        }
        request.cache_max_size = *bound;
    }
    request.snapshot_keys = job_snapshot_keys;
    ServePrinter printer;
    auto served = run_server(request, printer, stopper.token());
    if (!served) {
        fmt::print(stderr, "rpmirror: {}\n", served.error().to_string());
        return served.error().code == ErrorCode::BadInput ? kExitUsage : kExitFailure;
    }
    return kExitOk;
}

}  // namespace

Command add_serve_command(CLI::App& parent) {
    auto args = std::make_shared<ServeArgs>();
    CLI::App* app = parent.add_subcommand(
        "serve", "serve the mirrors of rpmirror.conf's jobs over HTTP, each at /JOB/");
    app->add_option("--config-file", args->config_file,
                    "the rpmirror.conf whose jobs are served (default: " +
                        std::string(kDefaultJobsConfigFile) + ")")
        ->option_text("FILE");
    app->add_option("--job", args->jobs,
                    "only these jobs (globs; repeatable, comma lists; default: the enabled jobs)")
        ->option_text("GLOB")
        ->delimiter(',');
    app->add_option("--listen", args->listen,
                    "listen on ADDR:PORT (repeatable; default: [main] listen)")
        ->option_text("ADDR:PORT");
    app->add_option("--grace", args->grace_seconds,
                    "seconds the files of a replaced metadata revision are still served "
                    "(default: 600)")
        ->option_text("SECONDS");
    app->add_option("--cache-max-size", args->cache_max_size,
                    "keep the packages each on-demand job holds under SIZE (10G, 500M), removing "
                    "the least recently served (default: each job's cache-max-size)")
        ->option_text("SIZE");
    return {app, [args] { return run_serve(*args); }};
}

}  // namespace rpmirror::cli
