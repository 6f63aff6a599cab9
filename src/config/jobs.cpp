// rpmirror.conf(5): the main file and conf.d/*.conf read into jobs.
#include <fnmatch.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "config/common.hpp"
#include "config/ini.hpp"
#include "config/repo_options.hpp"
#include "config/variables_internal.hpp"
#include "rpmirror/index.hpp"
#include "rpmirror/jobs_config.hpp"
#include "rpmirror/s3.hpp"
#include "s3/upload.hpp"

namespace rpmirror {
namespace {

constexpr std::string_view kMainSection = "main";

// `-` and `_` are the same in every key: keys are compared in their `_` spelling.
std::string canonical_key(std::string_view key) {
    std::string canonical(key);
    std::replace(canonical.begin(), canonical.end(), '-', '_');
    return canonical;
}

// Keys of [main] that configure the run, not a job (`destination` and `parallel` mean something
// else in a job, see JobsConfig).
constexpr std::string_view kMainKeys[] = {
    "destination", "parallel",   "parallel_jobs", "max_per_host", "state_dir", "metrics_file",
    "dnf_config",  "reposdir",   "releasever",    "basearch",     "varsdir",   "s3_endpoint",
    "s3_region",   "s3_profile", "s3_addressing", "shard"};

// True iff `key` (canonical spelling) is a key of a job that is not a `.repo` key
// (JobBuilder::job_keys()).
bool is_job_key(std::string_view key);

// The `.repo` keys that say where a repository is: one of the two ways to give a job its source.
constexpr std::string_view kUrlSourceKeys[] = {"baseurl", "mirrorlist", "metalink"};

template <std::size_t N>
bool is_one_of(const std::string_view (&keys)[N], std::string_view key) {
    return std::find(std::begin(keys), std::end(keys), key) != std::end(keys);
}

using config::located_error;
using config::read_ini_file;
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

std::optional<unsigned> parse_count(std::string_view text, unsigned minimum, unsigned maximum) {
    unsigned value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value < minimum ||
        value > maximum) {
        return std::nullopt;
    }
    return value;
}

// `value` as an absolute, lexically normal directory path without a trailing '/'.
std::filesystem::path directory_path(const std::string& value) {
    if (s3::is_s3_url(value)) {
        return value;  // a bucket: no path arithmetic ("s3://" is not "s3:/")
    }
    std::filesystem::path path = std::filesystem::absolute(value).lexically_normal();
    if (!path.has_filename() && path.has_parent_path() && path != path.root_path()) {
        path = path.parent_path();
    }
    return path;
}

using Problem = tl::expected<void, std::string>;

Problem bad(std::string message) {
    return tl::unexpected(std::move(message));
}

Problem set_bool(bool& target, std::string_view value) {
    const auto parsed = parse_config_bool(value);
    if (!parsed) {
        return bad(
            fmt::format("invalid boolean '{}' (expected 1/0, yes/no, true/false, on/off)", value));
    }
    target = *parsed;
    return {};
}

Problem set_count(unsigned& target, std::string_view value, unsigned minimum, unsigned maximum) {
    const auto parsed = parse_count(value, minimum, maximum);
    if (!parsed) {
        return bad(fmt::format("invalid number '{}' (expected {} to {})", value, minimum, maximum));
    }
    target = *parsed;
    return {};
}

// Sets `target` to a size ("64M", as --s3-part-size: parse_byte_size).
Problem set_size(std::uint64_t& target, std::string_view value) {
    const auto bytes = parse_byte_size(value);
    if (!bytes) {
        return bad(fmt::format(
            "invalid size '{}' (expected bytes with an optional k, M or G suffix, e.g. 64M)",
            value));
    }
    target = *bytes;
    return {};
}

// The settings of [main] itself, and where dnf's configuration is for `repo = ID` jobs.
struct MainSection {
    std::vector<const config::IniEntry*> job_defaults;  // job keys and `.repo` keys, in order
    std::optional<std::filesystem::path> dnf_config;
    std::optional<std::vector<std::filesystem::path>> reposdirs;
};

Result<void> read_main(const config::IniSection& section, const std::string& file,
                       const VariableContext& vars, JobsConfig& jobs, MainSection& main,
                       std::vector<ConfigWarning>& warnings) {
    for (const config::IniEntry& entry : section.entries) {
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
void read_variable_keys(const config::IniSection& section, VariableOptions& options) {
    for (const config::IniEntry& entry : section.entries) {
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

// dnf's repositories, for `repo = ID` jobs: loaded once, on first use.
class DnfRepos {
  public:
    DnfRepos(const MainSection& main, const VariableContext& vars) : main_(main), vars_(vars) {}

    // Returns the repository `id` of dnf's configuration, or the message why there is none.
    tl::expected<RepoConfig, std::string> find(const std::string& id,
                                               std::vector<ConfigWarning>& warnings) {
        if (!repos_) {
            ConfigSources sources;
            if (main_.dnf_config) {
                sources.config_file = main_.dnf_config;
            }
            sources.reposdirs = main_.reposdirs;
            repos_ = load_repo_configs(sources, vars_, warnings);
        }
        if (!*repos_) {
            return tl::unexpected(
                fmt::format("cannot read dnf's configuration: {}", repos_->error().to_string()));
        }
        for (const RepoConfig& repo : **repos_) {
            if (repo.id == id) {
                return repo;
            }
        }
        return tl::unexpected(
            fmt::format("no repository '{}' in dnf's configuration ({}, reposdir {})", id,
                        main_.dnf_config ? main_.dnf_config->string() : "/etc/dnf/dnf.conf",
                        main_.reposdirs ? "from [main]" : "of dnf.conf"));
    }

  private:
    const MainSection& main_;
    const VariableContext& vars_;
    std::optional<Result<std::vector<RepoConfig>>> repos_;
};

// Builds one job from [main]'s defaults and its section.
class JobBuilder {
  public:
    JobBuilder(const std::string& file, const config::IniSection& section,
               const VariableContext& vars, std::vector<ConfigWarning>& warnings)
        : file_(file), section_(section), vars_(vars), warnings_(warnings) {
        job_.name = section.name;
        job_.defined_at = ConfigLocation{file, section.line};
        job_.options.norepopath = true;
    }

    JobConfig build(const JobsConfig& jobs, const MainSection& main, const std::string& main_file,
                    DnfRepos& dnf) {
        const config::IniEntry* repo_entry = nullptr;
        const config::IniEntry* url_entry = nullptr;
        for (const config::IniEntry& entry : section_.entries) {
            const std::string key = canonical_key(entry.key);
            if (key == "repo" && repo_entry == nullptr) {
                repo_entry = &entry;
            } else if (is_one_of(kUrlSourceKeys, key) && url_entry == nullptr) {
                url_entry = &entry;
            }
        }
        if (repo_entry != nullptr && url_entry != nullptr) {
            const config::IniEntry& later =
                repo_entry->line > url_entry->line ? *repo_entry : *url_entry;
            const config::IniEntry& earlier =
                repo_entry->line > url_entry->line ? *url_entry : *repo_entry;
            fail(later.line, later.key,
                 fmt::format("two sources: '{}' (line {}) and '{}'; give either repo = ID or "
                             "baseurl/mirrorlist/metalink",
                             earlier.key, earlier.line, later.key));
        } else if (repo_entry == nullptr && url_entry == nullptr) {
            fail(section_.line, "source",
                 "no source: give repo = ID, or baseurl, mirrorlist or metalink");
        }
        if (repo_entry != nullptr && url_entry == nullptr) {
            const std::string id =
                *config::substitute(repo_entry->value, vars_, config::UndefinedPolicy::Keep);
            auto repo = dnf.find(id, warnings_);
            if (repo) {
                job_.repo = std::move(*repo);
            } else {
                fail(repo_entry->line, repo_entry->key, repo.error());
            }
        } else if (repo_entry == nullptr) {
            // [main]'s `.repo` keys are this repository's defaults (dnf's own repositories have
            // their configuration's instead).
            for (const config::IniEntry* entry : main.job_defaults) {
                apply_repo_key(*entry, main_file, "[main]");
            }
        }
        job_.repo.id = job_.name;
        job_.repo.enabled = true;
        job_.repo.defined_at = job_.defined_at;
        for (const config::IniEntry* entry : main.job_defaults) {
            apply_job_key(*entry, main_file);
        }
        std::map<std::string, std::size_t> first_line_of_key;
        for (const config::IniEntry& entry : section_.entries) {
            const std::string key = canonical_key(entry.key);
            const std::string alias_free = key == "exclude" ? "excludepkgs" : key;
            if (const auto [it, inserted] = first_line_of_key.emplace(alias_free, entry.line);
                !inserted) {
                warn(warnings_, ConfigWarningKind::DuplicateKey, {file_, entry.line}, entry.key,
                     fmt::format("key '{}' of job '{}' given again (first at line {}); the later "
                                 "value wins",
                                 entry.key, job_.name, it->second));
            }
            if (key == "repo") {
                continue;
            }
            if (!apply_job_key(entry, file_)) {
                if (config::find_repo_option(key) != nullptr) {
                    apply_repo_key(entry, file_, "");
                } else if (config::is_ignored_repo_key(key) || config::is_ignored_main_key(key)) {
                    warn(warnings_, ConfigWarningKind::IgnoredKey, {file_, entry.line}, entry.key,
                         fmt::format("key '{}' in job '{}' is not used by rpmirror; ignored",
                                     entry.key, job_.name));
                } else {
                    warn(warnings_, ConfigWarningKind::UnknownKey, {file_, entry.line}, entry.key,
                         fmt::format("unknown key '{}' in job '{}'", entry.key, job_.name));
                }
            }
        }
        finish(jobs);
        return std::move(job_);
    }

  private:
    // Records a bad value of this job.
    void fail(std::size_t line, std::string_view key, const std::string& what) {
        fail_at(file_, line, key, what);
    }
    void fail_at(const std::string& file, std::size_t line, std::string_view key,
                 const std::string& what) {
        job_.errors.push_back(
            fmt::format("{}:{}: job '{}': {}: {}", file, line, job_.name, key, what));
    }

    // Applies a `.repo` key as read_repo_file does (variables, validation).
    void apply_repo_key(const config::IniEntry& entry, const std::string& file,
                        std::string_view owner) {
        const std::string key = canonical_key(entry.key);
        const config::RepoOption* option = config::find_repo_option(key);
        if (option == nullptr) {
            return;  // a job key of [main]
        }
        const auto prefixed = [&](const std::string& what) {
            return owner.empty() ? what : fmt::format("{} ({})", what, owner);
        };
        auto value = config::substitute(
            entry.value, vars_,
            option->is_url ? config::UndefinedPolicy::Fail : config::UndefinedPolicy::Keep);
        if (!value) {
            fail_at(file, entry.line, entry.key,
                    prefixed(value.error().variable.empty()
                                 ? value.error().detail
                                 : fmt::format("undefined variable '{}'", value.error().variable)));
            return;
        }
        if (auto set = option->set(job_.repo, key, *value); !set) {
            fail_at(file, entry.line, entry.key, prefixed(set.error()));
        }
    }

    // Applies a job key; returns false iff `entry` is not one.
    bool apply_job_key(const config::IniEntry& entry, const std::string& file) {
        const auto handler = job_keys().find(canonical_key(entry.key));
        if (handler == job_keys().end()) {
            return false;
        }
        const std::string value =
            *config::substitute(entry.value, vars_, config::UndefinedPolicy::Keep);
        if (const Problem problem = handler->second(*this, {value, entry, file}); !problem) {
            fail_at(file, entry.line, entry.key, problem.error());
        }
        return true;
    }

    // What one job key is given: its value (variables substituted) and where it was set.
    struct KeyValue {
        const std::string& value;
        const config::IniEntry& entry;
        const std::string& file;
    };
    using KeyHandler = Problem (*)(JobBuilder&, const KeyValue&);

    // Every key of a job that is not a `.repo` key (canonical spelling), and what it sets.
    friend bool is_job_key(std::string_view key);
    static const std::map<std::string_view, KeyHandler>& job_keys() {
        static const std::map<std::string_view, KeyHandler> keys = {
            {"repo", [](JobBuilder&, const KeyValue&) -> Problem { return {}; }},  // build()'s
            {"destination",
             [](JobBuilder& job, const KeyValue& key) -> Problem {
                 job.destination_ = directory_path(key.value);
                 job.destination_line_ = key.entry.line;
                 return {};
             }},
            {"metadata_path",
             [](JobBuilder& job, const KeyValue& key) -> Problem {
                 job.job_.options.metadata_path = directory_path(key.value);
                 return {};
             }},
            {"arch",
             [](JobBuilder& job, const KeyValue& key) -> Problem {
                 job.job_.options.selection.arches = config::split_list(key.value);
                 return {};
             }},
            {"newest_only",
             [](JobBuilder& job, const KeyValue& key) {
                 return set_bool(job.job_.options.selection.newest_only, key.value);
             }},
            {"keep_versions",
             [](JobBuilder& job, const KeyValue& key) -> Problem {
                 const auto versions = parse_keep_versions(key.value);
                 if (!versions) {
                     return bad(
                         fmt::format("invalid number '{}' (expected 1 to 1000000)", key.value));
                 }
                 job.keep_versions_ = *versions;
                 return {};
             }},
            {"source",
             [](JobBuilder& job, const KeyValue& key) {
                 return set_bool(job.job_.options.selection.source_only, key.value);
             }},
            {"download_metadata",
             [](JobBuilder& job, const KeyValue& key) {
                 return set_bool(job.job_.options.download_metadata, key.value);
             }},
            {"upstream_metadata",
             [](JobBuilder& job, const KeyValue& key) {
                 return set_bool(job.job_.options.upstream_metadata, key.value);
             }},
            {"sign_key",
             [](JobBuilder& job, const KeyValue& key) -> Problem {
                 job.job_.options.sign_key = key.value;
                 job.sign_key_line_ = key.entry.line;
                 job.sign_key_file_ = key.file;
                 return {};
             }},
            {"delete",
             [](JobBuilder& job, const KeyValue& key) {
                 return set_bool(job.job_.options.delete_unlisted, key.value);
             }},
            {"gpgcheck",
             [](JobBuilder& job, const KeyValue& key) {
                 bool check = false;
                 Problem problem = set_bool(check, key.value);
                 job.gpgcheck_ = check;
                 return problem;
             }},
            {"gpgcheck_keys",
             [](JobBuilder& job, const KeyValue& key) -> Problem {
                 if (key.value != "rpmdb" && key.value != "repo") {
                     return bad(
                         fmt::format("invalid value '{}' (expected rpmdb or repo)", key.value));
                 }
                 job.job_.options.package_keys =
                     key.value == "repo" ? PackageKeySource::Repository : PackageKeySource::Rpmdb;
                 return {};
             }},
            {"min_buildtime",
             [](JobBuilder& job, const KeyValue& key) -> Problem {
                 const auto floor = parse_min_build_time(key.value);
                 if (!floor) {
                     return bad(fmt::format(
                         "invalid date '{}' (expected YYYY-MM-DD or seconds since the epoch)",
                         key.value));
                 }
                 job.job_.options.selection.min_build_time = *floor;
                 return {};
             }},
            {"remote_time",
             [](JobBuilder& job, const KeyValue& key) {
                 return set_bool(job.job_.options.remote_time, key.value);
             }},
            {"downloadcomps",
             [](JobBuilder& job, const KeyValue& key) {
                 return set_bool(job.job_.options.download_comps, key.value);
             }},
            {"dedupe",
             [](JobBuilder& job, const KeyValue& key) -> Problem {
                 const auto mode = parse_dedupe_mode(key.value);
                 if (!mode) {
                     return bad(fmt::format(
                         "invalid value '{}' (expected hardlink, reflink or off)", key.value));
                 }
                 job.job_.options.dedupe = *mode;
                 return {};
             }},
            {"zchunk",
             [](JobBuilder& job, const KeyValue& key) {
                 return set_bool(job.job_.options.zchunk, key.value);
             }},
            {"dedupe_dir",
             [](JobBuilder& job, const KeyValue& key) -> Problem {
                 for (const std::string& directory : config::split_list(key.value)) {
                     job.job_.options.dedupe_dirs.push_back(directory_path(directory));
                 }
                 return {};
             }},
            {"snapshot",
             [](JobBuilder& job, const KeyValue& key) -> Problem {
                 job.snapshot_at_ = ConfigLocation{key.file, key.entry.line};
                 if (const auto on = parse_config_bool(key.value)) {
                     job.job_.snapshot = *on ? std::optional<std::string>("") : std::nullopt;
                     return {};
                 }
                 if (!is_valid_repo_id(key.value)) {
                     return bad(
                         fmt::format("invalid value '{}' (expected a boolean or a snapshot "
                                     "name: letters, digits, '-', '_', '.', ':')",
                                     key.value));
                 }
                 job.job_.snapshot = key.value;
                 return {};
             }},
            {"keep_snapshots",
             [](JobBuilder& job, const KeyValue& key) {
                 unsigned keep = 0;
                 Problem problem = set_count(keep, key.value, 0, 1000000);
                 job.job_.keep_snapshots = keep;
                 return problem;
             }},
            {"snapshot_dir",
             [](JobBuilder& job, const KeyValue& key) -> Problem {
                 job.job_.snapshot_dir = directory_path(key.value);
                 return {};
             }},
            {"parallel",
             [](JobBuilder& job, const KeyValue& key) {
                 unsigned parallel = 0;
                 Problem problem = set_count(parallel, key.value, 1, 256);
                 job.job_.options.parallel = parallel;
                 return problem;
             }},
            {"connections_per_file",
             [](JobBuilder& job, const KeyValue& key) {
                 return set_count(job.job_.options.connections_per_file, key.value, 1, 64);
             }},
            {"segment_min_size",
             [](JobBuilder& job, const KeyValue& key) {
                 return set_size(job.job_.options.segment_min_size, key.value);
             }},
            {"s3_spool_dir",
             [](JobBuilder& job, const KeyValue& key) -> Problem {
                 job.job_.options.s3_spool_dir = directory_path(key.value);
                 return {};
             }},
            {"s3_spool_size",
             [](JobBuilder& job, const KeyValue& key) {
                 job.sizes_at_ =
                     std::make_pair(ConfigLocation{key.file, key.entry.line}, key.entry.key);
                 return set_size(job.job_.options.s3_spool_size, key.value);
             }},
            {"s3_parallel",
             [](JobBuilder& job, const KeyValue& key) {
                 return set_count(job.job_.options.s3_parallel, key.value, 1, 64);
             }},
            {"s3_part_size",
             [](JobBuilder& job, const KeyValue& key) {
                 job.sizes_at_ =
                     std::make_pair(ConfigLocation{key.file, key.entry.line}, key.entry.key);
                 Problem problem = set_size(job.job_.options.s3_part_size, key.value);
                 if (problem && job.job_.options.s3_part_size < s3::kMinPartSize) {
                     problem = bad(fmt::format("'{}' is not a size of at least 5M", key.value));
                 }
                 return problem;
             }},
            {"s3_acl",
             [](JobBuilder& job, const KeyValue& key) -> Problem {
                 job.job_.options.s3_acl = key.value;
                 return {};
             }},
            {"exec_on_change",
             [](JobBuilder& job, const KeyValue& key) -> Problem {
                 job.job_.exec_on_change = key.value;
                 return {};
             }},
            {"enabled", [](JobBuilder& job,
                           const KeyValue& key) { return set_bool(job.job_.enabled, key.value); }},
        };
        return keys;
    }

    // Settles what depends on several keys.
    void finish(const JobsConfig& jobs) {
        SyncOptions& options = job_.options;
        if (keep_versions_) {
            options.selection.newest_only = true;
            options.selection.keep_versions = *keep_versions_;
        }
        if (gpgcheck_) {
            job_.repo.gpgcheck = *gpgcheck_;
            options.check_package_signatures = *gpgcheck_;
        }
        if (!options.sign_key.empty() &&
            (!options.download_metadata || options.upstream_metadata)) {
            fail_at(sign_key_file_, sign_key_line_, "sign-key",
                    "needs download-metadata = 1 and upstream-metadata = 0");
        }
        if (destination_) {
            options.download_path = *destination_;
        } else if (jobs.destination) {
            options.download_path = *jobs.destination / job_.name;
        } else {
            fail(section_.line, "destination",
                 "not set (give destination = DIR here, or a base destination in [main])");
        }
        if (jobs.state_dir) {
            options.state_dir = *jobs.state_dir;
        }
        options.s3 = jobs.s3;
        if (sizes_at_ && options.s3_spool_size < options.s3_part_size) {
            fail_at(sizes_at_->first.file, sizes_at_->first.line, sizes_at_->second,
                    fmt::format("s3-spool-size ({} bytes) is below s3-part-size ({} bytes)",
                                options.s3_spool_size, options.s3_part_size));
        }
    }

    const std::string& file_;
    const config::IniSection& section_;
    const VariableContext& vars_;
    std::vector<ConfigWarning>& warnings_;
    JobConfig job_;
    std::optional<std::filesystem::path> destination_;
    std::size_t destination_line_ = 0;
    std::optional<std::uint32_t> keep_versions_;
    std::optional<bool> gpgcheck_;
    // Where s3-spool-size or s3-part-size was last set (the spool must hold a part).
    std::optional<std::pair<ConfigLocation, std::string>> sizes_at_;  // and the key
    std::optional<ConfigLocation> snapshot_at_;                       // where `snapshot` was set
    std::size_t sign_key_line_ = 0;
    std::string sign_key_file_;

  public:
    std::size_t destination_line() const { return destination_line_; }
    // Where `snapshot` was set (this section or [main]); nullopt iff nowhere.
    const std::optional<ConfigLocation>& snapshot_at() const { return snapshot_at_; }
};

bool is_job_key(std::string_view key) {
    return JobBuilder::job_keys().contains(key);
}

// Fails every job whose repository directory another job (defined earlier) uses.
void check_destinations(std::vector<JobConfig>& jobs,
                        const std::vector<std::size_t>& destination_lines) {
    std::map<std::filesystem::path, const JobConfig*> owners;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        JobConfig& job = jobs[i];
        if (!job.errors.empty()) {
            continue;
        }
        const std::filesystem::path directory = job.options.download_path.lexically_normal();
        const auto [it, inserted] = owners.emplace(directory, &job);
        if (!inserted) {
            const std::size_t line =
                destination_lines[i] > 0 ? destination_lines[i] : job.defined_at.line;
            job.errors.push_back(
                fmt::format("{}:{}: job '{}': destination: {} is the destination of job '{}' ({})",
                            job.defined_at.file, line, job.name, directory.string(),
                            it->second->name, it->second->defined_at.to_string()));
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
    std::vector<std::pair<std::string, std::vector<config::IniSection>>> files;
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
    const config::IniSection* main_section = nullptr;
    for (const auto& [file, sections] : files) {
        for (const config::IniSection& section : sections) {
            if (section.name != kMainSection) {
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
        const config::IniSection probe{"main", main_section->line, {}};
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
    std::vector<std::size_t> destination_lines;
    for (const auto& [file, sections] : files) {
        for (const config::IniSection& section : sections) {
            if (section.name == kMainSection) {
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
            JobBuilder builder(file, section, *vars, warnings);
            jobs.jobs.push_back(builder.build(jobs, main, main_file, dnf));
            destination_lines.push_back(builder.destination_line());
            const JobConfig& job = jobs.jobs.back();
            if (job.snapshot && job.snapshot_dir &&
                s3::is_s3_url(job.options.download_path.native()) !=
                    s3::is_s3_url(job.snapshot_dir->native())) {
                return located_error(
                    builder.snapshot_at().value_or(where),
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
    check_destinations(jobs.jobs, destination_lines);
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
