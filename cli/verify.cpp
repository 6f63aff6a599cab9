// `rpmirror verify`: audit mirrored repositories against their metadata (the audit stage), and
// repair them with the sync stage when asked.
#include <cstdio>
#include <string>
#include <string_view>

#include <fmt/core.h>

#include "command.hpp"
#include "output.hpp"
#include "repo_options.hpp"
#include "rpmirror/audit/verify.hpp"
#include "rpmirror/report/report.hpp"
#include "s3_options.hpp"

namespace rpmirror::cli {

namespace {

struct VerifyArgs {
    RepoSourceArgs sources;
    RunStateArgs state;
    std::vector<std::string> repo_patterns;
    std::string download_path = ".";
    bool remote = false;
    bool extra = false;
    bool no_cache = false;
    bool repair = false;
    bool quiet = false;
    unsigned threads = 0;
    std::string safe_write_path;
    std::string json_file;
    // The selection, overriding what the sync recorded field by field.
    std::vector<std::string> arches;
    bool source = false;
    bool newest_only = false;
    std::string keep_versions_text;
    CLI::Option* keep_versions_option = nullptr;
    std::string min_buildtime;
    bool all_packages = false;
    S3Args s3;
};

int usage_error(const std::string& message) {
    fmt::print(stderr, "rpmirror: {}\n", message);
    return kExitUsage;
}

// verify's output: each step as verify_mirror reports it.
class Printer final : public VerifyRunEvents {
  public:
    Printer(bool quiet, bool json_on_stdout)
        : quiet_(quiet), out_(json_on_stdout ? stderr : stdout) {}

    void selection(std::string_view repo_id, const SelectionOptions& selection,
                   std::string_view origin) override {
        if (!quiet_) {
            fmt::print(out_, "{}: selection: {} ({})\n", repo_id, describe_selection(selection),
                       origin);
        }
    }

    void audited(const RepoAuditReport& report, std::string_view stage) override {
        for (const std::string& line : format_audit_problems(report)) {
            fmt::print(out_, "{}\n", line);
        }
        if (!quiet_) {
            std::string summary = format_audit_summary(report);
            if (!stage.empty()) {
                summary.insert(report.repo_id.size() + 2, std::string(stage) + ": ");
            }
            fmt::print(out_, "{}\n", summary);
        }
    }

    void repaired(const RepoAuditReport& audit, const RepairReport& repair) override {
        for (const std::string& line : format_problems(repair.sync)) {
            fmt::print(stderr, "{}\n", line);
        }
        if (!quiet_ || !repair.ok()) {
            fmt::print(repair.ok() ? out_ : stderr, "{}\n", format_repair_summary(audit, repair));
        }
    }

    void repair_skipped(std::string_view repo_id, std::string_view reason) override {
        fmt::print(out_, "{}: repair: {}\n", repo_id, reason);
    }

    void source(std::string_view repo_id, std::string_view record) override {
        if (!quiet_) {
            fmt::print(out_,
                       "{}: source: recorded in {} (no .repo file or --repofrompath defines it)\n",
                       repo_id, record);
        }
    }

