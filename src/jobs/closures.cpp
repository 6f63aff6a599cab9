// --with-dependencies in job mode: jobs grouped by what their closure is solved for
// (jobs/closures.hpp).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "jobs/closures.hpp"

namespace rpmirror {

Result<std::vector<ClosureMetadata>> assign_job_closures(std::vector<JobConfig>& jobs,
                                                         std::stop_token stop, bool name_jobs) {
    // The groups, in the order of their first job.
    std::vector<std::pair<ClosureRequest, std::vector<JobConfig*>>> groups;
    for (JobConfig& job : jobs) {
        if (!job.with_dependencies) {
            continue;
        }
        ClosureRequest request =
            closure_request(job.packages, job.options.selection, job.weak_dependencies,
                            job.installed_base, job.modules);
        const auto same = [&](const auto& group) {
            return group.first.packages == request.packages && group.first.arch == request.arch &&
                   group.first.weak_dependencies == request.weak_dependencies &&
                   group.first.installed_base == request.installed_base &&
                   group.first.keep_versions == request.keep_versions &&
                   group.first.built_by == request.built_by &&
                   group.first.modules == request.modules &&
                   group.first.advisories == request.advisories &&
                   std::ranges::equal(group.second.front()->closure_repos, job.closure_repos, {},
                                      &RepoConfig::id, &RepoConfig::id);
        };
        if (auto found = std::find_if(groups.begin(), groups.end(), same); found != groups.end()) {
            found->second.push_back(&job);
        } else {
            groups.emplace_back(std::move(request), std::vector<JobConfig*>{&job});
        }
    }
    std::vector<ClosureMetadata> fetched;
    for (auto& [request, members] : groups) {
        std::vector<RepoConfig> repos;
        std::string names;
        for (const JobConfig* job : members) {
            repos.push_back(job->repo);
            names += (names.empty() ? "" : ", ") + job->name;
        }
        Syncer syncer;
        auto assigned =
            assign_closure(syncer, repos, request, stop, members.front()->closure_repos);
        if (!assigned) {
            Error error = std::move(assigned.error());
            if (name_jobs) {
                error.message = fmt::format("job(s) {}: {}", names, error.message);
            }
            return tl::unexpected(std::move(error));
        }
        for (std::size_t index = 0; index < members.size(); ++index) {
            // prefetch = closure: the closure is fetched, the mirror lists everything.
            Prefetch& prefetch = members[index]->options.prefetch;
            (prefetch.closure ? prefetch.nevras : members[index]->repo.closure) =
                std::move(repos[index].closure);
            members[index]->repo.record_sources = std::move(repos[index].record_sources);
        }
        fetched.push_back(std::move(*assigned));
    }
    return fetched;
}

}  // namespace rpmirror
