// `rpmirror sync` (alias `reposync`): dnf reposync's command line over the sync stage.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>
#include <stop_token>
#include <thread>

#include <fmt/core.h>
#include <fmt/format.h>

#include "command.hpp"
#include "jobs.hpp"
#include "output.hpp"
#include "repo_options.hpp"
#include "reposync_output.hpp"
#include "rpmirror/config/config.hpp"
#include "rpmirror/index/selection.hpp"
#include "rpmirror/jobs/jobs.hpp"
#include "rpmirror/report/report.hpp"
#include "rpmirror/run/sync_jobs.hpp"
#include "rpmirror/run/sync_run.hpp"
#include "rpmirror/sync/sync_options.hpp"
#include "rpmirror/sync/sync_report.hpp"
#include "s3_options.hpp"
#include "signal_stopper.hpp"
#include "snapshot.hpp"
#include "sync.hpp"
#include "unattended.hpp"

namespace rpmirror::cli {

namespace {

// Returns true iff the command was typed as `rpmirror reposync` (the alias that speaks dnf's
// language): the first argument after the program that is not an option.
bool invoked_as_reposync() {
    std::ifstream cmdline("/proc/self/cmdline", std::ios::binary);
    std::string argument;
    bool is_program = true;
    while (std::getline(cmdline, argument, '\0')) {
        if (is_program) {
            is_program = false;
            continue;
        }
        if (!argument.starts_with("-")) {
            return argument == "reposync";
        }
    }
    return false;
}

// --enablerepo and --disablerepo values in command-line order (comma lists split).
std::vector<RepoSelection::Toggle> repo_toggles(const SyncArgs& args) {
    std::vector<RepoSelection::Toggle> toggles;
    std::size_t enable_index = 0;
    std::size_t disable_index = 0;
    const auto add = [&](bool enable, const std::string& value) {
        for (std::string& pattern : split_option_list({value})) {
            toggles.push_back({enable, std::move(pattern)});
        }
    };
    for (const CLI::Option* option : args.app->parse_order()) {
        if (option == args.enablerepo_option && enable_index < args.enablerepo.size()) {
            add(true, args.enablerepo[enable_index++]);
        } else if (option == args.disablerepo_option && disable_index < args.disablerepo.size()) {
            add(false, args.disablerepo[disable_index++]);
        }
    }
    return toggles;
}

// dnf mode's request: the repositories, the packages, what every repository's job shares.
RepositoryRunRequest repository_request(const SyncArgs& args, const SyncOptions& options) {
    RepositoryRunRequest request;
    RepositoryRequest& repositories = request.repositories;
    repositories.sources = args.sources;
    repositories.ip_resolve = args.ipv4_only ? "4" : args.ipv6_only ? "6" : "";
    repositories.toggles = repo_toggles(args);
    repositories.repo_patterns = split_option_list(args.repo_patterns);
    repositories.source = args.source;
    repositories.nogpgcheck = args.nogpgcheck;
    repositories.download_path = args.download_path;
    repositories.state_dir = args.state.state_dir;
    repositories.norepopath = args.norepopath;
    repositories.s3 = s3_overrides(args.s3);
    PackageRequest& packages = request.packages;
    packages.specs = split_option_list(args.packages);
    packages.packages_file = args.packages_file;
    packages.with_dependencies = args.with_dependencies;
    packages.weak_dependencies = !args.no_weak_dependencies;
    packages.installed_base = args.installed_base;
    packages.modules = split_option_list(args.modules);
    packages.closure_repos = split_option_list(args.closure_repos);
    request.each.options = options;
    if (args.parallel > 0) {
        request.each.options.parallel = args.parallel;
    }
    add_sync_snapshot(args.snapshots, request.each);
    return request;
}

Result<SyncOptions> sync_options_from(const SyncArgs& args) {
    SyncOptions options;
    options.download_path = args.download_path;
    if (!args.metadata_path.empty()) {
        options.metadata_path = args.metadata_path;
    }
    options.norepopath = args.norepopath;
    if (auto applied = apply_s3_options(args.s3, options); !applied) {
        return tl::unexpected(std::move(applied.error()));
    }
    options.download_metadata = args.download_metadata;
    options.upstream_metadata = args.upstream_metadata;
    options.publish_partial = args.publish_partial;
    auto policy = parse_download_policy(args.download_policy, "--download-policy");
    if (!policy) {
        return tl::unexpected(std::move(policy.error()));
    }
    options.download_policy = *policy;
    if (args.prefetch) {
        auto prefetch = parse_prefetch(*args.prefetch, "--prefetch");
        if (!prefetch) {
            return tl::unexpected(std::move(prefetch.error()));
        }
        options.prefetch = std::move(*prefetch);
    }
    options.sign_key = args.sign_key;
    options.delete_unlisted = args.delete_unlisted;
    options.force_delete = args.force_delete;
    options.urls_only = args.urls;
    options.download_comps = args.download_comps;
    options.remote_time = args.remote_time;
    options.use_checksum_cache = !args.no_cache;
    options.zchunk = args.zchunk != "off";
    options.connections_per_file = args.connections_per_file;
    options.segment_min_size = args.segment_min_size;
    if (!args.safe_write_path.empty()) {
        options.safe_write_path = std::filesystem::absolute(args.safe_write_path);
    }
    options.upstream_layout = args.upstream_layout;
    options.mirror_url = args.mirror_url;
    options.keep_releases = args.keep_releases;
    options.flatten_hrefs = args.flatten_hrefs;
    options.treeinfo = args.treeinfo;
    options.skip_bad_images = args.skip_bad_images;
    if (auto layout = check_placement_options(options); !layout) {
        return tl::unexpected(std::move(layout.error()));
    }
    options.dedupe = *parse_dedupe_mode(args.dedupe);  // CLI::IsMember checked it
    for (const std::string& directory : args.dedupe_dirs) {
        options.dedupe_dirs.push_back(std::filesystem::absolute(directory));
    }
    options.selection.arches = split_option_list(args.arches);
    options.selection.source_only = args.source;
    options.selection.newest_only = args.newest_only;
    if (args.keep_versions_option != nullptr && args.keep_versions_option->count() > 0) {
        auto versions = parse_keep_versions(args.keep_versions);
        if (!versions) {
            return tl::unexpected(std::move(versions.error()));
        }
        options.selection.newest_only = true;
        options.selection.keep_versions = *versions;
    }
    options.check_package_signatures = args.gpgcheck && !args.nogpgcheck;
    options.package_keys =
        args.gpgcheck_keys == "repo" ? PackageKeySource::Repository : PackageKeySource::Rpmdb;
    options.installroot = installroot_of(args.sources);
    apply_run_state_options(args.state, options.state_dir, options.lock_wait);
    if (!args.min_buildtime.empty()) {
        auto floor = parse_min_build_time(args.min_buildtime);
        if (!floor) {
            return tl::unexpected(std::move(floor.error()));
        }
        options.selection.min_build_time = *floor;
    }
    for (const std::string& words : args.advisories) {
        if (auto parsed = parse_advisories(words, options.selection.advisories); !parsed) {
            return tl::unexpected(std::move(parsed.error()));
        }
    }
    for (const std::string& words : args.advisory_severities) {
        if (auto parsed = parse_advisory_severities(words, options.selection.advisories); !parsed) {
            return tl::unexpected(std::move(parsed.error()));
        }
    }
    if (!args.as_of.empty()) {
        auto as_of = parse_as_of(args.as_of);
        if (!as_of) {
            return tl::unexpected(std::move(as_of.error()));
        }
        options.selection.as_of = *as_of;
    }
    return options;
}

int run_sync(const SyncArgs& args) {
    if (job_mode_requested(args.job_mode)) {
        const SignalStopper stopper;
        const int exit_code =
            run_job_mode(*args.app, args.job_mode,
                         {args.quiet, args.verbose, args.no_cache, args.parallel, args.json_file,
                          &args.state, &args.unattended, &args.s3},
                         stopper.token());
        return stopper.exit_code() != 0 ? stopper.exit_code() : exit_code;
    }
    const bool as_dnf = invoked_as_reposync();
    if (args.cacheonly) {
        fmt::print(stderr,
                   "rpmirror: -C/--cacheonly: a mirror cannot be made from dnf's metadata cache; "
                   "rpmirror always fetches the repositories' current metadata\n");
        return kExitUsage;
    }
    auto options = sync_options_from(args);
    if (!options) {
        print_error(options.error());
        return kExitUsage;
    }
    const auto shard = shard_from_command_line(args.job_mode);
    if (!shard) {
        print_error(shard.error());
        return kExitUsage;
    }
    RepositoryRunRequest request = repository_request(args, *options);
    request.allow_none = as_dnf;  // (`reposync` stays silent, as dnf's does.)
    SetupLines setup(args.quiet, args.verbose);
    auto jobs = repository_run_jobs(request, &setup);
    if (!jobs) {
        const RepositoryRunRefusal& refusal = jobs.error();
        if (refusal.step == RepositoryRunRefusal::Step::Loading && as_dnf) {
            // dnf: "Error: Unknown repo: 'x'." and the like, exit 1 (its own usage errors only,
            // from argparse, exit 2).
            fmt::print(stderr, "Error: {}\n", refusal.error.to_string());
            return kExitFailure;
        }
        if (refusal.step == RepositoryRunRefusal::Step::Norepopath) {
            // dnf 4 reposync's words and exit status.
            fmt::print(stderr, "Error: {}\n", refusal.error.message);
            return kExitFailure;
        }
        print_error(refusal.error);
        return kExitUsage;
    }
    SyncRun run;
    run.kind = RunKind::Repositories;
    run.jobs = std::move(*jobs);
    run.shard = *shard;
    run.runner.parallel_jobs = 1;  // one repository after the other, as dnf
    run.on_change = args.unattended.on_change;
    run.metrics_file = args.urls ? "" : args.unattended.metrics_file;
    const bool json_on_stdout = args.json_file == "-";
    DnfModeLines lines(args, as_dnf, json_on_stdout ? stderr : stdout);
    SignalStopper stopper;
    SyncRunResult result = rpmirror::run_sync(std::move(run), &lines, stopper.token());
    if (result.overlap) {
        print_error(*result.overlap);
        return kExitUsage;
    }
    if (result.closure_failed) {
        print_error(*result.closure_failed);
        return stopper.exit_code() != 0 ? stopper.exit_code() : kExitFailure;
    }
    // Repositories not started (interrupted) are left out, as if not asked for.
    std::erase_if(result.outcomes,
                  [](const JobOutcome& outcome) { return outcome.report.repo_id.empty(); });
    lines.finish();
    std::vector<RepoSyncReport> reports;
    for (const JobOutcome& outcome : result.outcomes) {
        reports.push_back(outcome.report);
    }
    int exit_code = lines.exit_code();
    if (result.metrics_error) {
        print_error(*result.metrics_error);
        exit_code = worse_exit_code(exit_code, kExitFailure);
    }
    if (stopper.exit_code() != 0) {
        exit_code = stopper.exit_code();
    }
    if (!args.json_file.empty() &&
        !write_report(args.json_file, format_json_report(reports, exit_code))) {
        fmt::print(stderr, "rpmirror: {}: cannot write the JSON report\n", args.json_file);
        exit_code = worse_exit_code(exit_code, kExitFailure);
    }
    return exit_code;
}

}  // namespace

Command add_sync_command(CLI::App& parent) {
    auto args = std::make_shared<SyncArgs>();
    CLI::App* app = parent.add_subcommand(
        "sync", "Mirror repositories (dnf reposync's options); metadata is published last");
    app->alias("reposync");
    args->app = app;
    app->add_option("--repo,--repoid", args->repo_patterns,
                    "only these repositories (globs; repeatable, comma lists): disables all "
                    "others, as dnf");
    args->enablerepo_option =
        app->add_option("--enablerepo", args->enablerepo,
                        "enable repositories (globs; repeatable, comma lists; in order with "
                        "--disablerepo)")
            ->expected(1);
    args->disablerepo_option =
        app->add_option("--disablerepo", args->disablerepo,
                        "disable repositories (globs; repeatable, comma lists; in order with "
                        "--enablerepo)")
            ->expected(1);
    app->add_flag("--nogpgcheck", args->nogpgcheck,
                  "turn gpgcheck and repo_gpgcheck off for every repository (and -g off)");
    app->add_flag("--refresh", args->refresh,
                  "accepted for dnf's sake: rpmirror always fetches current metadata");
    app->add_flag("-C,--cacheonly", args->cacheonly,
                  "refused (exit 2): a mirror is never made from dnf's metadata cache");
    CLI::Option* ipv4 =
        app->add_flag("-4", args->ipv4_only, "resolve to IPv4 addresses only (ip_resolve=4)");
    app->add_flag("-6", args->ipv6_only,
                  "resolve to IPv6 addresses only (ip_resolve=6; not with -4)")
        ->excludes(ipv4);
    constexpr const char* kNoMeaning = "accepted for dnf's sake; no effect on a mirror";
    app->add_flag("-y,--assumeyes", args->assume_yes, kNoMeaning);
    app->add_flag("--assumeno", args->assume_no, kNoMeaning);
    app->add_flag("--noplugins", args->no_plugins, kNoMeaning);
    app->add_option("--enableplugin,--disableplugin", args->plugin_patterns, kNoMeaning);
    app->add_option("-d,--debuglevel", args->debug_level, kNoMeaning);
    app->add_option("-e,--errorlevel", args->error_level, kNoMeaning);
    app->add_option("--color", args->color, kNoMeaning);
    add_repo_source_options(*app, args->sources);
    app->add_option("-p,--download-path", args->download_path,
                    "where repositories are mirrored (default: .)");
    app->add_flag("--norepopath", args->norepopath,
                  "no <repoid> directory (only with one repository)");
    app->add_option("--metadata-path", args->metadata_path,
                    "where repodata/ goes (default: the download path)");
    add_s3_options(*app, args->s3, true);
    CLI::Option* download_metadata =
        app->add_flag("--download-metadata", args->download_metadata,
                      "also mirror the metadata, published atomically after the packages");
    CLI::Option* upstream_metadata =
        app->add_flag("--upstream-metadata", args->upstream_metadata,
                      "with filters, publish upstream's metadata verbatim (it lists packages the "
                      "mirror lacks) instead of metadata listing exactly the mirrored packages");
    app->add_option("--sign-key", args->sign_key,
                    "sign a rewritten repomd.xml with this key of the gpg keyring "
                    "(repomd.xml.asc)")
        ->option_text("KEYID")
        ->needs(download_metadata)
        ->excludes(upstream_metadata);
    app->add_flag("--publish-partial", args->publish_partial,
                  "when packages fail, publish metadata listing exactly the packages in place "
                  "instead of keeping the previous metadata (exit 3; the next run fetches the "
                  "failed ones again)")
        ->needs(download_metadata)
        ->excludes(upstream_metadata);
    app->add_option("--download-policy", args->download_policy,
                    "immediate (default), on-demand (fetch and publish the metadata only: "
                    "`rpmirror serve` fetches each package at its first request and keeps it) "
                    "or streamed (as on-demand, nothing kept)")
        ->option_text("POLICY");
    app->add_option("--prefetch", args->prefetch,
                    "with --download-policy on-demand: fetch these packages all the same, "
                    "'newest' (the newest version of each name.arch), 'closure' (the closure of "
                    "--with-dependencies) or package names/globs separated by commas; the rest "
                    "are fetched on demand")
        ->option_text("WHAT");
    CLI::Option* delete_option = app->add_flag("--delete", args->delete_unlisted,
                                               "remove local packages that are no longer selected");
    app->add_flag("--force-delete", args->force_delete,
                  "with --delete: delete even when the run selects no package, or fewer than "
                  "half of the 20 or more the mirror holds (refused otherwise, exit 2)")
        ->needs(delete_option);
    CLI::Option* newest_only = app->add_flag("-n,--newest-only", args->newest_only,
                                             "only the newest version of each name.arch");
    // A separate option, not --newest-only=N: dnf's -n is a flag, and a flag taking an optional
    // value would read `-n 3` as -n and a stray positional argument.
    args->keep_versions_option =
        app->add_option("--keep-versions", args->keep_versions,
                        "only the newest N versions of each name.arch (module streams: the N "
                        "newest versions); -n is 1 (not with -n)")
            ->type_name("N")
            ->excludes(newest_only);
    app->add_option("-a,--arch", args->arches, "only these arches (repeatable, comma lists)");
    app->add_flag("--source", args->source,
                  "only source packages; also enables the <repoid>-source repositories");
    app->add_flag("--remote-time", args->remote_time,
                  "give downloaded files the server's Last-Modified time");
    app->add_flag("-m,--downloadcomps", args->download_comps,
                  "also write the comps file, uncompressed, as comps.xml beside repodata/");
    app->add_option("--safe-write-path", args->safe_write_path,
                    "directory packages may be written to outside the repository directory");
    app->add_flag("--upstream-layout", args->upstream_layout,
                  "keep upstream's paths under <path>/<repoid>/, packages beside the repository "
                  "included (Amazon Linux's shared blobstore)");
    app->add_option("--mirror-url", args->mirror_url,
                    "with --upstream-layout: the URL clients reach <path>/<repoid>/ at; the "
                    "repository's mirrorlist is rewritten in the mirror to name it");
    app->add_option("--keep-releases", args->keep_releases,
                    "with --upstream-layout --delete: keep this release and the N-1 others synced "
                    "most recently beneath <path>/<repoid>/; remove the rest and their blobs")
        ->check(CLI::Range(1U, 1000000U));
    app->add_flag("--flatten-hrefs", args->flatten_hrefs,
                  "place packages whose hrefs leave the repository inside it, and publish "
                  "metadata naming them there (a self-contained repository)");
    app->add_flag("--treeinfo", args->treeinfo,
                  "the URL is an installation tree: mirror its .treeinfo, the images it lists "
                  "(verified) and its variant and addon repositories");
    app->add_flag("--skip-bad-images", args->skip_bad_images,
                  "with --treeinfo: an image that cannot be had with its checksum is a warning");
    app->add_option("--dedupe", args->dedupe,
                    "packages other repositories of the download path (and --dedupe-dir) "
                    "already hold: hardlink (default), reflink or off (download them)")
        ->check(CLI::IsMember({"hardlink", "reflink", "off"}));
    app->add_option("--dedupe-dir", args->dedupe_dirs,
                    "another tree searched for packages to link instead of downloading "
                    "(repeatable)");
    app->add_flag("-u,--urls", args->urls, "print the URLs that would be downloaded, and stop");
    app->add_option("--min-buildtime", args->min_buildtime,
                    "only packages built at or after YYYY-MM-DD (or seconds since the epoch)");
    app->add_option("--advisories", args->advisories,
                    "only packages of these advisories: security, bugfix, enhancement, "
                    "newpackage or advisory IDs (repeatable, comma lists; needs updateinfo)");
    app->add_option("--advisory-severity", args->advisory_severities,
                    "only packages of advisories of these severities: Low, Moderate, Important, "
                    "Critical (repeatable, comma lists)");
    app->add_option("--as-of", args->as_of,
                    "the repository as it stood on YYYY-MM-DD: packages built and advisories "
                    "issued by the end of that day");
    app->add_option("--packages", args->packages,
                    "only these packages (names, globs, name.arch, NEVRAs; repeatable, comma "
                    "lists)");
    app->add_option("--packages-file", args->packages_file,
                    "only the packages named in FILE (whitespace-separated, # comments)");
    CLI::Option* with_dependencies = app->add_flag(
        "--with-dependencies", args->with_dependencies,
        "with --packages: also everything they need to install, from every repository of the "
        "run (solved with libsolv, as dnf); each repository mirrors its share");
    app->add_flag("--no-weak-dependencies", args->no_weak_dependencies,
                  "with --with-dependencies: leave out Recommends and Supplements (dnf's "
                  "install_weak_deps=False)")
        ->needs(with_dependencies);
    app->add_option("--installed-base", args->installed_base,
                    "with --with-dependencies: what the machines already have, left out of the "
                    "mirror: an installroot (its rpm database; / for this machine's) or a file of "
                    "NEVRAs as rpm -qa prints them")
        ->needs(with_dependencies);
    app->add_option("--modules", args->modules,
                    "with --with-dependencies: the module streams the machines enable "
                    "(NAME:STREAM, comma lists), besides every other module's default stream")
        ->needs(with_dependencies);
    app->add_option("--closure-repos", args->closure_repos,
                    "with --with-dependencies: repositories of dnf's configuration the closure "
                    "may take dependencies from without mirroring them (IDs, comma lists)")
        ->needs(with_dependencies);
    app->add_flag("-g,--gpgcheck", args->gpgcheck,
                  "remove packages that fail the signature check (repositories with gpgcheck=1)");
    app->add_option("--gpgcheck-keys", args->gpgcheck_keys,
                    "keys --gpgcheck trusts: rpmdb (default, as dnf: the keys imported in the rpm "
                    "database of --installroot) or repo (the repository's gpgkey files)")
        ->check(CLI::IsMember({"rpmdb", "repo"}));
    app->add_option("-j,--parallel", args->parallel, "concurrent downloads (default 16)")
        ->check(CLI::Range(1U, 256U));
    app->add_option("--connections-per-file", args->connections_per_file,
                    "fetch each file of at least --segment-min-size as this many byte ranges at "
                    "once, over the mirrors in turn (default 1: one connection per file)")
        ->check(CLI::Range(1U, 64U));
    app->add_option("--segment-min-size", args->segment_min_size,
                    "the smallest file --connections-per-file splits (default 64M; k, M, G)")
        ->transform(CLI::AsSizeValue(false));
    app->add_flag("-q,--quiet", args->quiet, "print errors only");
    app->add_flag("-v,--verbose", args->verbose, "print more");
    app->add_flag("--no-cache", args->no_cache,
                  "verify existing files by hashing them, ignoring the checksum cache");
    app->add_option("--zchunk", args->zchunk,
                    "zchunk metadata (*_zck records): on (default: fetch only the chunks that "
                    "changed since the previous copy; without --download-metadata, parse "
                    "primary_zck, kept in the state directory) or off (always the whole file; "
                    "parse primary)")
        ->check(CLI::IsMember({"on", "off"}));
    app->add_option("--json", args->json_file, "write a JSON report to FILE ('-': stdout)");
    add_run_state_options(*app, args->state);
    add_sync_snapshot_options(*app, args->snapshots);
    add_unattended_options(*app, args->unattended);
    add_job_mode_options(*app, args->job_mode);
    return Command{app, [args] { return run_sync(*args); }};
}

}  // namespace rpmirror::cli
