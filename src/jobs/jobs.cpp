// rpmirror.conf(5): the main file and conf.d/*.conf read into jobs.
#include <fnmatch.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "config/common.hpp"
#include "config/repo_files.hpp"
#include "config/repo_options.hpp"
#include "config/variables_internal.hpp"
#include "index/index.hpp"
#include "jobs/job_builder.hpp"
#include "jobs/jobs_config.hpp"
#include "jobs/overlap.hpp"
#include "rpmirror/jobs/jobs_config.hpp"
#include "rpmirror/s3/s3.hpp"
#include "store/destination.hpp"
#include "util/ini.hpp"

namespace rpmirror {
namespace {

// Keys of [main] that configure the run, not a job (`destination` and `parallel` mean something
// else in a job, see JobsConfig).
constexpr std::string_view kMainKeys[] = {
    "destination", "parallel",   "parallel_jobs", "max_per_host", "state_dir", "metrics_file",
    "dnf_config",  "reposdir",   "releasever",    "basearch",     "varsdir",   "s3_endpoint",
    "s3_region",   "s3_profile", "s3_addressing", "shard",        "listen"};

using config::bad;
using config::canonical_key;
using config::directory_path;
using config::DnfRepos;
using config::is_job_key;
using config::is_one_of;
using config::JobBuilder;
using config::kUrlSourceKeys;
using config::located_error;
using config::MainSection;
using config::Problem;
using config::read_ini_file;
using config::set_count;
using config::warn;

// Returns the `*.conf` regular files of `directory` sorted by name; none iff it does not exist.
Result<std::vector<std::filesystem::path>> list_conf_d(const std::filesystem::path& directory) {
    std::vector<std::filesystem::path> files;
    std::error_code error;
    const auto status = std::filesystem::status(directory, error);
    if (status.type() == std::filesystem::file_type::not_found) {
        return files;
    }
    if (error || status.type() != std::filesystem::file_type::directory) {
        return make_error(ErrorCode::Io, "cannot read the conf.d directory", directory.string());
    }
    for (std::filesystem::directory_iterator it(directory, error), end; !error && it != end;
         it.increment(error)) {
        if (it->path().extension() == ".conf" && it->is_regular_file(error)) {
            files.push_back(it->path());
        }
    }
    if (error) {
        return make_errno_error("cannot list the conf.d directory", directory.string(),
                                error.value());
    }
    std::sort(files.begin(), files.end());
    return files;
}

Result<void> read_main(const ini::IniSection& section, const std::string& file,
                       const VariableContext& vars, JobsConfig& jobs, MainSection& main,
                       std::vector<ConfigWarning>& warnings) {
    for (const ini::IniEntry& entry : section.entries) {
        const std::string key = canonical_key(entry.key);
        const ConfigLocation where{file, entry.line};
        const std::string value =
            *config::substitute(entry.value, vars, config::UndefinedPolicy::Keep);
        Problem problem;
        if (key == "destination") {
            jobs.destination = directory_path(value);
        } else if (key == "parallel") {
            problem = set_count(jobs.parallel, value, 1, 256);
        } else if (key == "parallel_jobs") {
            problem = set_count(jobs.parallel_jobs, value, 1, 256);
        } else if (key == "max_per_host") {
            problem = set_count(jobs.max_per_host, value, 0, 256);
        } else if (key == "state_dir") {
            jobs.state_dir = value;
        } else if (key == "metrics_file") {
            jobs.metrics_file = value;
        } else if (key == "listen") {
            for (std::string& address : config::split_list(value)) {
                jobs.listen.push_back(std::move(address));
            }
        } else if (key == "shard") {
            auto shard = parse_shard(value, entry.key);
            if (shard) {
                jobs.shard = *shard;
            } else {
                problem = bad(shard.error().message);
            }
        } else if (key == "s3_endpoint") {
            jobs.s3.endpoint = value;
        } else if (key == "s3_region") {
            jobs.s3.region = value;
        } else if (key == "s3_profile") {
            jobs.s3.profile = value;
        } else if (key == "s3_addressing") {
            if (value == "path" || value == "virtual") {
                jobs.s3.path_style = value == "path";
            } else {
                problem = bad("invalid value '" + value + "' (expected path or virtual)");
            }
        } else if (key == "dnf_config") {
            main.dnf_config = value;
        } else if (key == "reposdir") {
            main.reposdirs.emplace();
            for (std::string& item : config::split_list(value)) {
                main.reposdirs->emplace_back(std::move(item));
            }
        } else if (is_one_of(kMainKeys, key)) {
            // releasever, basearch, varsdir: read before the variables were made.
        } else if (key == "repo" || is_one_of(kUrlSourceKeys, key)) {
            problem = bad("a source belongs in a job, not in [main]");
        } else if (key == "releases") {
            problem = bad("belongs in a job, not in [main] (the releases of that job's source)");
        } else if (is_job_key(key) || config::find_repo_option(key) != nullptr) {
            main.job_defaults.push_back(&entry);
        } else if (config::is_ignored_repo_key(key) || config::is_ignored_main_key(key)) {
            warn(warnings, ConfigWarningKind::IgnoredKey, where, entry.key,
                 fmt::format("key '{}' in [main] is not used by rpmirror; ignored", entry.key));
        } else {
            warn(warnings, ConfigWarningKind::UnknownKey, where, entry.key,
                 fmt::format("unknown key '{}' in [main]", entry.key));
        }
        if (!problem) {
            return located_error(where, fmt::format("[main]: {}: {}", entry.key, problem.error()));
        }
    }
    return {};
}

// Reads [main]'s releasever, basearch and varsdir into `options` (before any other value, as
// every other value may use the variables).
void read_variable_keys(const ini::IniSection& section, VariableOptions& options) {
    for (const ini::IniEntry& entry : section.entries) {
        const std::string key = canonical_key(entry.key);
        if (key == "releasever") {
            options.releasever = entry.value;
        } else if (key == "basearch") {
            options.basearch = entry.value;
        } else if (key == "varsdir") {
            options.varsdirs.clear();
            for (std::string& item : config::split_list(entry.value)) {
                options.varsdirs.emplace_back(std::move(item));
            }
        }
    }
}

// Where a job's trees come from: its destination, metadata-path and snapshot keys.
struct JobKeys {
    bool has_destination = false;  // false: no destination (the job failed for that already)
    // A release after the first of a `releases` job: its trees are the first one's.
    bool same_trees_as_previous = false;
    ConfigLocation destination;  // the `destination` line, else the job's [name] line
    std::optional<ConfigLocation> metadata_path;
    std::optional<ConfigLocation> snapshot_dir;
    std::optional<ConfigLocation> snapshot;
};

// The `releases` of a job section, variables substituted; none without the key.
std::vector<std::string> releases_of(const ini::IniSection& section, const VariableContext& vars) {
    std::vector<std::string> releases;
    for (const ini::IniEntry& entry : section.entries) {
        if (canonical_key(entry.key) == "releases") {
            releases = config::split_list(
                *config::substitute(entry.value, vars, config::UndefinedPolicy::Keep));
        }
    }
    return releases;
}

// How long a release of a `releases` job waits for the layout root its other releases lock.
constexpr std::chrono::seconds kReleaseLockWait{6 * 3600};

JobKeys job_keys_of(const JobBuilder& builder, const JobConfig& job, const JobsConfig& jobs) {
    JobKeys keys;
    const auto destination = builder.key_at("destination");
    keys.has_destination = destination.has_value() || jobs.destination.has_value();
    keys.destination = destination.value_or(job.defined_at);
    keys.metadata_path = builder.key_at("metadata_path");
    keys.snapshot_dir = builder.key_at("snapshot_dir");
    keys.snapshot = builder.key_at("snapshot");
    return keys;
}

// The base of a job's snapshots: `snapshot-dir`, else the directory above its destination (as
// snapshot_after_sync); nullopt iff that has none (an s3:// bucket's root).
std::optional<std::filesystem::path> snapshot_base_of(const JobConfig& job) {
    if (job.snapshot_dir) {
        return job.snapshot_dir;
    }
    const auto parent = store::Destination::of(job.options.download_path.native()).parent();
    if (!parent) {
        return std::nullopt;
    }
    return parent->path();
}

// Fails both jobs of every pair of trees that overlap (jobs/overlap.hpp): destinations,
// metadata directories, and the snapshot and published trees of jobs that snapshot (`snapshot`
// or `snapshot-dir` set). Every job is compared, enabled or not, with errors or not: its tree is
// there from earlier runs all the same.
void check_overlaps(std::vector<JobConfig>& jobs, const std::vector<JobKeys>& keys) {
    struct TreeOrigin {
        std::size_t job;
        std::string_view key;
        ConfigLocation where;
    };
    std::vector<OwnedTree> trees;
    std::vector<TreeOrigin> origins;
    const auto add = [&](std::size_t job, TreeKind kind, std::filesystem::path path,
                         std::string_view key, const ConfigLocation& where) {
        trees.push_back(
            {kind, std::move(path), fmt::format("job '{}'", jobs[job].name), where.to_string()});
        origins.push_back({job, key, where});
    };
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        const JobConfig& job = jobs[i];
        if (!keys[i].has_destination || keys[i].same_trees_as_previous) {
            continue;
        }
        add(i, TreeKind::Repository, job.options.download_path, "destination", keys[i].destination);
        if (job.options.metadata_path) {
            add(i, TreeKind::Metadata, *job.options.metadata_path, "metadata-path",
                keys[i].metadata_path.value_or(job.defined_at));
        }
        if (!job.snapshot && !job.snapshot_dir) {
            continue;
        }
        if (const auto base = snapshot_base_of(job)) {
            const std::string_view key = job.snapshot_dir ? "snapshot-dir" : "snapshot";
            const ConfigLocation where =
                (job.snapshot_dir ? keys[i].snapshot_dir : keys[i].snapshot)
                    .value_or(job.defined_at);
            add(i, TreeKind::Snapshots, *base / "snapshots", key, where);
            add(i, TreeKind::Published, *base / "published", key, where);
        }
    }
    for (const TreeOverlap& overlap : find_tree_overlaps(trees)) {
        for (const std::size_t tree : {overlap.inner, overlap.outer}) {
            const TreeOrigin& origin = origins[tree];
            if (tree == overlap.outer && origin.job == origins[overlap.inner].job) {
                continue;  // one job's own trees: one error
            }
            JobConfig& job = jobs[origin.job];
            job.errors.push_back(fmt::format("{}: job '{}': {}: {}", origin.where.to_string(),
                                             job.name, origin.key, overlap.message));
        }
    }
}

}  // namespace