  private:
    bool quiet_;
    FILE* out_;
};

int run_verify(const VerifyArgs& args) {
    VerifyRunOptions request;
    if (args.keep_versions_option->count() > 0) {
        auto versions = parse_keep_versions(args.keep_versions_text);
        if (!versions) {
            return usage_error(versions.error().to_string());
        }
        request.selection.keep_versions = *versions;
    }
    if (!args.min_buildtime.empty()) {
        auto parsed = parse_min_build_time(args.min_buildtime);
        if (!parsed) {
            return usage_error(parsed.error().to_string());
        }
        request.selection.min_build_time = *parsed;
    }
    request.download_path = args.download_path;
    request.repo_patterns = args.repo_patterns;
    request.remote = args.remote;
    request.extra = args.extra;
    request.use_checksum_cache = !args.no_cache;
    request.repair = args.repair;
    request.threads = args.threads;
    request.safe_write_path = args.safe_write_path;
    if (!args.arches.empty()) {
        request.selection.arches = split_option_list(args.arches);
    }
    request.selection.source = args.source;
    request.selection.newest_only = args.newest_only;
    request.selection.all_packages = args.all_packages;
    apply_run_state_options(args.state, request.state_dir, request.lock_wait);
    request.s3 = s3_overrides(args.s3);
    request.load_sources = [&args] {
        return load_repo_sources(args.sources,
                                 args.quiet ? ConfigNoise::Quiet : ConfigNoise::Normal);
    };
    Printer print(args.quiet, args.json_file == "-");
    const VerifyRunOutcome outcome = verify_mirror(request, &print);
    if (outcome.refused) {
        return usage_error(*outcome.refused);
    }
    if (outcome.error) {
        fmt::print(stderr, "rpmirror: {}\n", outcome.error->to_string());
        return kExitFailure;
    }
    int exit_code = outcome.ok() ? kExitOk : kExitFailure;
    if (!args.json_file.empty() &&
        !write_report(args.json_file, format_audit_json(outcome.entries, exit_code))) {
        fmt::print(stderr, "rpmirror: {}: cannot write the JSON report\n", args.json_file);
        exit_code = kExitFailure;
    }
    return exit_code;
}

}  // namespace

Command add_verify_command(CLI::App& parent) {
    auto args = std::make_shared<VerifyArgs>();
    CLI::App* app = parent.add_subcommand(
        "verify",
        "Audit mirrored repositories against their metadata: missing, wrong size, wrong checksum.\n"
        "A mirror is audited (and repaired) with the selection its last `rpmirror sync` recorded\n"
        "(-a, --source, -n/--keep-versions, --min-buildtime, includepkgs/excludepkgs); a mirror "
        "made by dnf\n"
        "reposync has none recorded: every package its metadata lists must be there.");
    app->add_option("-p,--download-path", args->download_path,
                    "the mirror: repositories are <DIR>/<repoid>/ (default: .), or "
                    "s3://BUCKET/PREFIX (repositories s3://BUCKET/PREFIX/<repoid>/)");
    app->add_option("--repo,--repoid", args->repo_patterns,
                    "repository id (glob); repeatable (default: every <id>/repodata/ under DIR)");
    app->add_flag("--remote", args->remote,
                  "audit against the repository's current metadata instead of the mirror's own");
    app->add_flag("--extra", args->extra, "also report *.rpm files the metadata does not list");
    app->add_flag("--no-cache", args->no_cache,
                  "hash every file, ignoring the checksum cache in extended attributes");
    app->add_flag("--repair", args->repair,
                  "remove damaged files and sync the repository again (needs its source)");
    app->add_option("-j,--threads", args->threads, "hashing threads (default: all cores)")
        ->check(CLI::Range(1U, 1024U));
    app->add_option("--safe-write-path", args->safe_write_path,
                    "directory packages may live in outside the repository directory");
    app->add_flag("-q,--quiet", args->quiet, "print problems only");
    app->add_option("--json", args->json_file, "write a JSON report to FILE ('-': stdout)");
    app->add_option("-a,--arch", args->arches,
                    "the mirror holds only these arches (comma lists, repeatable); overrides the "
                    "selection its sync recorded");
    app->add_flag("--source", args->source, "the mirror holds only source packages (overrides)");
    CLI::Option* newest_only = app->add_flag(
        "-n,--newest-only", args->newest_only,
        "the mirror holds only the newest packages, module streams as dnf (overrides)");
    args->keep_versions_option =
        app->add_option("--keep-versions", args->keep_versions_text,
                        "the mirror holds only the newest N versions of each name.arch "
                        "(overrides; not with -n)")
            ->type_name("N")
            ->excludes(newest_only);
    app->add_option("--min-buildtime", args->min_buildtime,
                    "the mirror holds only packages built since YYYY-MM-DD (overrides)");
    app->add_flag("--all-packages", args->all_packages,
                  "ignore the recorded selection: every package the metadata lists");
    add_run_state_options(*app, args->state);
    add_repo_source_options(*app, args->sources);
    add_s3_options(*app, args->s3, /*transfer=*/false);
    return Command{app, [args] { return run_verify(*args); }};
}

}  // namespace rpmirror::cli
