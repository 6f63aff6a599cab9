// `rpmirror verify` as one call: targets chosen, audited, repaired and audited again, for a local
// mirror and one in a bucket (rpmirror/verify.hpp).
#include "rpmirror/verify.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <variant>

#include <fmt/core.h>

#include "rpmirror/s3_audit.hpp"

namespace rpmirror {

void VerifyRunEvents::selection(std::string_view, const SelectionOptions&, std::string_view) {}
void VerifyRunEvents::audited(const RepoAuditReport&, std::string_view) {}
void VerifyRunEvents::repaired(const RepoAuditReport&, const RepairReport&) {}
void VerifyRunEvents::repair_skipped(std::string_view, std::string_view) {}

bool VerifyRunOutcome::ok() const {
    if (refused || error) {
        return false;
    }
    return std::all_of(entries.begin(), entries.end(), [](const AuditRunEntry& entry) {
        return entry.repair ? entry.repair->ok() && entry.after && entry.after->ok()
                            : entry.audit.ok();
    });
}

SelectionOptions choose_selection(const SelectionOverrides& overrides,
                                  const std::optional<RecordedSelection>& recorded,
                                  std::string& origin) {
    SelectionOptions selection;
    if (recorded) {
        selection = recorded->options;
        origin = "recorded by sync";
    } else {
        origin = overrides.all_packages ? "--all-packages"
                                        : "no selection recorded: not mirrored by rpmirror sync";
    }
    bool overridden = false;
    if (overrides.arches) {
        selection.arches = *overrides.arches;
        selection.source_only = false;
        overridden = true;
    }
    if (overrides.source) {
        selection.source_only = true;
        overridden = true;
    }
    if (overrides.newest_only || overrides.keep_versions) {
        selection.newest_only = true;
        selection.keep_versions = overrides.keep_versions.value_or(1);
        overridden = true;
    }
    if (overrides.min_build_time) {
        selection.min_build_time = *overrides.min_build_time;
        overridden = true;
    }
    if (overridden) {
        origin += recorded ? ", overridden by the command line" : "; from the command line";
    }
    return selection;
}

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

namespace {

// The events of a run without a listener.
VerifyRunEvents& events_or_none(VerifyRunEvents* events) {
    static VerifyRunEvents none;
    return events != nullptr ? *events : none;
}

bool matches(const std::string& pattern, const std::string& id) {
    return ::fnmatch(pattern.c_str(), id.c_str(), 0) == 0;
}

bool matches_any(const std::string& id, const std::vector<std::string>& patterns) {
    return std::any_of(patterns.begin(), patterns.end(),
                       [&id](const std::string& pattern) { return matches(pattern, id); });
}

// Returns the first of `patterns` that matches none of `ids`, or null.
const std::string* unmatched_pattern(const std::vector<std::string>& patterns,
                                     const std::vector<std::string>& ids) {
    for (const std::string& pattern : patterns) {
        if (std::none_of(ids.begin(), ids.end(),
                         [&](const std::string& id) { return matches(pattern, id); })) {
            return &pattern;
        }
    }
    return nullptr;
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

VerifyRunOutcome refused(std::string message) {
    VerifyRunOutcome outcome;
    outcome.refused = std::move(message);
    return outcome;
}

// The configured repositories, or the message refusing the run.
Result<std::vector<RepoConfig>> load_sources(const VerifyRunOptions& request) {
    if (!request.load_sources) {
        return std::vector<RepoConfig>();
    }
    return request.load_sources();
}

// One repository to verify, and where it comes from (needed for --remote and --repair).
struct Target {
    std::string id;
    std::optional<RepoConfig> config;
};

// Chooses the repositories of the local mirror `dir` to verify, or the message refusing the run
// iff the request names nothing verifiable.
std::variant<std::vector<Target>, std::string> choose_targets(
    const VerifyRunOptions& request, const std::filesystem::path& dir,
    const std::vector<RepoConfig>& configs) {
    const std::vector<std::string> discovered = discover_repositories(dir);
    std::vector<Target> targets;
    if (!request.remote) {
        if (const std::string* pattern = unmatched_pattern(request.repo_patterns, discovered)) {
            return fmt::format(
                "--repo '{}' matches no repository under {} (no <id>/repodata/repomd.xml)",
                *pattern, dir.string());
        }
        for (const std::string& id : discovered) {
            if (request.repo_patterns.empty() || matches_any(id, request.repo_patterns)) {
                targets.push_back({id, find_config(configs, id)});
            }
        }
        if (targets.empty()) {
            return fmt::format("no repository under {} (no <id>/repodata/repomd.xml); use -p DIR",
                               dir.string());
        }
        return targets;
    }
    if (!request.repo_patterns.empty()) {
        auto selected = select_repos(configs, request.repo_patterns);
        if (!selected) {
            return selected.error().to_string();
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
        return fmt::format(
            "nothing to verify: no repository under {} and no --repo or --repofrompath",
            dir.string());
    }
    return targets;
}

// Adds each of `globs` to `to` that is not there yet.
void add_missing(std::vector<std::string>& to, const std::vector<std::string>& globs) {
    for (const std::string& glob : globs) {
        if (std::find(to.begin(), to.end(), glob) == to.end()) {
            to.push_back(glob);
        }
    }
}

// `verify -p s3://BUCKET/PREFIX`: each repository s3://BUCKET/PREFIX/<id>/ audited in the store
// (rpmirror/s3_audit.hpp), and repaired with the S3 sync when asked.
VerifyRunOutcome verify_s3_mirror(const VerifyRunOptions& request, VerifyRunEvents& events) {
    if (request.remote || !request.safe_write_path.empty()) {
        return refused(
            fmt::format("{}: --remote and --safe-write-path are not supported on an s3:// mirror",
                        request.download_path));
    }
    auto mirror = s3::S3Location::parse(request.download_path);
    if (!mirror) {
        return refused(mirror.error().to_string());
    }
    auto config = s3::resolve_config(request.s3, s3::process_environment());
    if (!config) {
        return refused(config.error().to_string());
    }
    std::vector<RepoConfig> configs;
    if (request.repair) {
        auto loaded = load_sources(request);
        if (!loaded) {
            return refused(loaded.error().to_string());
        }
        configs = std::move(*loaded);
    }
    VerifyRunOutcome outcome;
    auto discovered = discover_s3_repositories(*config, *mirror);
    if (!discovered) {
        outcome.error = std::move(discovered.error());
        return outcome;
    }
    if (const std::string* pattern = unmatched_pattern(request.repo_patterns, *discovered)) {
        return refused(
            fmt::format("--repo '{}' matches no repository under {} (no "
                        "<id>/repodata/repomd.xml or <id>/.rpmirror/state.json)",
                        *pattern, mirror->to_string()));
    }
    std::vector<std::string> ids;
    for (const std::string& id : *discovered) {
        if (request.repo_patterns.empty() || matches_any(id, request.repo_patterns)) {
            ids.push_back(id);
        }
    }
    if (ids.empty()) {
        return refused(
            fmt::format("no repository under {} (no <id>/repodata/repomd.xml or "
                        "<id>/.rpmirror/state.json)",
                        mirror->to_string()));
    }
    std::optional<Syncer> syncer;
    if (request.repair) {
        syncer.emplace();
    }
    S3AuditOptions base_options;
    base_options.use_state = request.use_checksum_cache;
    base_options.report_extra = request.extra;
    base_options.threads = request.threads;
    for (const std::string& id : ids) {
        const s3::S3Location repo{mirror->bucket, mirror->prefix + id + "/"};
        S3AuditOptions options = base_options;
        std::string selection_origin;
        std::optional<RecordedSelection> recorded;
        if (!request.selection.all_packages) {
            auto from_state = recorded_s3_selection(*config, repo);
            if (from_state) {
                recorded = std::move(*from_state);
            }  // an unreadable state is the audit's error, below
        }
        options.selection = choose_selection(request.selection, recorded, selection_origin);
        events.selection(id, options.selection, selection_origin);
        AuditRunEntry entry;
        entry.audit = audit_s3_repository(id, *config, repo, options);
        events.audited(entry.audit, "");
        if (request.repair && !entry.audit.ok()) {
            const std::optional<RepoConfig> source = find_config(configs, id);
            if (!source) {
                events.repair_skipped(id, "FAILED: " + no_source_error(id).message);
            } else {
                S3RepairOptions repair_options;
                repair_options.download_path = request.download_path;
                repair_options.s3 = request.s3;
                repair_options.selection = options.selection;
                repair_options.threads = request.threads;
                repair_options.lock_wait = request.lock_wait;  // the lease is in the bucket
                entry.repair = repair_s3_repository(*syncer, *source, *config, repo, entry.audit,
                                                    repair_options);
                events.repaired(entry.audit, *entry.repair);
                entry.after = audit_s3_repository(id, *config, repo, options);
                events.audited(*entry.after, "after repair");
            }
        }
        outcome.entries.push_back(std::move(entry));
    }
    return outcome;
}

VerifyRunOutcome verify_local_mirror(const VerifyRunOptions& request, VerifyRunEvents& events) {
    const std::filesystem::path dir = request.download_path;
    std::error_code ignored;
    if (!std::filesystem::is_directory(dir, ignored)) {
        return refused(fmt::format("{}: not a directory (-p)", dir.string()));
    }
    std::vector<RepoConfig> configs;
    if (request.remote || request.repair) {
        auto loaded = load_sources(request);
        if (!loaded) {
            return refused(loaded.error().to_string());
        }
        configs = std::move(*loaded);
    }
    auto chosen = choose_targets(request, dir, configs);
    if (std::string* message = std::get_if<std::string>(&chosen)) {
        return refused(std::move(*message));
    }
    const std::vector<Target>& targets = std::get<std::vector<Target>>(chosen);

    AuditOptions base_options;
    base_options.use_checksum_cache = request.use_checksum_cache;
    base_options.report_extra = request.extra;
    base_options.threads = request.threads;
    if (!request.safe_write_path.empty()) {
        base_options.safe_write_path = std::filesystem::absolute(request.safe_write_path);
    }
    std::optional<Syncer> syncer;
    if (request.remote || request.repair) {
        syncer.emplace();
    }
    VerifyRunOutcome outcome;
    for (const Target& target : targets) {
        const std::filesystem::path repo_dir = dir / target.id;
        AuditOptions options = base_options;
        std::string selection_origin;
        std::optional<RecordedSelection> recorded;
        if (!request.selection.all_packages) {
            recorded = recorded_selection(request.state_dir, repo_dir);
        }
        options.selection = choose_selection(request.selection, recorded, selection_origin);
        events.selection(target.id, options.selection, selection_origin);
        std::optional<RemoteMetadata> remote;
        std::optional<Error> setup_error;
        if (request.remote) {
            if (!target.config) {
                setup_error = no_source_error(target.id);
            } else if (auto fetched = RemoteMetadata::fetch(*syncer, *target.config); !fetched) {
                setup_error = std::move(fetched.error());
            } else {
                remote.emplace(std::move(*fetched));
                options.reference_root = remote->root();
                // The configuration's includepkgs/excludepkgs, once each (a recorded selection
                // already has those the sync used).
                add_missing(options.selection.include_globs, target.config->includepkgs);
                add_missing(options.selection.exclude_globs, target.config->excludepkgs);
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
        events.audited(entry.audit, "");
        if (request.repair && !entry.audit.ok()) {
            if (!target.config) {
                events.repair_skipped(target.id, "FAILED: " + no_source_error(target.id).message);
            } else if (request.remote && !remote) {
                events.repair_skipped(
                    target.id, "not attempted (the repository's metadata could not be fetched)");
            } else {
                RepairOptions repair_options;
                repair_options.download_path = dir;
                repair_options.safe_write_path = options.safe_write_path;
                repair_options.use_checksum_cache = request.use_checksum_cache;
                repair_options.threads = request.threads;
                repair_options.selection = options.selection;
                repair_options.state_dir = request.state_dir;
                repair_options.lock_wait = request.lock_wait;
                entry.repair =
                    repair_repository(*syncer, *target.config, entry.audit, repair_options);
                events.repaired(entry.audit, *entry.repair);
                entry.after = audit_repository(target.id, repo_dir, options);
                events.audited(*entry.after, "after repair");
            }
        }
        outcome.entries.push_back(std::move(entry));
    }
    return outcome;
}

}  // namespace

VerifyRunOutcome verify_mirror(const VerifyRunOptions& request, VerifyRunEvents* events) {
    VerifyRunEvents& listener = events_or_none(events);
    return s3::is_s3_url(request.download_path) ? verify_s3_mirror(request, listener)
                                                : verify_local_mirror(request, listener);
}

}  // namespace rpmirror