Result<JobsConfig> load_jobs_config(const JobsLoadOptions& options,
                                    std::vector<ConfigWarning>& warnings) {
    JobsConfig jobs;
    jobs.main_file = options.config_file;
    auto conf_d = list_conf_d(options.config_file.parent_path() / "conf.d");
    if (!conf_d) {
        return tl::unexpected(std::move(conf_d.error()));
    }
    jobs.conf_d_files = std::move(*conf_d);
    std::vector<std::pair<std::string, std::vector<ini::IniSection>>> files;
    for (std::size_t i = 0; i <= jobs.conf_d_files.size(); ++i) {
        const std::filesystem::path& path = i == 0 ? jobs.main_file : jobs.conf_d_files[i - 1];
        auto sections = read_ini_file(path);
        if (!sections) {
            return tl::unexpected(std::move(sections.error()));
        }
        files.emplace_back(path.string(), std::move(*sections));
    }
    const std::string& main_file = files.front().first;
    VariableOptions variable_options = options.variables;
    const ini::IniSection* main_section = nullptr;
    for (const auto& [file, sections] : files) {
        for (const ini::IniSection& section : sections) {
            if (section.name != config::kMainSection) {
                continue;
            }
            if (&file != &main_file) {
                return located_error(
                    {file, section.line},
                    fmt::format("[main] belongs in the main file {} only", main_file));
            }
            main_section = &section;
        }
    }
    if (main_section != nullptr) {
        read_variable_keys(*main_section, variable_options);
    }
    auto vars = make_variable_context(variable_options);
    if (!vars) {
        return tl::unexpected(std::move(vars.error()));
    }
    MainSection main;
    if (main_section != nullptr) {
        if (auto read = read_main(*main_section, main_file, *vars, jobs, main, warnings); !read) {
            return tl::unexpected(std::move(read.error()));
        }
        // Bad job defaults fail the whole run (every job would fail with them).
        const ini::IniSection probe{"main", main_section->line, {}};
        JobBuilder defaults(main_file, probe, *vars, warnings);
        JobsConfig with_destination;
        with_destination.destination = "/";
        DnfRepos no_dnf(main, *vars);
        for (const std::string& error :
             defaults.build(with_destination, main, main_file, no_dnf).errors) {
            if (error.find("': source: no source") == std::string::npos) {
                std::string message = error;
                const std::string probe_name = "job 'main': ";
                if (const std::size_t at = message.find(probe_name); at != std::string::npos) {
                    message.replace(at, probe_name.size(), "[main]: ");
                }
                return make_error(ErrorCode::BadInput, std::move(message));
            }
        }
    }
    DnfRepos dnf(main, *vars);
    std::map<std::string, ConfigLocation> defined;
    std::vector<JobKeys> job_keys;
    for (const auto& [file, sections] : files) {
        for (const ini::IniSection& section : sections) {
            if (section.name == config::kMainSection) {
                continue;
            }
            const ConfigLocation where{file, section.line};
            if (!is_valid_repo_id(section.name)) {
                return located_error(where, fmt::format("invalid job name '{}' (allowed: letters, "
                                                        "digits, '-', '_', '.', ':')",
                                                        section.name));
            }
            if (const auto [it, inserted] = defined.emplace(section.name, where); !inserted) {
                return located_error(where, fmt::format("job '{}' is already defined at {}",
                                                        section.name, it->second.to_string()));
            }
            const std::vector<std::string> releases = releases_of(section, *vars);
            if (releases.empty()) {
                JobBuilder builder(file, section, *vars, warnings);
                jobs.jobs.push_back(builder.build(jobs, main, main_file, dnf));
                job_keys.push_back(job_keys_of(builder, jobs.jobs.back(), jobs));
            }
            for (std::size_t position = 0; position < releases.size(); ++position) {
                // The job once per release, with its $releasever (dnf's repositories too); the
                // warnings of the job's keys once.
                VariableContext release_vars = *vars;
                release_vars.values["releasever"] = releases[position];
                DnfRepos release_dnf(main, release_vars);
                std::vector<ConfigWarning> repeated;
                JobBuilder builder(file, section, release_vars,
                                   position == 0 ? warnings : repeated);
                JobConfig job = builder.build(jobs, main, main_file, release_dnf);
                job.release = releases[position];
                job.name = section.name + ":" + releases[position];
                job.repo.id = job.name;
                const std::string line = fmt::format(
                    "{}:{}: job '{}': releases: ", file,
                    builder.key_at("releases").value_or(job.defined_at).line, section.name);
                if (!job.options.upstream_layout) {
                    job.errors.push_back(line +
                                         "needs upstream-layout = 1 (the releases share its "
                                         "layout root)");
                } else if (job.options.keep_releases > 0 &&
                           releases.size() > job.options.keep_releases) {
                    job.errors.push_back(line + fmt::format("{} releases, but keep-releases = {}: "
                                                            "one would remove another",
                                                            releases.size(),
                                                            job.options.keep_releases));
                }
                if (!job.options.lock_wait) {
                    job.options.lock_wait = kReleaseLockWait;  // one after the other
                }
                JobKeys keys = job_keys_of(builder, job, jobs);
                keys.same_trees_as_previous = position > 0;
                jobs.jobs.push_back(std::move(job));
                job_keys.push_back(keys);
            }
            const JobConfig& job = jobs.jobs.back();
            if (job.snapshot && job.snapshot_dir &&
                !store::Destination::of(job.options.download_path.native())
                     .same_medium(store::Destination::of(job.snapshot_dir->native()))) {
                return located_error(
                    job_keys.back().snapshot.value_or(where),
                    fmt::format("job '{}': snapshot-dir {} and destination {} must both be s3:// "
                                "or both local (snapshots are copies inside the mirror's store)",
                                job.name, job.snapshot_dir->native(),
                                job.options.download_path.native()));
            }
        }
    }
    if (jobs.jobs.empty()) {
        return make_error(ErrorCode::BadInput, "no job defined (a job is a section besides [main])",
                          main_file);
    }
    check_overlaps(jobs.jobs, job_keys);
    if (!jobs.metrics_file) {  // the environment's default (the systemd unit's)
        std::string file;
        if (options.variables.environment) {
            const auto found = options.variables.environment->find("RPMIRROR_METRICS_FILE");
            file = found == options.variables.environment->end() ? "" : found->second;
        } else if (const char* set = std::getenv("RPMIRROR_METRICS_FILE"); set != nullptr) {
            file = set;
        }
        if (!file.empty()) {
            jobs.metrics_file = file;
        }
    }
    return jobs;
}

Result<std::vector<JobConfig>> select_jobs(std::vector<JobConfig> jobs,
                                           std::span<const std::string> patterns) {
    std::vector<bool> chosen(jobs.size(), patterns.empty());
    if (patterns.empty()) {
        for (std::size_t i = 0; i < jobs.size(); ++i) {
            chosen[i] = jobs[i].enabled;
        }
    }
    for (const std::string& pattern : patterns) {
        bool matched = false;
        for (std::size_t i = 0; i < jobs.size(); ++i) {
            if (::fnmatch(pattern.c_str(), jobs[i].name.c_str(), 0) == 0) {
                chosen[i] = true;
                matched = true;
            }
        }
        if (!matched) {
            return make_error(ErrorCode::BadInput, "matches no job of the configuration",
                              fmt::format("--job {}", pattern));
        }
    }
    std::vector<JobConfig> selected;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        if (chosen[i]) {
            selected.push_back(std::move(jobs[i]));
        }
    }
    return selected;
}

}  // namespace rpmirror
