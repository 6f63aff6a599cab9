// --with-dependencies over repositories: their metadata fetched, the closure solved, each given
// its share (rpmirror/resolve.hpp).
#include <sys/utsname.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <optional>
#include <span>

#include <fmt/format.h>

#include "fs/durable.hpp"
#include "rpmirror/audit.hpp"
#include "rpmirror/index.hpp"
#include "rpmirror/metadata.hpp"
#include "rpmirror/resolve.hpp"

namespace rpmirror {

namespace {

// Writes the content of the compressed file `in` to `out` (`expected` bytes, when known).
Result<void> decompress_to(const std::filesystem::path& in, std::optional<std::uint64_t> expected,
                           const std::filesystem::path& out) {
    DecompressOptions options;
    options.expected_size = expected;
    std::ofstream stream(out, std::ios::binary | std::ios::trunc);
    auto written = decompress_file(in, options, [&stream](std::span<const char> chunk) {
        stream.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
        return Result<void>{};
    });
    if (!written) {
        return tl::unexpected(std::move(written.error()));
    }
    stream.close();
    if (!stream) {
        return make_errno_error("cannot write", out.string(), errno);
    }
    return {};
}

}  // namespace

Result<ClosureMetadata> assign_closure(Syncer& syncer, std::vector<RepoConfig>& repos,
                                       const ClosureRequest& request, std::stop_token stop) {
    std::vector<RemoteMetadata> fetched;
    std::vector<ClosureRepo> sources;
    for (const RepoConfig& repo : repos) {
        auto metadata = RemoteMetadata::fetch(syncer, repo, stop);
        if (!metadata) {
            Error error = std::move(metadata.error());
            error.message = "--with-dependencies: the metadata of " + repo.id +
                            " cannot be fetched: " + error.message;
            return tl::unexpected(std::move(error));
        }
        const std::filesystem::path index = metadata->root() / "repodata" / "repomd.xml";
        auto text = fs::read_file(index);
        if (!text) {
            return tl::unexpected(std::move(text.error()));
        }
        auto repomd = parse_repomd(*text, index.string());
        if (!repomd) {
            return tl::unexpected(std::move(repomd.error()));
        }
        const RepomdRecord* primary = repomd->find("primary");
        if (primary == nullptr) {
            return make_error(ErrorCode::BadInput,
                              "--with-dependencies: the repository lists no primary metadata",
                              repo.id);
        }
        // The sync verified and placed it there (record_destination's checks); libsolv reads it
        // decompressed by rpmirror's own readers (every codec a repository may use, bounded).
        const std::filesystem::path plain = metadata->root() / "primary.xml";
        if (auto written =
                decompress_to(metadata->root() / primary->location_href, primary->open_size, plain);
            !written) {
            return tl::unexpected(std::move(written.error()));
        }
        sources.push_back({repo.id, plain});
        fetched.push_back(std::move(*metadata));
    }
    auto closure = resolve_closure(sources, request);
    if (!closure) {
        return tl::unexpected(std::move(closure.error()));
    }
    for (std::size_t index = 0; index < repos.size(); ++index) {
        const std::set<std::string>& share = closure->shares[repos[index].id];
        repos[index].closure = std::vector<std::string>(share.begin(), share.end());
        repos[index].record_sources.push_back(fetched[index].root() / "repodata");
    }
    return ClosureMetadata(std::move(fetched), std::move(closure->left_out));
}

Result<std::vector<ClosureMetadata>> assign_job_closures(std::vector<JobConfig>& jobs,
                                                         std::stop_token stop) {
    // The groups, in the order of their first job.
    std::vector<std::pair<ClosureRequest, std::vector<JobConfig*>>> groups;
    for (JobConfig& job : jobs) {
        if (!job.with_dependencies) {
            continue;
        }
        ClosureRequest request;
        request.packages = job.packages;
        request.arch = closure_arch(job.options.selection.arches);
        request.weak_dependencies = job.weak_dependencies;
        request.installed_base = job.installed_base;
        request.keep_versions = closure_keep_versions(job.options.selection);
        const auto same = [&request](const auto& group) {
            return group.first.packages == request.packages && group.first.arch == request.arch &&
                   group.first.weak_dependencies == request.weak_dependencies &&
                   group.first.installed_base == request.installed_base &&
                   group.first.keep_versions == request.keep_versions;
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
        auto assigned = assign_closure(syncer, repos, request, stop);
        if (!assigned) {
            Error error = std::move(assigned.error());
            error.message = fmt::format("job(s) {}: {}", names, error.message);
            return tl::unexpected(std::move(error));
        }
        for (std::size_t index = 0; index < members.size(); ++index) {
            members[index]->repo.closure = std::move(repos[index].closure);
            members[index]->repo.record_sources = std::move(repos[index].record_sources);
        }
        fetched.push_back(std::move(*assigned));
    }
    return fetched;
}

std::uint32_t closure_keep_versions(const SelectionOptions& selection) {
    return selection.newest_only ? std::max<std::uint32_t>(selection.keep_versions, 1) : 1;
}

std::string closure_arch(const std::vector<std::string>& arches) {
    for (const std::string& arch : arches) {
        if (arch != "noarch" && arch != "src" && arch != "nosrc") {
            return arch;
        }
    }
    struct utsname names {};
    return ::uname(&names) == 0 ? std::string(names.machine) : std::string("x86_64");
}

}  // namespace rpmirror
