// `rpmirror verify`: audit mirrored repositories against their metadata (the audit stage), and
// repair them with the sync stage when asked.
#include <fnmatch.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <optional>
#include <set>
#include <variant>

#include <fmt/core.h>

#include "command.hpp"
#include "output.hpp"
#include "repo_options.hpp"
#include "rpmirror/audit.hpp"
#include "rpmirror/report.hpp"
#include "rpmirror/s3_audit.hpp"
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
    std::optional<std::uint32_t> keep_versions;  // --keep-versions N, parsed by run_verify
    std::string keep_versions_text;
    CLI::Option* keep_versions_option = nullptr;
    std::string min_buildtime;
    bool all_packages = false;
    S3Args s3;
};

// The selection to audit `repo_dir` with: the one its last sync recorded (unless --all-packages),
// then each filter given on the command line in place of the recorded one. `origin` says where
// it came from, for the output.
// `recorded` is what the mirror's state holds (nullopt with --all-packages).
SelectionOptions choose_selection(const VerifyArgs& args,
                                  const std::optional<RecordedSelection>& recorded,
                                  std::int64_t min_build_time, std::string& origin) {
    SelectionOptions selection;
    if (recorded) {
        selection = recorded->options;
        origin = "recorded by sync";
    } else {
        origin = args.all_packages ? "--all-packages"
                                   : "no selection recorded: not mirrored by rpmirror sync";
    }
    bool overridden = false;
    if (!args.arches.empty()) {
        selection.arches = split_option_list(args.arches);
        selection.source_only = false;
        overridden = true;
    }
    if (args.source) {
        selection.source_only = true;
        overridden = true;
    }
    if (args.newest_only || args.keep_versions) {
        selection.newest_only = true;
        selection.keep_versions = args.keep_versions.value_or(1);
        overridden = true;
    }
    if (!args.min_buildtime.empty()) {
        selection.min_build_time = min_build_time;
        overridden = true;
    }
    if (overridden) {
        origin += recorded ? ", overridden by the command line" : "; from the command line";
    }
    return selection;
}

// One repository to verify, and where it comes from (needed for --remote and --repair).
struct Target {
    std::string id;
    std::optional<RepoConfig> config;
};

// Returns the ids of the repositories mirrored under `dir`: real directories (not symlinks) with
// a valid repo id as name and a repodata/repomd.xml inside, sorted.
std::vector<std::string> discover_repositories(const std::filesystem::path& dir) {
    std::vector<std::string> ids;
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
        const std::string name = entry.path().filename().string();
        std::error_code ignored;
        if (entry.is_directory(ignored) && !entry.is_symlink(ignored) && is_valid_repo_id(name) &&
            std::filesystem::is_regular_file(entry.path() / "repodata" / "repomd.xml", ignored)) {
            ids.push_back(name);
        }
    }
    std::sort(ids.begin(), ids.end());
    return ids;
}

bool matches_any(const std::string& id, const std::vector<std::string>& patterns) {
    return std::any_of(patterns.begin(), patterns.end(), [&id](const std::string& pattern) {
        return ::fnmatch(pattern.c_str(), id.c_str(), 0) == 0;
    });
}

std::optional<RepoConfig> find_config(const std::vector<RepoConfig>& configs,
                                      const std::string& id) {
    for (const RepoConfig& config : configs) {
        if (config.id == id) {
            return config;
        }
    }
    return std::nullopt;
}

Error no_source_error(const std::string& id) {
    return Error{ErrorCode::BadInput,
                 "no source is configured for this repository (give --repofrompath " + id +
                     ",URL, or a .repo file with -c/--reposdir)",
                 id, 0};
}

int usage_error(const std::string& message) {
    fmt::print(stderr, "rpmirror: {}\n", message);
    return kExitUsage;
}

