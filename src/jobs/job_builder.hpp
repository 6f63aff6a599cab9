// Building one job of rpmirror.conf(5) from [main]'s defaults and its section (JobBuilder, in
// job_builder.cpp with the table of job keys), shared with the loader of the files, jobs.cpp
// (private).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "config/common.hpp"
#include "config/repo_files.hpp"
#include "jobs/jobs_config.hpp"
#include "rpmirror/config/config.hpp"
#include "rpmirror/jobs/jobs_config.hpp"

namespace rpmirror::config {

// `-` and `_` are the same in every key: keys are compared in their `_` spelling.
std::string canonical_key(std::string_view key);

// True iff `key` (canonical spelling) is a key of a job that is not a `.repo` key
// (JobBuilder::job_keys()).
bool is_job_key(std::string_view key);

// The `.repo` keys that say where a repository is: one of the two ways to give a job its source.
constexpr std::string_view kUrlSourceKeys[] = {"baseurl", "mirrorlist", "metalink"};

template <std::size_t N>
bool is_one_of(const std::string_view (&keys)[N], std::string_view key) {
    return std::find(std::begin(keys), std::end(keys), key) != std::end(keys);
}

// `value` as a configuration keeps it (store::Destination::configured): a directory absolute and
// lexically normal without a trailing '/', an s3:// URL as given.
std::filesystem::path directory_path(const std::string& value);

using Problem = tl::expected<void, std::string>;

Problem bad(std::string message);

Problem set_count(unsigned& target, std::string_view value, unsigned minimum, unsigned maximum);

// The settings of [main] itself, and where dnf's configuration is for `repo = ID` jobs.
struct MainSection {
    std::vector<const ini::IniEntry*> job_defaults;  // job keys and `.repo` keys, in order
    std::optional<std::filesystem::path> dnf_config;
    std::optional<std::vector<std::filesystem::path>> reposdirs;
};

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
    JobBuilder(const std::string& file, const ini::IniSection& section, const VariableContext& vars,
               std::vector<ConfigWarning>& warnings)
        : file_(file), section_(section), vars_(vars), warnings_(warnings) {
        job_.name = section.name;
        job_.defined_at = ConfigLocation{file, section.line};
        job_.options.norepopath = true;
    }

    JobConfig build(const JobsConfig& jobs, const MainSection& main, const std::string& main_file,
                    DnfRepos& dnf);

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
    void apply_repo_key(const ini::IniEntry& entry, const std::string& file,
                        std::string_view owner);

    // Applies a job key; returns false iff `entry` is not one.
    bool apply_job_key(const ini::IniEntry& entry, const std::string& file);

    // What one job key is given: its value (variables substituted) and where it was set.
    struct KeyValue {
        const std::string& value;
        const ini::IniEntry& entry;
        const std::string& file;
    };
    using KeyHandler = Problem (*)(JobBuilder&, const KeyValue&);

    // Every key of a job that is not a `.repo` key (canonical spelling), and what it sets.
    friend bool is_job_key(std::string_view key);
    static const std::map<std::string_view, KeyHandler>& job_keys();

    // True iff the job's own section gives the key `canonical` (not only [main]).
    bool set_in_section(std::string_view canonical) const;
    // The value the job's section last gives the key `canonical` ("" iff none), as written.
    std::string value_of(std::string_view canonical) const;

    // Settles what depends on several keys.
    void finish(const JobsConfig& jobs);

    const std::string& file_;
    const ini::IniSection& section_;
    const VariableContext& vars_;
    std::vector<ConfigWarning>& warnings_;
    JobConfig job_;
    std::optional<std::filesystem::path> destination_;
    std::size_t destination_line_ = 0;
    std::optional<std::uint32_t> keep_versions_;
    // `packages` and `packages-file`, each as its last line (a job's replaces [main]'s; an empty
    // value clears it): JobConfig::packages is their union.
    std::vector<std::string> packages_key_;
    std::vector<std::string> packages_file_;
    // `closure-repos = ID ...` (dnf's repository ids, resolved at the end of build()) and its line.
    std::vector<std::string> closure_repo_ids_;
    std::size_t closure_repos_line_ = 0;
    std::string closure_repos_file_;
    std::optional<bool> gpgcheck_;
    // Where s3-spool-size or s3-part-size was last set (the spool must hold a part).
    std::optional<std::pair<ConfigLocation, std::string>> sizes_at_;  // and the key
    std::size_t sign_key_line_ = 0;
    std::string sign_key_file_;
    std::map<std::string, ConfigLocation, std::less<>> key_locations_;  // key_at()

  public:
    std::size_t destination_line() const { return destination_line_; }
    // Where the job key `canonical_key` ("destination", "snapshot_dir", ...) was last set (this
    // section or [main]); nullopt iff nowhere.
    std::optional<ConfigLocation> key_at(std::string_view canonical_key) const {
        const auto found = key_locations_.find(canonical_key);
        return found == key_locations_.end() ? std::nullopt
                                             : std::optional<ConfigLocation>(found->second);
    }
    // Where `snapshot` was set (this section or [main]); nullopt iff nowhere.
};

}  // namespace rpmirror::config
