// JobBuilder: one job of rpmirror.conf(5) from [main]'s defaults and its section, and the table
// of job keys (those that are not `.repo` keys) with what each one sets.
#include <algorithm>
#include <charconv>
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
#include "rpmirror/jobs/jobs_config.hpp"
#include "rpmirror/s3/s3.hpp"
#include "s3/upload.hpp"
#include "store/destination.hpp"
#include "sync/sync_options.hpp"
#include "util/ini.hpp"

namespace rpmirror::config {
namespace {

std::optional<unsigned> parse_count(std::string_view text, unsigned minimum, unsigned maximum) {
    unsigned value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value < minimum ||
        value > maximum) {
        return std::nullopt;
    }
    return value;
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

}  // namespace

std::string canonical_key(std::string_view key) {
    std::string canonical(key);
    std::replace(canonical.begin(), canonical.end(), '-', '_');
    return canonical;
}

std::filesystem::path directory_path(const std::string& value) {
    return store::Destination::of(value).configured();
}

Problem bad(std::string message) {
    return tl::unexpected(std::move(message));
}

Problem set_count(unsigned& target, std::string_view value, unsigned minimum, unsigned maximum) {
    const auto parsed = parse_count(value, minimum, maximum);
    if (!parsed) {
        return bad(fmt::format("invalid number '{}' (expected {} to {})", value, minimum, maximum));
    }
    target = *parsed;
    return {};
}

JobConfig JobBuilder::build(const JobsConfig& jobs, const MainSection& main,
                            const std::string& main_file, DnfRepos& dnf) {
    const ini::IniEntry* repo_entry = nullptr;
    const ini::IniEntry* url_entry = nullptr;
    for (const ini::IniEntry& entry : section_.entries) {
        const std::string key = canonical_key(entry.key);
        if (key == "repo" && repo_entry == nullptr) {
            repo_entry = &entry;
        } else if (is_one_of(kUrlSourceKeys, key) && url_entry == nullptr) {
            url_entry = &entry;
        }
    }
    if (repo_entry != nullptr && url_entry != nullptr) {
        const ini::IniEntry& later = repo_entry->line > url_entry->line ? *repo_entry : *url_entry;
        const ini::IniEntry& earlier =
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
        for (const ini::IniEntry* entry : main.job_defaults) {
            apply_repo_key(*entry, main_file, "[main]");
        }
    }
    job_.repo.id = job_.name;
    job_.repo.enabled = true;
    job_.repo.defined_at = job_.defined_at;
    for (const ini::IniEntry* entry : main.job_defaults) {
        apply_job_key(*entry, main_file);
    }
    std::map<std::string, std::size_t> first_line_of_key;
    for (const ini::IniEntry& entry : section_.entries) {
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
                     fmt::format("key '{}' in job '{}' is not used by rpmirror; ignored", entry.key,
                                 job_.name));
            } else {
                warn(warnings_, ConfigWarningKind::UnknownKey, {file_, entry.line}, entry.key,
                     fmt::format("unknown key '{}' in job '{}'", entry.key, job_.name));
            }
        }
    }
    for (const std::string& id : closure_repo_ids_) {
        auto repo = dnf.find(id, warnings_);
        if (repo) {
            job_.closure_repos.push_back(std::move(*repo));
        } else {
            fail_at(closure_repos_file_, closure_repos_line_, "closure-repos", repo.error());
        }
    }
    finish(jobs);
    return std::move(job_);
}

