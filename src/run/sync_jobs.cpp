// The jobs of a `rpmirror sync` run from its command line's request
// (rpmirror/run/sync_jobs.hpp).
#include "rpmirror/run/sync_jobs.hpp"

#include <algorithm>
#include <memory>
#include <set>
#include <span>
#include <utility>

#include <fmt/core.h>

#include "config/repo_files.hpp"
#include "download/download.hpp"
#include "jobs/jobs_config.hpp"
#include "rpmirror/sync/sync_options.hpp"
#include "store/source_record.hpp"
#include "sync/sync_options.hpp"

namespace rpmirror {

namespace {

void tell_warnings(const std::vector<ConfigWarning>& warnings, SyncSetupEvents* events) {
    if (events != nullptr) {
        for (const ConfigWarning& warning : warnings) {
            events->config_warning(warning);
        }
    }
}

// The repositories `request` selects, loaded with $releasever `releasever` when given (one of
// several --releasever values) instead of the request's own.
Result<std::vector<RepoConfig>> load_repositories(const RepositoryRequest& request,
                                                  SyncSetupEvents* events,
                                                  const std::optional<std::string>& releasever) {
    RepoSourceRequest sources = request.sources;
    if (releasever) {
        sources.releasevers = {*releasever};
    }
    if (!request.ip_resolve.empty()) {
        // dnf's -4/-6 set ip_resolve; an explicit --setopt given too still wins (it comes later).
        sources.setopts.insert(sources.setopts.begin(), "ip_resolve=" + request.ip_resolve);
    }
    std::vector<ConfigWarning> loading;
    auto repos = load_repo_sources(sources, loading);
    tell_warnings(loading, events);
    if (!repos) {
        return repos;
    }
    RepoSelection selection;
    selection.toggles = request.toggles;
    selection.repo_patterns = request.repo_patterns;
    // A --repo that no configuration defines: the source its mirror recorded.
    std::vector<std::string> notes;
    if (auto recorded = store::add_recorded_sources(*repos, selection.repo_patterns,
                                                    {.download_path = request.download_path,
                                                     .state_dir = request.state_dir,
                                                     .norepopath = request.norepopath,
                                                     .s3 = request.s3},
                                                    notes);
        !recorded) {
        return tl::unexpected(std::move(recorded.error()));
    }
    if (events != nullptr) {
        for (const std::string& note : notes) {
            events->note(note);
        }
    }
    selection.enable_source_repos = request.source;
    std::vector<ConfigWarning> warnings;
    auto selected = select_repos(std::move(*repos), selection, warnings);
    tell_warnings(warnings, events);
    if (selected && request.nogpgcheck) {
        for (RepoConfig& repo : *selected) {
            repo.gpgcheck = false;
            repo.repo_gpgcheck = false;
        }
    }
    return selected;
}

// Every release's repositories (several --releasever: one after the other, sharing their
// directories), and how many distinct repository ids they are.
Result<std::vector<RepoConfig>> load_releases(const RepositoryRequest& request,
                                              SyncSetupEvents* events, std::size_t& distinct) {
    if (request.sources.releasevers.size() <= 1) {
        auto repos = load_repositories(request, events, std::nullopt);
        distinct = repos ? repos->size() : 0;
        return repos;
    }
    std::vector<RepoConfig> repos;
    std::set<std::string> ids;
    for (const std::string& releasever : request.sources.releasevers) {
        auto release = load_repositories(request, events, releasever);
        if (!release) {
            return release;
        }
        for (RepoConfig& repo : *release) {
            ids.insert(repo.id);
            repos.push_back(std::move(repo));
        }
    }
    distinct = ids.size();
    return repos;
}

// --closure-repos: repositories solved over, not mirrored, loaded as --repo loads them.
Result<std::vector<RepoConfig>> closure_repositories(const RepositoryRunRequest& request,
                                                     SyncSetupEvents* events) {
    RepositoryRequest only = request.repositories;
    only.repo_patterns = request.packages.closure_repos;
    only.toggles.clear();
    auto loaded = load_repositories(only, events, std::nullopt);
    if (!loaded) {
        Error error = std::move(loaded.error());
        error.subject = "--closure-repos";  // not the --repo it was loaded as
        return tl::unexpected(std::move(error));
    }
    for (const std::string& id : only.repo_patterns) {
        if (std::none_of(loaded->begin(), loaded->end(),
                         [&id](const RepoConfig& repo) { return repo.id == id; })) {
            return make_error(ErrorCode::BadInput,
                              fmt::format("no repository '{}' in dnf's configuration", id),
                              "--closure-repos");
        }
    }
    return loaded;
}

// --packages / --packages-file: the packages each repository mirrors. Alone, a filter on names
// (as includepkgs); with --with-dependencies, each repository's share of their dependency
// closure (the keys of `each`, solved by run_sync before anything is synced).
Result<void> select_packages(const RepositoryRunRequest& request, std::vector<RepoConfig>& repos,
                             JobConfig& each, SyncSetupEvents* events) {
    const PackageRequest& packages = request.packages;
    std::vector<std::string> specs = packages.specs;
    if (!packages.packages_file.empty()) {
        auto listed = read_package_list(packages.packages_file);
        if (!listed) {
            return tl::unexpected(std::move(listed.error()));
        }
        specs.insert(specs.end(), listed->begin(), listed->end());
    }
    if (each.options.prefetch.closure && !packages.with_dependencies) {
        return make_error(ErrorCode::BadInput,
                          "closure needs --with-dependencies (the closure of --packages)",
                          "--prefetch");
    }
    if (specs.empty()) {
        if (packages.with_dependencies && !each.options.selection.advisories.active()) {
            return make_error(ErrorCode::BadInput,
                              "needs --packages, --packages-file or --advisories",
                              "--with-dependencies");
        }
        if (!packages.with_dependencies) {
            return {};
        }
    }
    if (!packages.with_dependencies) {  // specs given: a filter on names
        for (RepoConfig& repo : repos) {
            repo.includepkgs.insert(repo.includepkgs.end(), specs.begin(), specs.end());
        }
        return {};
    }
    if (auto checked = check_closure_options(each.options); !checked) {
        return checked;
    }
    each.packages = std::move(specs);
    each.with_dependencies = true;
    each.weak_dependencies = packages.weak_dependencies;
    each.installed_base = packages.installed_base;
    each.modules = packages.modules;
    if (!packages.closure_repos.empty()) {
        auto loaded = closure_repositories(request, events);
        if (!loaded) {
            return tl::unexpected(std::move(loaded.error()));
        }
        each.closure_repos = std::move(*loaded);
    }
    return {};
}

// One job per repository, each a copy of `each` with the repository as its source and its id as
// its name.
std::vector<JobConfig> repository_jobs(std::span<const RepoConfig> repos, const JobConfig& each) {
    std::vector<JobConfig> jobs;
    for (const RepoConfig& repo : repos) {
        JobConfig& job = jobs.emplace_back(each);
        job.name = repo.id;
        job.repo = repo;
    }
    return jobs;
}

tl::unexpected<RepositoryRunRefusal> refuse(RepositoryRunRefusal::Step step, Error error) {
    return tl::unexpected(RepositoryRunRefusal{step, std::move(error)});
}

}  // namespace

tl::expected<std::vector<JobConfig>, RepositoryRunRefusal> repository_run_jobs(
    const RepositoryRunRequest& request, SyncSetupEvents* events) {
    using Step = RepositoryRunRefusal::Step;
    const SyncOptions& options = request.each.options;
    const std::size_t releases = request.repositories.sources.releasevers.size();
    // --upstream-layout with --releasever given several times: every release of the selected
    // repositories, one after the other (they share -p/<repoid>/ and its blobstore).
    if (releases > 1 && !options.upstream_layout) {
        return refuse(Step::Request,
                      Error{ErrorCode::BadInput,
                            "given several times: several releases are mirrored in one run only "
                            "with --upstream-layout (they share its blobstore)",
                            "--releasever", 0});
    }
    if (options.keep_releases > 0 && releases > options.keep_releases) {
        return refuse(Step::Request,
                      Error{ErrorCode::BadInput,
                            fmt::format("{} releases given with --releasever, but only {} kept: "
                                        "one would remove another this run syncs",
                                        releases, options.keep_releases),
                            "--keep-releases", 0});
    }
    std::size_t distinct = 0;
    auto repos = load_releases(request.repositories, events, distinct);
    if (!repos) {
        return refuse(Step::Loading, std::move(repos.error()));
    }
    if (repos->empty() && !request.allow_none) {
        return refuse(Step::Request,
                      Error{ErrorCode::BadInput,
                            "no repository to mirror: none is enabled in the configuration read "
                            "(give --repofrompath ID,URL, a .repo file with -c or --reposdir, or "
                            "--enablerepo; or --config-file for rpmirror.conf's jobs)",
                            "", 0});
    }
    if (options.norepopath && distinct > 1) {
        return refuse(Step::Norepopath, Error{ErrorCode::BadInput,
                                              "Can't use --norepopath with multiple repositories",
                                              "--norepopath", 0});
    }
    JobConfig each = request.each;
    if (auto selected = select_packages(request, *repos, each, events); !selected) {
        return refuse(Step::Request, std::move(selected.error()));
    }
    return repository_jobs(*repos, each);
}

Result<SyncRun> job_run(const JobRunRequest& request, SyncSetupEvents* events) {
    JobsLoadOptions load;
    load.config_file = request.config_file;
    std::vector<ConfigWarning> warnings;
    auto config = load_jobs_config(load, warnings);
    tell_warnings(warnings, events);
    if (!config) {
        return tl::unexpected(std::move(config.error()));
    }
    std::optional<Shard> shard = config->shard;
    if (request.shard) {
        auto given = parse_shard(*request.shard, "--shard");
        if (!given) {
            return tl::unexpected(std::move(given.error()));
        }
        shard = *given;
    }
    auto jobs = select_jobs(std::move(config->jobs), request.job_patterns);
    if (!jobs) {
        return tl::unexpected(std::move(jobs.error()));
    }
    SyncRun run;
    run.kind = RunKind::Jobs;
    run.jobs = std::move(*jobs);
    run.shard = shard;
    run.on_change = request.on_change;
    run.metrics_file = !request.metrics_file.empty() ? request.metrics_file
                       : config->metrics_file        ? config->metrics_file->string()
                                                     : std::string();
    JobRunnerOptions& runner = run.runner;
    runner.parallel_jobs =
        request.parallel_jobs > 0 ? request.parallel_jobs : config->parallel_jobs;
    const unsigned parallel = request.parallel > 0 ? request.parallel : config->parallel;
    const unsigned max_per_host = request.max_per_host.value_or(config->max_per_host);
    // One budget for every job's transfers: -j, [main] parallel.
    runner.parallel = parallel;
    runner.max_per_host = max_per_host;
    runner.prepare_sync = [parallel, request](const JobConfig&, SyncOptions& options) {
        if (!options.parallel) {
            options.parallel = parallel;
        }
        options.use_checksum_cache = request.use_checksum_cache;
        if (!request.state_dir.empty()) {
            options.state_dir = request.state_dir;
        }
        if (request.lock_wait) {
            options.lock_wait = request.lock_wait;
        }
        // The command line's store settings over [main]'s s3-* keys.
        const s3::S3Overrides& given = request.s3;
        options.s3.endpoint = given.endpoint ? given.endpoint : options.s3.endpoint;
        options.s3.region = given.region ? given.region : options.s3.region;
        options.s3.profile = given.profile ? given.profile : options.s3.profile;
        options.s3.path_style = given.path_style ? given.path_style : options.s3.path_style;
    };
    return run;
}

}  // namespace rpmirror
