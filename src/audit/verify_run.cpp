// `rpmirror verify` as one call: targets chosen, audited, repaired and audited again, for a local
// mirror and one in a bucket (rpmirror/audit/verify.hpp).
#include "rpmirror/audit/verify.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <functional>
#include <variant>

#include <fmt/core.h>

#include "audit/audit.hpp"
#include "audit/report_parts.hpp"
#include "config/repo_files.hpp"
#include "store/local_store.hpp"
#include "store/mirror_root.hpp"
#include "store/source_record.hpp"

namespace rpmirror {

void VerifyRunEvents::selection(std::string_view, const SelectionOptions&, std::string_view) {}
void VerifyRunEvents::audited(const RepoAuditReport&, std::string_view) {}
void VerifyRunEvents::repaired(const RepoAuditReport&, const RepairReport&) {}
void VerifyRunEvents::repair_skipped(std::string_view, std::string_view) {}
void VerifyRunEvents::source(std::string_view, std::string_view) {}

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

namespace {

// What a mirror's root lacks where no repository is found.
constexpr std::string_view kNoRepository = "no <id>/repodata/repomd.xml, nor a sync's state";

// The events of a run without a listener.
VerifyRunEvents& events_or_none(VerifyRunEvents* events) {
    static VerifyRunEvents none;
    return events != nullptr ? *events : none;
}

// True iff `pattern` matches `id`, or the tree a tree's repository "<tree>/<path>" belongs to.
bool matches(const std::string& pattern, const std::string& id) {
    const std::size_t slash = id.find('/');
    return ::fnmatch(pattern.c_str(), id.c_str(), 0) == 0 ||
           (slash != std::string::npos &&
            ::fnmatch(pattern.c_str(), id.substr(0, slash).c_str(), 0) == 0);
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

// One repository to verify, and where it comes from (needed for --remote and --repair).
struct Target {
    Target(std::string target_id, std::optional<RepoConfig> configured)
        : id(std::move(target_id)), config(std::move(configured)) {}

    std::string id;
    std::optional<RepoConfig> config;
    // Without a configured source: the record its mirror has (store/source_record.hpp), or why
    // there is none to use.
    std::string record;               // the record's name
    bool recorded = false;            // `config` is the record's
    std::string ignored;              // a record of another repository: the sentence
    std::optional<Error> unreadable;  // a record that cannot be read or parsed
};

// Why `target` has no source: its record's error, or none configured nor recorded.
Error no_source_error(const Target& target) {
    if (target.unreadable) {
        return *target.unreadable;
    }
    std::string message = fmt::format(
        "no source is configured for this repository (give --repofrompath {},URL, or a .repo "
        "file with -c/--reposdir), {}",
        target.id,
        target.record.empty() ? "nor is one read for a tree's repository (`rpmirror sync "
                                "--treeinfo` of its tree fetches it again)"
                              : store::no_recorded_source(target.record));
    if (!target.ignored.empty()) {
        message += "; " + target.ignored;
    }
    return Error{ErrorCode::BadInput, std::move(message), target.id, 0};
}

// Completes `target`, iff no configuration defines it, with the source its mirror records
// (store/source_record.hpp; not a tree's repository "<tree>/<path>": its tree's
// `sync --treeinfo` syncs it).
void complete_from_record(store::MirrorRoot& root, Target& target) {
    if (target.config || target.id.find('/') != std::string::npos) {
        return;
    }
    const std::unique_ptr<store::MirrorStore> mirror = root.repository(target.id);
    auto read = store::read_source_record(*mirror, target.id);
    if (!read) {
        target.unreadable = std::move(read.error());
        return;
    }
    target.record = read->record;
    if (read->source) {
        target.config = std::move(read->source->config);
        target.recorded = true;
    } else {
        target.ignored = std::move(read->ignored);
    }
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

// Chooses the repositories of the mirror at `root` (holding `discovered`) to verify, or the
// message refusing the run iff the request names nothing verifiable.
std::variant<std::vector<Target>, std::string> choose_targets(
    const VerifyRunOptions& request, const std::string& root,
    const std::vector<std::string>& discovered, const std::vector<RepoConfig>& configs) {
    std::vector<Target> targets;
    if (!request.remote) {
        if (const std::string* pattern = unmatched_pattern(request.repo_patterns, discovered)) {
            return fmt::format("--repo '{}' matches no repository under {} ({})", *pattern, root,
                               kNoRepository);
        }
        for (const std::string& id : discovered) {
            if (request.repo_patterns.empty() || matches_any(id, request.repo_patterns)) {
                targets.push_back({id, find_config(configs, id)});
            }
        }
        if (targets.empty()) {
            return fmt::format("no repository under {} ({}); use -p DIR", root, kNoRepository);
        }
        return targets;
    }
    if (!request.repo_patterns.empty()) {
        // A pattern no configuration matches, but a mirrored repository does: that repository,
        // its source left to its mirror's record.
        std::vector<std::string> configured;
        for (const std::string& pattern : request.repo_patterns) {
            if (std::any_of(
                    configs.begin(), configs.end(),
                    [&](const RepoConfig& config) { return matches(pattern, config.id); }) ||
                std::none_of(discovered.begin(), discovered.end(),
                             [&](const std::string& id) { return matches(pattern, id); })) {
                configured.push_back(pattern);
                continue;
            }
            for (const std::string& id : discovered) {
                if (matches(pattern, id) &&
                    std::none_of(targets.begin(), targets.end(),
                                 [&](const Target& target) { return target.id == id; })) {
                    targets.push_back({id, std::nullopt});
                }
            }
        }
        if (configured.empty()) {
            return targets;
        }
        auto selected = select_repos(configs, configured);
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
            "nothing to verify: no repository under {} and no --repo or --repofrompath", root);
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

// One repository of either store: its selection (what its last sync recorded, with the command
// line's overrides), the audit, and with --repair the repair and a second audit.
class RepositoryVerifier {
  public:
    RepositoryVerifier(const VerifyRunOptions& request, VerifyRunEvents& events, Syncer* syncer,
                       store::MirrorRoot& root)
        : request_(request), events_(events), syncer_(syncer), root_(root) {}

    // `audit` has every field but the selection; `repair` the sync options of a repair but the
    // selection; `prepare`, when given, completes `audit` before it runs (--remote: fetches the
    // reference metadata and adds the configuration's filters); its error is the audit's, and then
    // no repair is attempted. A `target` without a configured source is completed from its
    // mirror's record where one is needed: first thing with --remote, before a repair otherwise.
    AuditRunEntry verify(
        Target& target, audit_parts::StoreAudit audit, SyncOptions repair,
        const std::function<std::optional<Error>(audit_parts::StoreAudit&)>& prepare) {
        const std::string& id = target.id;
        const std::optional<RepoConfig>& config = target.config;
        if (request_.remote) {
            complete(target);
        }
        std::string origin;
        std::optional<RecordedSelection> recorded;
        if (auto found = audit.mirror.recorded(); found) {
            if (!request_.selection.all_packages) {
                recorded = found->selection;
            }
            audit.packages_on_demand = found->on_demand();
        }  // an unreadable record is the audit's error, below
        audit.selection = choose_selection(request_.selection, recorded, origin);
        events_.selection(id, audit.selection, origin);
        AuditRunEntry entry;
        std::optional<Error> setup_error;
        if (prepare) {
            setup_error = prepare(audit);
        }
        if (setup_error) {
            entry.audit.repo_id = id;
            entry.audit.repo_dir = audit.report_dir;
            entry.audit.error = std::move(setup_error);
        } else {
            entry.audit = audit_parts::audit_store(id, audit);
        }
        events_.audited(entry.audit, "");
        if (!request_.repair || entry.audit.ok()) {
            return entry;
        }
        complete(target);
        if (!config) {
            const Error why = no_source_error(target);
            events_.repair_skipped(
                id, "FAILED: " + (target.unreadable ? why.to_string() : why.message));
        } else if (setup_error) {
            events_.repair_skipped(
                id, "not attempted (the repository's metadata could not be fetched)");
        } else {
            repair.selection = audit.selection;
            entry.repair = audit_parts::repair_store(*syncer_, *config, audit.mirror, entry.audit,
                                                     std::move(repair), {});
            events_.repaired(entry.audit, *entry.repair);
            entry.after = audit_parts::audit_store(id, audit);
            events_.audited(*entry.after, "after repair");
        }
        return entry;
    }

  private:
    // complete_from_record, once, saying so when the record is used.
    void complete(Target& target) {
        if (target.config || target.unreadable || !target.record.empty()) {
            return;
        }
        complete_from_record(root_, target);
        if (target.recorded) {
            events_.source(target.id, target.record);
        }
    }

    const VerifyRunOptions& request_;
    VerifyRunEvents& events_;
    Syncer* syncer_;
    store::MirrorRoot& root_;
};

// The images of the installation tree `tree` (audit_parts::audit_tree_store), audited through its
// store.
// --repair leaves them to `sync --treeinfo`.
AuditRunEntry verify_tree(const std::string& tree, store::MirrorStore& store,
                          const std::filesystem::path& shown, const VerifyRunOptions& request,
                          VerifyRunEvents& events) {
    AuditRunEntry entry;
    entry.audit = audit_parts::audit_tree_store(tree + " (.treeinfo)", store, shown,
                                                request.use_checksum_cache, request.threads);
    events.audited(entry.audit, "");
    if (request.repair && !entry.audit.ok()) {
        events.repair_skipped(entry.audit.repo_id,
                              "not attempted: a tree's images are fetched again by `rpmirror sync "
                              "--treeinfo` of the tree");
    }
    return entry;
}

// `verify -p DIR` or `-p s3://BUCKET/PREFIX`: each repository <root>/<id> audited through its
// store (against upstream's current metadata with --remote), repaired with a sync when asked, and
// the installation trees' own files.
VerifyRunOutcome verify_root(const VerifyRunOptions& request, VerifyRunEvents& events) {
    SyncOptions state_options;
    state_options.state_dir = request.state_dir;
    auto opened = store::MirrorRoot::open(request.download_path,
                                          {state_directory(state_options), request.s3});
    if (!opened) {
        return refused(opened.error().to_string());
    }
    store::MirrorRoot& root = *opened;
    if (root.in_bucket() && (request.remote || !request.safe_write_path.empty())) {
        return refused(
            fmt::format("{}: --remote and --safe-write-path are not supported on an s3:// mirror",
                        request.download_path));
    }
    if (!root.exists()) {
        return refused(fmt::format("{}: not a directory (-p)", root.describe()));
    }
    std::vector<RepoConfig> configs;
    if (request.remote || request.repair) {
        auto loaded = load_sources(request);
        if (!loaded) {
            return refused(loaded.error().to_string());
        }
        configs = std::move(*loaded);
    }
    VerifyRunOutcome outcome;
    auto discovered = root.discover();
    if (!discovered) {
        outcome.error = std::move(discovered.error());
        return outcome;
    }
    auto chosen = choose_targets(request, root.describe(), discovered->repositories, configs);
    if (std::string* message = std::get_if<std::string>(&chosen)) {
        return refused(std::move(*message));
    }
    std::vector<Target>& targets = std::get<std::vector<Target>>(chosen);
    std::optional<std::filesystem::path> safe_write_path;
    if (!request.safe_write_path.empty()) {
        safe_write_path = std::filesystem::absolute(request.safe_write_path);
    }
    std::optional<Syncer> syncer;
    if (request.remote || request.repair) {
        syncer.emplace();
    }
    RepositoryVerifier verifier(request, events, syncer ? &*syncer : nullptr, root);
    for (Target& target : targets) {
        const std::unique_ptr<store::MirrorStore> store = root.repository(target.id);
        std::optional<RemoteMetadata> remote;
        std::optional<store::LocalStore> reference;
        audit_parts::StoreAudit audit{*store};
        audit.report_dir = root.repository_path(target.id);
        audit.report_reference = audit.report_dir;
        audit.plan_root = root.plan_root(target.id).value_or(std::filesystem::path());
        audit.safe_write_path = safe_write_path;
        audit.use_cache = request.use_checksum_cache;
        audit.report_extra = request.extra;
        audit.threads = request.threads;
        std::function<std::optional<Error>(audit_parts::StoreAudit&)> prepare;
        if (request.remote) {
            prepare = [&](audit_parts::StoreAudit& prepared) -> std::optional<Error> {
                if (!target.config) {
                    return no_source_error(target);
                }
                auto fetched = RemoteMetadata::fetch(*syncer, *target.config);
                if (!fetched) {
                    return std::move(fetched.error());
                }
                remote.emplace(std::move(*fetched));
                reference.emplace(remote->root());
                prepared.reference = &*reference;
                prepared.report_reference = remote->root();
                // The configuration's includepkgs/excludepkgs, once each (a recorded selection
                // already has those the sync used).
                add_missing(prepared.selection.include_globs, target.config->includepkgs);
                add_missing(prepared.selection.exclude_globs, target.config->excludepkgs);
                return std::nullopt;
            };
        }
        SyncOptions repair;
        repair.download_path = request.download_path;
        repair.safe_write_path = safe_write_path;
        repair.use_checksum_cache = request.use_checksum_cache;
        repair.verify_threads = request.threads;
        repair.state_dir = request.state_dir;
        repair.lock_wait = request.lock_wait;
        repair.s3 = request.s3;
        outcome.entries.push_back(verifier.verify(target, audit, std::move(repair), prepare));
    }
    // The installation trees' own files (their repositories are targets above).
    for (const std::string& tree :
         request.remote ? std::vector<std::string>{} : discovered->trees) {
        if (!request.repo_patterns.empty() && !matches_any(tree, request.repo_patterns)) {
            continue;
        }
        const std::unique_ptr<store::MirrorStore> store = root.repository(tree);
        outcome.entries.push_back(
            verify_tree(tree, *store, root.repository_path(tree), request, events));
    }
    return outcome;
}

}  // namespace

VerifyRunOutcome verify_mirror(const VerifyRunOptions& request, VerifyRunEvents* events) {
    VerifyRunEvents& listener = events_or_none(events);
    return verify_root(request, listener);
}

}  // namespace rpmirror