void JobBuilder::apply_repo_key(const ini::IniEntry& entry, const std::string& file,
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

bool JobBuilder::apply_job_key(const ini::IniEntry& entry, const std::string& file) {
    const auto handler = job_keys().find(canonical_key(entry.key));
    if (handler == job_keys().end()) {
        return false;
    }
    const std::string value =
        *config::substitute(entry.value, vars_, config::UndefinedPolicy::Keep);
    key_locations_.insert_or_assign(std::string(handler->first), ConfigLocation{file, entry.line});
    if (const Problem problem = handler->second(*this, {value, entry, file}); !problem) {
        fail_at(file, entry.line, entry.key, problem.error());
    }
    return true;
}

bool JobBuilder::set_in_section(std::string_view canonical) const {
    return std::any_of(
        section_.entries.begin(), section_.entries.end(),
        [&](const ini::IniEntry& entry) { return canonical_key(entry.key) == canonical; });
}

std::string JobBuilder::value_of(std::string_view canonical) const {
    std::string value;
    for (const ini::IniEntry& entry : section_.entries) {
        if (canonical_key(entry.key) == canonical) {
            value = entry.value;
        }
    }
    return value;
}

const std::map<std::string_view, JobBuilder::KeyHandler>& JobBuilder::job_keys() {
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
                 return bad(fmt::format("invalid number '{}' (expected 1 to 1000000)", key.value));
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
        {"download_policy",
         [](JobBuilder& job, const KeyValue& key) -> Problem {
             auto policy = parse_download_policy(key.value, "download-policy");
             if (!policy) {
                 return bad(policy.error().message);
             }
             job.job_.options.download_policy = *policy;
             return {};
         }},
        {"prefetch",
         [](JobBuilder& job, const KeyValue& key) -> Problem {
             auto prefetch = parse_prefetch(key.value, "prefetch");
             if (!prefetch) {
                 return bad(prefetch.error().message);
             }
             job.job_.options.prefetch = std::move(*prefetch);
             return {};
         }},
        {"cache_max_size",
         [](JobBuilder& job, const KeyValue& key) -> Problem {
             if (auto set = set_size(job.job_.options.cache_max_size, key.value);
                 !set || job.job_.options.cache_max_size > 0) {
                 return set;
             }
             return bad(
                 "invalid size '0' (expected more than 0 bytes; leave the key out for no "
                 "bound)");
         }},
        {"publish_partial",
         [](JobBuilder& job, const KeyValue& key) {
             return set_bool(job.job_.options.publish_partial, key.value);
         }},
        {"upstream_layout",
         [](JobBuilder& job, const KeyValue& key) {
             return set_bool(job.job_.options.upstream_layout, key.value);
         }},
        {"treeinfo",
         [](JobBuilder& job, const KeyValue& key) {
             return set_bool(job.job_.options.treeinfo, key.value);
         }},
        {"skip_bad_images",
         [](JobBuilder& job, const KeyValue& key) {
             return set_bool(job.job_.options.skip_bad_images, key.value);
         }},
        {"flatten_hrefs",
         [](JobBuilder& job, const KeyValue& key) {
             return set_bool(job.job_.options.flatten_hrefs, key.value);
         }},
        {"keep_releases",
         [](JobBuilder& job, const KeyValue& key) {
             return set_count(job.job_.options.keep_releases, key.value, 1, 1000000);
         }},
        {"releases",
         [](JobBuilder&, const KeyValue& key) -> Problem {
             // Read by load_jobs_config, which builds the job once per release.
             if (config::split_list(key.value).empty()) {
                 return bad("no release given (expected releases = RELEASEVER ...)");
             }
             return {};
         }},
        {"mirror_url",
         [](JobBuilder& job, const KeyValue& key) -> Problem {
             job.job_.options.mirror_url = key.value;
             return {};
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
        {"force_delete",
         [](JobBuilder& job, const KeyValue& key) {
             return set_bool(job.job_.options.force_delete, key.value);
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
                 return bad(fmt::format("invalid value '{}' (expected rpmdb or repo)", key.value));
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
        {"advisories",
         [](JobBuilder& job, const KeyValue& key) -> Problem {
             if (auto parsed = parse_advisories(key.value, job.job_.options.selection.advisories);
                 !parsed) {
                 return bad(parsed.error().message);
             }
             return {};
         }},
        {"advisory_severity",
         [](JobBuilder& job, const KeyValue& key) -> Problem {
             if (auto parsed =
                     parse_advisory_severities(key.value, job.job_.options.selection.advisories);
                 !parsed) {
                 return bad(fmt::format("invalid severity in '{}' ({})", key.value,
                                        parsed.error().message));
             }
             return {};
         }},
        {"as_of",
         [](JobBuilder& job, const KeyValue& key) -> Problem {
             const auto as_of = parse_as_of(key.value);
             if (!as_of) {
                 return bad(fmt::format(
                     "invalid date '{}' (expected YYYY-MM-DD or seconds since the epoch)",
                     key.value));
             }
             job.job_.options.selection.as_of = *as_of;
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
                 return bad(fmt::format("invalid value '{}' (expected hardlink, reflink or off)",
                                        key.value));
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
        {"packages",
         [](JobBuilder& job, const KeyValue& key) -> Problem {
             job.packages_key_ = split_list(key.value);
             return {};
         }},
        {"packages_file",
         [](JobBuilder& job, const KeyValue& key) -> Problem {
             if (key.value.empty()) {
                 job.packages_file_.clear();
                 return {};
             }
             auto listed = read_package_list(key.value);
             if (!listed) {
                 return bad(listed.error().to_string());
             }
             job.packages_file_ = std::move(*listed);
             return {};
         }},
        {"with_dependencies",
         [](JobBuilder& job, const KeyValue& key) {
             return set_bool(job.job_.with_dependencies, key.value);
         }},
        {"weak_dependencies",
         [](JobBuilder& job, const KeyValue& key) {
             return set_bool(job.job_.weak_dependencies, key.value);
         }},
        {"installed_base",
         [](JobBuilder& job, const KeyValue& key) -> Problem {
             job.job_.installed_base = key.value;
             return {};
         }},
        {"modules",
         [](JobBuilder& job, const KeyValue& key) -> Problem {
             job.job_.modules = split_list(key.value);
             return {};
         }},
        {"closure_repos",
         [](JobBuilder& job, const KeyValue& key) -> Problem {
             job.closure_repo_ids_ = split_list(key.value);
             job.closure_repos_line_ = key.entry.line;
             job.closure_repos_file_ = key.file;
             return {};
         }},
    };
    return keys;
}

void JobBuilder::finish(const JobsConfig& jobs) {
    SyncOptions& options = job_.options;
    if (keep_versions_) {
        options.selection.newest_only = true;
        options.selection.keep_versions = *keep_versions_;
    }
    if (gpgcheck_) {
        job_.repo.gpgcheck = *gpgcheck_;
        options.check_package_signatures = *gpgcheck_;
    }
    if (!options.sign_key.empty() && (!options.download_metadata || options.upstream_metadata)) {
        fail_at(sign_key_file_, sign_key_line_, "sign-key",
                "needs download-metadata = 1 and upstream-metadata = 0");
    }
    if (options.publish_partial && (!options.download_metadata || options.upstream_metadata)) {
        fail(section_.line, "publish-partial",
             "needs download-metadata = 1 and upstream-metadata = 0 (it publishes metadata "
             "rewritten to list the packages in place)");
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
    // prefetch and cache-max-size concern on-demand jobs only: given in [main], they apply to
    // those and leave the others alone; given in a job of another policy, they are refused.
    if (options.download_policy != DownloadPolicy::OnDemand) {
        if (options.prefetch.active() && !set_in_section("prefetch")) {
            options.prefetch = Prefetch{};
        }
        if (options.cache_max_size > 0 && !set_in_section("cache_max_size")) {
            options.cache_max_size = 0;
        }
    }
    if (options.cache_max_size > 0 && options.download_policy != DownloadPolicy::OnDemand) {
        const ConfigLocation at =
            key_at("cache_max_size").value_or(ConfigLocation{file_, section_.line});
        fail_at(
            at.file, at.line, "cache-max-size",
            fmt::format("'{}' needs download-policy on-demand (not {}): it bounds the "
                        "packages `rpmirror serve` keeps as it fetches them",
                        value_of("cache_max_size"), download_policy_name(options.download_policy)));
    }
    if (auto layout = check_placement_options(options);
        !layout &&
        (layout.error().subject == "--download-policy" || layout.error().subject == "--prefetch")) {
        const bool prefetch = layout.error().subject == "--prefetch";
        const ConfigLocation at = key_at(prefetch ? "prefetch" : "download_policy")
                                      .value_or(ConfigLocation{file_, section_.line});
        fail_at(at.file, at.line, prefetch ? "prefetch" : "download-policy",
                layout.error().message);
    } else if (!layout) {
        fail(section_.line,
             options.keep_releases > 0 && layout.error().subject == "--keep-releases"
                 ? "keep-releases"
             : options.flatten_hrefs                                 ? "flatten-hrefs"
             : options.mirror_url.empty() || options.upstream_layout ? "upstream-layout"
                                                                     : "mirror-url",
             layout.error().message);
    }
    job_.packages = packages_key_;
    job_.packages.insert(job_.packages.end(), packages_file_.begin(), packages_file_.end());
    if (!job_.installed_base.empty() && !job_.with_dependencies) {
        fail(section_.line, "installed-base", "needs with-dependencies = 1");
    }
    if (!job_.modules.empty() && !job_.with_dependencies) {
        fail(section_.line, "modules", "needs with-dependencies = 1");
    }
    if (!closure_repo_ids_.empty() && !job_.with_dependencies) {
        fail_at(closure_repos_file_, closure_repos_line_, "closure-repos",
                "needs with-dependencies = 1");
    }
    if (options.prefetch.closure && !job_.with_dependencies) {
        const ConfigLocation at = key_at("prefetch").value_or(ConfigLocation{file_, section_.line});
        fail_at(at.file, at.line, "prefetch",
                "closure needs with-dependencies = 1 (the closure of the job's packages)");
    }
    if (job_.with_dependencies) {
        if (job_.packages.empty() && !options.selection.advisories.active()) {
            fail(section_.line, "with-dependencies", "needs packages, packages-file or advisories");
        } else if (auto closure = check_closure_options(options); !closure) {
            fail(section_.line, "with-dependencies",
                 closure.error().subject + " " + closure.error().message);
        }
    } else {
        job_.repo.includepkgs.insert(job_.repo.includepkgs.end(), job_.packages.begin(),
                                     job_.packages.end());
    }
    options.s3 = jobs.s3;
    if (sizes_at_ && options.s3_spool_size < options.s3_part_size) {
        fail_at(sizes_at_->first.file, sizes_at_->first.line, sizes_at_->second,
                fmt::format("s3-spool-size ({} bytes) is below s3-part-size ({} bytes)",
                            options.s3_spool_size, options.s3_part_size));
    }
}

bool is_job_key(std::string_view key) {
    return JobBuilder::job_keys().contains(key);
}

}  // namespace rpmirror::config
