// `rpmirror export --config-file F --job NAME`: the jobs' repositories as export's -p and --repo
// (rpmirror/export/export.hpp).
#include <utility>

#include <fmt/core.h>

#include "store/destination.hpp"

#include "jobs/jobs_config.hpp"
#include "rpmirror/export/export.hpp"
#include "rpmirror/jobs/jobs_config.hpp"

namespace rpmirror {

namespace {

// Sets `field` to `value` if it is unset; Error{BadInput} naming `job` iff it holds another.
Result<void> agree(std::filesystem::path& field, bool& set, const std::filesystem::path& value,
                   const JobConfig& job, std::string_view what) {
    if (!set) {
        field = value;
        set = true;
        return {};
    }
    if (field != value) {
        return make_error(ErrorCode::BadInput,
                          fmt::format("job '{}': its {} {} is not the other jobs' {}; export "
                                      "them one root at a time (--job)",
                                      job.name, what, value.string(), field.string()),
                          job.defined_at.to_string());
    }
    return {};
}

// A job's repository directory (or s3:// URL) as its root and its id: "/srv/m/fedora" is
// {"/srv/m", "fedora"} (store::Destination's arithmetic, for a directory and a bucket alike).
std::pair<std::filesystem::path, std::string> split_repository(
    const store::Destination& repository) {
    const std::optional<store::Destination> parent = repository.parent();
    return {parent ? parent->path() : repository.path(), repository.path().filename().string()};
}

}  // namespace

Result<void> choose_export_jobs(const ExportJobs& jobs, ExportOptions& options,
                                std::vector<std::string>& warnings) {
    if (!options.repositories.empty()) {
        return make_error(ErrorCode::BadInput,
                          "not with --config-file/--job: the jobs name the repositories", "--repo");
    }
    JobsLoadOptions load;
    if (!jobs.config_file.empty()) {
        load.config_file = jobs.config_file;
    }
    std::vector<ConfigWarning> noted;
    auto config = load_jobs_config(load, noted);
    for (const ConfigWarning& warning : noted) {
        warnings.push_back(warning.to_string());
    }
    if (!config) {
        return tl::unexpected(std::move(config.error()));
    }
    auto chosen = select_jobs(std::move(config->jobs), jobs.patterns);
    if (!chosen) {
        return tl::unexpected(std::move(chosen.error()));
    }
    std::filesystem::path root;
    std::filesystem::path state_dir;
    std::filesystem::path snapshot_dir;
    bool root_set = !options.destination.empty();
    bool state_set = !options.state_dir.empty();
    bool snapshot_set = !options.snapshot_dir.empty();
    if (root_set) {
        root = store::Destination::of(options.destination).path();
    }
    state_dir = options.state_dir;
    snapshot_dir = options.snapshot_dir;
    for (const JobConfig& job : *chosen) {
        if (!job.errors.empty()) {
            return make_error(ErrorCode::BadInput, job.errors.front(), "--job " + job.name);
        }
        const store::Destination repository =
            store::Destination::of(job.options.download_path.string());
        const auto [parent, leaf] = split_repository(repository);
        if (auto same = agree(root, root_set, parent, job, "root"); !same) {
            return same;
        }
        if (auto same = agree(state_dir, state_set, job.options.state_dir, job, "state directory");
            !same) {
            return same;
        }
        if (job.snapshot_dir) {
            if (auto same =
                    agree(snapshot_dir, snapshot_set, *job.snapshot_dir, job, "snapshot directory");
                !same) {
                return same;
            }
        }
        options.repositories.push_back(leaf);
        if (!options.s3 && repository.in_bucket()) {
            options.s3 = job.options.s3;
        }
    }
    options.destination = root.string();
    options.state_dir = state_dir;
    options.snapshot_dir = snapshot_dir;
    return {};
}

}  // namespace rpmirror