// Chooses the repositories to verify; returns the exit code of a usage error instead iff the
// command line names nothing verifiable.
std::variant<std::vector<Target>, int> choose_targets(const VerifyArgs& args,
                                                      const std::filesystem::path& dir,
                                                      const std::vector<RepoConfig>& configs) {
    const std::vector<std::string> discovered = discover_repositories(dir);
    std::vector<Target> targets;
    if (!args.remote) {
        for (const std::string& pattern : args.repo_patterns) {
            if (std::none_of(discovered.begin(), discovered.end(), [&](const std::string& id) {
                    return ::fnmatch(pattern.c_str(), id.c_str(), 0) == 0;
                })) {
                return usage_error(fmt::format(
                    "--repo '{}' matches no repository under {} (no <id>/repodata/repomd.xml)",
                    pattern, dir.string()));
            }
        }
        for (const std::string& id : discovered) {
            if (args.repo_patterns.empty() || matches_any(id, args.repo_patterns)) {
                targets.push_back({id, find_config(configs, id)});
            }
        }
        if (targets.empty()) {
            return usage_error(fmt::format(
                "no repository under {} (no <id>/repodata/repomd.xml); use -p DIR", dir.string()));
        }
        return targets;
    }
    if (!args.repo_patterns.empty()) {
        auto selected = select_repos(configs, args.repo_patterns);
        if (!selected) {
            return usage_error(selected.error().to_string());
        }
        for (RepoConfig& config : *selected) {
            std::string id = config.id;
            targets.push_back({std::move(id), std::move(config)});
        }
        return targets;
    }
    for (const std::string& id : discovered) {
        targets.push_back({id, find_config(configs, id)});
    }
    for (const RepoConfig& config : configs) {
        const bool listed = std::any_of(targets.begin(), targets.end(), [&](const Target& target) {
            return target.id == config.id;
        });
        if (!listed && config.defined_at.file == "--repofrompath") {
            targets.push_back({config.id, config});
        }
    }
    if (targets.empty()) {
        return usage_error(
            fmt::format("nothing to verify: no repository under {} and no --repo or --repofrompath",
                        dir.string()));
    }
    return targets;
}

class Printer {
  public:
    Printer(bool quiet, bool json_on_stdout)
        : quiet_(quiet), out_(json_on_stdout ? stderr : stdout) {}

    void audit(const RepoAuditReport& report, std::string_view stage = {}) const {
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

    void repair(const RepoAuditReport& audit, const RepairReport& repair) const {
        for (const std::string& line : format_problems(repair.sync)) {
            fmt::print(stderr, "{}\n", line);
        }
        if (!quiet_ || !repair.ok()) {
            fmt::print(repair.ok() ? out_ : stderr, "{}\n", format_repair_summary(audit, repair));
        }
    }

    void line(const std::string& text) const { fmt::print(out_, "{}\n", text); }

  private:
    bool quiet_;
    FILE* out_;
};

// Writes the --json report (iff asked for); returns `exit_code`, or kExitFailure iff it cannot.
int write_json_report(const VerifyArgs& args, const std::vector<AuditRunEntry>& entries,
                      int exit_code) {
    if (!args.json_file.empty() &&
        !write_report(args.json_file, format_audit_json(entries, exit_code))) {
        fmt::print(stderr, "rpmirror: {}: cannot write the JSON report\n", args.json_file);
        exit_code = kExitFailure;
    }
    return exit_code;
}

// `verify -p s3://BUCKET/PREFIX`: each repository s3://BUCKET/PREFIX/<id>/ audited in the store
// (rpmirror/s3_audit.hpp), and repaired with the S3 sync when asked.
int run_verify_s3(const VerifyArgs& args, std::int64_t min_build_time) {
    if (args.remote || !args.safe_write_path.empty()) {
        return usage_error(
            fmt::format("{}: --remote and --safe-write-path are not supported on "
                        "an s3:// mirror",
                        args.download_path));
    }
    auto mirror = s3::S3Location::parse(args.download_path);
    if (!mirror) {
        return usage_error(mirror.error().to_string());
    }
    auto config = s3::resolve_config(s3_overrides(args.s3), s3::process_environment());
    if (!config) {
        return usage_error(config.error().to_string());
    }
    std::vector<RepoConfig> configs;
    if (args.repair) {
        auto loaded =
            load_repo_sources(args.sources, args.quiet ? ConfigNoise::Quiet : ConfigNoise::Normal);
        if (!loaded) {
            return usage_error(loaded.error().to_string());
        }
        configs = std::move(*loaded);
    }
    auto discovered = discover_s3_repositories(*config, *mirror);
    if (!discovered) {
        fmt::print(stderr, "rpmirror: {}\n", discovered.error().to_string());
        return kExitFailure;
    }
    std::vector<std::string> ids;
    for (const std::string& pattern : args.repo_patterns) {
        if (std::none_of(discovered->begin(), discovered->end(), [&](const std::string& id) {
                return ::fnmatch(pattern.c_str(), id.c_str(), 0) == 0;
            })) {
            return usage_error(
                fmt::format("--repo '{}' matches no repository under {} (no "
                            "<id>/repodata/repomd.xml or <id>/.rpmirror/state.json)",
                            pattern, mirror->to_string()));
        }
    }
    for (const std::string& id : *discovered) {
        if (args.repo_patterns.empty() || matches_any(id, args.repo_patterns)) {
            ids.push_back(id);
        }
    }
    if (ids.empty()) {
        return usage_error(
            fmt::format("no repository under {} (no <id>/repodata/repomd.xml or "
                        "<id>/.rpmirror/state.json)",
                        mirror->to_string()));
    }
    std::optional<Syncer> syncer;
    if (args.repair) {
        syncer.emplace();
    }
    S3AuditOptions base_options;
    base_options.use_state = !args.no_cache;
    base_options.report_extra = args.extra;
    base_options.threads = args.threads;
    const Printer print(args.quiet, args.json_file == "-");
    std::vector<AuditRunEntry> entries;
    int exit_code = kExitOk;
    for (const std::string& id : ids) {
        const s3::S3Location repo{mirror->bucket, mirror->prefix + id + "/"};
        S3AuditOptions options = base_options;
        std::string selection_origin;
        std::optional<RecordedSelection> recorded;
        if (!args.all_packages) {
            auto from_state = recorded_s3_selection(*config, repo);
            if (from_state) {
                recorded = std::move(*from_state);
            }  // an unreadable state is the audit's error, below
        }
        options.selection = choose_selection(args, recorded, min_build_time, selection_origin);
        if (!args.quiet) {
            print.line(fmt::format("{}: selection: {} ({})", id,
                                   describe_selection(options.selection), selection_origin));
        }
        AuditRunEntry entry;
        entry.audit = audit_s3_repository(id, *config, repo, options);
        print.audit(entry.audit);
        bool is_ok = entry.audit.ok();
        if (args.repair && !is_ok) {
            const std::optional<RepoConfig> source = find_config(configs, id);
            if (!source) {
                print.line(fmt::format("{}: repair: FAILED: {}", id, no_source_error(id).message));
            } else {
                S3RepairOptions repair_options;
                repair_options.download_path = args.download_path;
                repair_options.s3 = s3_overrides(args.s3);
                repair_options.selection = options.selection;
                repair_options.threads = args.threads;
                std::filesystem::path unused_state_dir;  // the lease is in the bucket
                apply_run_state_options(args.state, unused_state_dir, repair_options.lock_wait);
                entry.repair = repair_s3_repository(*syncer, *source, *config, repo, entry.audit,
                                                    repair_options);
                print.repair(entry.audit, *entry.repair);
                entry.after = audit_s3_repository(id, *config, repo, options);
                print.audit(*entry.after, "after repair");
                is_ok = entry.repair->ok() && entry.after->ok();
            }
        }
        if (!is_ok) {
            exit_code = kExitFailure;
        }
        entries.push_back(std::move(entry));
    }
    return write_json_report(args, entries, exit_code);
}

int run_verify(VerifyArgs& args) {
    if (args.keep_versions_option->count() > 0) {
        auto versions = parse_keep_versions(args.keep_versions_text);
        if (!versions) {
            return usage_error(versions.error().to_string());
        }
        args.keep_versions = *versions;
    }
    std::int64_t min_build_time = 0;
    if (!args.min_buildtime.empty()) {
        auto parsed = parse_min_build_time(args.min_buildtime);
        if (!parsed) {
            return usage_error(parsed.error().to_string());
        }
        min_build_time = *parsed;
    }
    if (s3::is_s3_url(args.download_path)) {
        return run_verify_s3(args, min_build_time);
    }
    const std::filesystem::path dir = args.download_path;
    std::error_code ignored;
    if (!std::filesystem::is_directory(dir, ignored)) {
        return usage_error(fmt::format("{}: not a directory (-p)", dir.string()));
    }
    std::vector<RepoConfig> configs;
    if (args.remote || args.repair) {
        auto loaded =
            load_repo_sources(args.sources, args.quiet ? ConfigNoise::Quiet : ConfigNoise::Normal);
        if (!loaded) {
            return usage_error(loaded.error().to_string());
        }
        configs = std::move(*loaded);
    }
    auto chosen = choose_targets(args, dir, configs);
    if (const int* exit_code = std::get_if<int>(&chosen)) {
        return *exit_code;
    }
    const std::vector<Target>& targets = std::get<std::vector<Target>>(chosen);

    AuditOptions base_options;
    base_options.use_checksum_cache = !args.no_cache;
    base_options.report_extra = args.extra;
    base_options.threads = args.threads;
    if (!args.safe_write_path.empty()) {
        base_options.safe_write_path = std::filesystem::absolute(args.safe_write_path);
    }
    std::optional<Syncer> syncer;
    if (args.remote || args.repair) {
        syncer.emplace();
    }
    const Printer print(args.quiet, args.json_file == "-");
    std::vector<AuditRunEntry> entries;
    int exit_code = kExitOk;
    for (const Target& target : targets) {
        const std::filesystem::path repo_dir = dir / target.id;
        AuditOptions options = base_options;
        std::string selection_origin;
        std::optional<RecordedSelection> recorded;
        if (!args.all_packages) {
            recorded = recorded_selection(args.state.state_dir.empty()
                                              ? std::filesystem::path()
                                              : std::filesystem::absolute(args.state.state_dir),
                                          repo_dir);
        }
        options.selection = choose_selection(args, recorded, min_build_time, selection_origin);
        if (!args.quiet) {
            print.line(fmt::format("{}: selection: {} ({})", target.id,
                                   describe_selection(options.selection), selection_origin));
        }
        std::optional<RemoteMetadata> remote;
        std::optional<Error> setup_error;
        if (args.remote) {
            if (!target.config) {
                setup_error = no_source_error(target.id);
            } else if (auto fetched = RemoteMetadata::fetch(*syncer, *target.config); !fetched) {
                setup_error = std::move(fetched.error());
            } else {
                remote.emplace(std::move(*fetched));
                options.reference_root = remote->root();
                // The configuration's includepkgs/excludepkgs, once each (a recorded selection
                // already has those the sync used).
                for (const std::string& glob : target.config->includepkgs) {
                    if (std::find(options.selection.include_globs.begin(),
                                  options.selection.include_globs.end(),
                                  glob) == options.selection.include_globs.end()) {
                        options.selection.include_globs.push_back(glob);
                    }
                }
                for (const std::string& glob : target.config->excludepkgs) {
                    if (std::find(options.selection.exclude_globs.begin(),
                                  options.selection.exclude_globs.end(),
                                  glob) == options.selection.exclude_globs.end()) {
                        options.selection.exclude_globs.push_back(glob);
                    }
                }
            }
        }
        AuditRunEntry entry;
        if (setup_error) {
            entry.audit.repo_id = target.id;
            entry.audit.repo_dir = repo_dir;
            entry.audit.error = std::move(setup_error);
        } else {
            entry.audit = audit_repository(target.id, repo_dir, options);
        }
        print.audit(entry.audit);
        bool is_ok = entry.audit.ok();
        if (args.repair && !is_ok) {
            if (!target.config) {
                print.line(fmt::format("{}: repair: FAILED: {}", target.id,
                                       no_source_error(target.id).message));
            } else if (args.remote && !remote) {
                print.line(
                    fmt::format("{}: repair: not attempted (the repository's metadata "
                                "could not be fetched)",
                                target.id));
            } else {
                RepairOptions repair_options;
                repair_options.download_path = dir;
                repair_options.safe_write_path = options.safe_write_path;
                repair_options.use_checksum_cache = !args.no_cache;
                repair_options.threads = args.threads;
                repair_options.selection = options.selection;
                apply_run_state_options(args.state, repair_options.state_dir,
                                        repair_options.lock_wait);
                entry.repair =
                    repair_repository(*syncer, *target.config, entry.audit, repair_options);
                print.repair(entry.audit, *entry.repair);
                entry.after = audit_repository(target.id, repo_dir, options);
                print.audit(*entry.after, "after repair");
                is_ok = entry.repair->ok() && entry.after->ok();
            }
        }
        if (!is_ok) {
            exit_code = kExitFailure;
        }
        entries.push_back(std::move(entry));
    }
    return write_json_report(args, entries, exit_code);
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
                        "(overrides)")
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
