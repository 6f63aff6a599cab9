// The dependency closure (resolve/resolve.hpp), solved by libsolv over primary metadata.
#include "index/index.hpp"
#include "resolve/resolve.hpp"
#include "resolve/solv_handles.hpp"
#include "signature/signature.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <system_error>
#include <unordered_set>

#include <fmt/format.h>

// `requires` is a C++20 keyword: libsolv then names the dependency members dep_requires, ...
#define LIBSOLV_SOLVABLE_PREPEND_DEP 1
#include <solv/evr.h>
#include <solv/pool.h>
#include <solv/poolarch.h>
#include <solv/repo.h>
#include <solv/selection.h>
#include <solv/solver.h>
#include <solv/transaction.h>
// libsolvext's headers declare C functions without extern "C".
extern "C" {
#include <solv/repo_rpmdb.h>
#include <solv/repo_rpmmd.h>
#include <solv/solv_xfopen.h>
}

namespace rpmirror {

namespace {

struct SolverFree {
    void operator()(Solver* solver) const { solver_free(solver); }
};
struct TransactionFree {
    void operator()(Transaction* transaction) const { transaction_free(transaction); }
};
struct RpmStateFree {
    void operator()(void* state) const { rpm_state_free(state); }
};

// A pool's `considered` map (the solvables that may be candidates), detached from the pool and
// freed on scope exit: declare it after the pool.
class ConsideredMap {
  public:
    explicit ConsideredMap(Pool* pool) : pool_(pool) { map_init(&map_, pool->nsolvables); }
    ~ConsideredMap() {
        pool_->considered = nullptr;
        map_free(&map_);
    }
    ConsideredMap(const ConsideredMap&) = delete;
    ConsideredMap& operator=(const ConsideredMap&) = delete;
    Map* get() { return &map_; }

  private:
    Pool* pool_;
    Map map_{};
};

// A libsolv Queue, freed on scope exit.
class SolvQueue {
  public:
    SolvQueue() { queue_init(&queue_); }
    ~SolvQueue() { queue_free(&queue_); }
    SolvQueue(const SolvQueue&) = delete;
    SolvQueue& operator=(const SolvQueue&) = delete;
    Queue* get() { return &queue_; }
    Queue& operator*() { return queue_; }

  private:
    Queue queue_;
};

// "[epoch:]version-release" -> its parts (epoch "0" when absent).
void split_evr(std::string_view evr, std::string_view& epoch, std::string_view& version,
               std::string_view& release) {
    epoch = "0";
    if (const std::size_t colon = evr.find(':'); colon != std::string_view::npos) {
        epoch = evr.substr(0, colon);
        evr.remove_prefix(colon + 1);
    }
    const std::size_t dash = evr.rfind('-');
    version = evr.substr(0, dash);
    release = dash == std::string_view::npos ? std::string_view() : evr.substr(dash + 1);
}

// "name-[epoch:]version-release.arch" -> its parts; false iff it is not of that shape.
bool split_nevra(std::string_view nevra, std::string_view& name, std::string& evr,
                 std::string_view& arch) {
    const std::size_t dot = nevra.rfind('.');
    if (dot == std::string_view::npos || dot + 1 == nevra.size()) {
        return false;
    }
    arch = nevra.substr(dot + 1);
    const std::string_view nevr = nevra.substr(0, dot);
    const std::size_t release_dash = nevr.rfind('-');
    if (release_dash == std::string_view::npos || release_dash == 0) {
        return false;
    }
    const std::size_t version_dash = nevr.rfind('-', release_dash - 1);
    if (version_dash == std::string_view::npos || version_dash == 0 ||
        version_dash + 1 == release_dash || release_dash + 1 == nevr.size()) {
        return false;
    }
    name = nevr.substr(0, version_dash);
    evr = std::string(nevr.substr(version_dash + 1));
    if (evr.starts_with("0:")) {
        evr.erase(0, 2);  // libsolv's EVRs omit a zero epoch
    }
    return true;
}

// A line of an installed-base list: the package, and its id in the repositories (0: none).
struct ListedPackage {
    std::string name;
    std::string evr;
    std::string arch;
    Id found = 0;
};

// The repositories' package `listed` names, or 0. Reads whatprovides: before anything is added
// to the pool (adding a solvable drops it).
Id find_listed(Pool* pool, const ListedPackage& listed) {
    const Id name = pool_str2id(pool, listed.name.c_str(), 0);
    const Id evr = pool_str2id(pool, listed.evr.c_str(), 0);
    const Id arch = pool_str2id(pool, listed.arch.c_str(), 0);
    if (name == 0 || arch == 0) {
        return 0;  // a string the pool never saw: no package has it
    }
    // `rpm -qa` prints no epoch: without one, a package of any epoch with that version-release.
    const bool any_epoch = listed.evr.find(':') == std::string::npos;
    Id candidate = 0;
    Id candidates = 0;
    FOR_PROVIDES(candidate, candidates, name) {
        const Solvable* solvable = pool_id2solvable(pool, candidate);
        if (solvable->name != name || solvable->arch != arch) {
            continue;
        }
        const std::string_view other = pool_id2str(pool, solvable->evr);
        const std::size_t colon = other.find(':');
        if ((evr != 0 && solvable->evr == evr) || (any_epoch && colon != std::string_view::npos &&
                                                   other.substr(colon + 1) == listed.evr)) {
            return candidate;
        }
    }
    return 0;
}

// Adds `listed` to `installed`: a copy of the repositories' package (its provides, file provides
// included), else a package providing only itself.
void add_installed(Pool* pool, Repo* installed, const ListedPackage& listed) {
    const Id added = repo_add_solvable(installed);
    Solvable* copy = pool_id2solvable(pool, added);
    copy->name = pool_str2id(pool, listed.name.c_str(), 1);
    copy->arch = pool_str2id(pool, listed.arch.c_str(), 1);
    copy->evr = listed.found != 0 ? pool_id2solvable(pool, listed.found)->evr
                                  : pool_str2id(pool, listed.evr.c_str(), 1);
    if (listed.found != 0) {
        const Solvable* original = pool_id2solvable(pool, listed.found);
        copy->vendor = original->vendor;
        for (const Id* provide = original->repo->idarraydata + original->dep_provides;
             original->dep_provides != 0 && *provide != 0; ++provide) {
            copy->dep_provides = repo_addid_dep(installed, copy->dep_provides, *provide, 0);
        }
    }
    copy->dep_provides = repo_addid_dep(installed, copy->dep_provides,
                                        pool_rel2id(pool, copy->name, copy->evr, REL_EQ, 1), 0);
}

// The installed repository of `base` (an installroot's rpmdb, read whole; or a NEVRA list), set
// as the pool's installed one. Reads the list after the repositories' metadata: a listed package
// the repositories have is copied from there.
Result<void> add_installed_base(Pool* pool, const std::filesystem::path& base) {
    std::error_code error;
    const bool directory = std::filesystem::is_directory(base, error);
    if (!directory && !std::filesystem::is_regular_file(base, error)) {
        return make_error(ErrorCode::NotFound,
                          "the installed base is neither an installroot (a directory) nor a list "
                          "of NEVRAs (a file)",
                          base.string());
    }
    if (directory) {
        // The installroot's rpm database, read whole as dnf reads it: every installed package
        // (each header given to libsolv) with all it provides (files included) and needs, in
        // the repositories or not. An installroot without a database is an empty machine.
        Repo* system = repo_create(pool, "@System");
        const std::unique_ptr<void, RpmStateFree> state(rpm_state_create(pool, nullptr));
        std::string unread;  // the first package libsolv could not take
        auto visited = visit_installed_packages(base, [&](void* header, const std::string& nevra) {
            void* handle = rpm_byrpmh(state.get(), static_cast<headerToken_s*>(header));
            if ((handle == nullptr ||
                 repo_add_rpm_handle(system, handle, REPO_REUSE_REPODATA | REPO_NO_INTERNALIZE) ==
                     0) &&
                unread.empty()) {
                unread = nevra;
            }
        });
        repo_internalize(system);
        pool_set_installed(pool, system);
        if (!visited) {
            return tl::unexpected(std::move(visited.error()));
        }
        if (!unread.empty()) {
            return make_error(ErrorCode::BadInput,
                              fmt::format("the installed base's package {} cannot be read: {}",
                                          unread, pool_errstr(pool)),
                              base.string());
        }
        return {};
    }
    // The NEVRAs, with where each came from ("line N").
    std::vector<std::pair<std::string, std::string>> nevras;
    std::ifstream list(base);
    if (!list) {
        return make_errno_error("cannot read the installed base", base.string(), errno);
    }
    std::string line;
    for (int number = 1; std::getline(list, line); ++number) {
        const std::size_t start = line.find_first_not_of(" \t\r");
        if (start == std::string::npos || line[start] == '#') {
            continue;
        }
        const std::size_t end = line.find_last_not_of(" \t\r");
        nevras.emplace_back(line.substr(start, end + 1 - start), fmt::format("line {}", number));
    }
    if (list.bad()) {
        return make_errno_error("cannot read the installed base", base.string(), errno);
    }
    std::vector<ListedPackage> listed;
    for (const auto& [nevra, where] : nevras) {
        std::string_view name;
        std::string evr;
        std::string_view arch;
        if (nevra.find_first_of(" \t") != std::string::npos ||
            !split_nevra(nevra, name, evr, arch)) {
            return make_error(ErrorCode::BadInput,
                              fmt::format("{}: \"{}\" is not a NEVRA "
                                          "(name-[epoch:]version-release.arch, as rpm -qa "
                                          "prints them)",
                                          where, nevra),
                              base.string());
        }
        listed.push_back({std::string(name), std::move(evr), std::string(arch)});
        listed.back().found = find_listed(pool, listed.back());
    }
    Repo* installed = repo_create(pool, "@System");
    for (const ListedPackage& package : listed) {
        add_installed(pool, installed, package);
    }
    pool_set_installed(pool, installed);
    return {};
}

// Solves `jobs` over the pool (weak dependencies as `weak`; `downgrade`: an older version of a
// package the base has may replace it). Returns the packages the solution installs from the
// repositories (the base's own left out), or libsolv's description of each problem,
// "; "-separated.
tl::expected<std::vector<Id>, std::string> solve(Pool* pool, Queue* jobs, bool weak,
                                                 bool downgrade) {
    const std::unique_ptr<Solver, SolverFree> solver(solver_create(pool));
    solver_set_flag(solver.get(), SOLVER_FLAG_IGNORE_RECOMMENDED, weak ? 0 : 1);
    solver_set_flag(solver.get(), SOLVER_FLAG_ALLOW_DOWNGRADE, downgrade ? 1 : 0);
    if (const int problems = solver_solve(solver.get(), jobs); problems > 0) {
        std::string text;
        for (Id problem = 1; problem <= problems; ++problem) {
            text += fmt::format("{}{}", text.empty() ? "" : "; ",
                                solver_problem2str(solver.get(), problem));
        }
        return tl::unexpected(std::move(text));
    }
    const std::unique_ptr<Transaction, TransactionFree> transaction(
        solver_create_transaction(solver.get()));
    std::vector<Id> installed;
    for (int step = 0; step < transaction->steps.count; ++step) {
        const Id id = transaction->steps.elements[step];
        if (pool_id2solvable(pool, id)->repo != pool->installed) {
            installed.push_back(id);  // not the base's own (an erase, an upgrade's old package)
        }
    }
    return installed;
}

std::string nevra_of(Pool* pool, Id id) {
    const Solvable* solvable = pool_id2solvable(pool, id);
    std::string_view epoch;
    std::string_view version;
    std::string_view release;
    split_evr(pool_id2str(pool, solvable->evr), epoch, version, release);
    return closure_nevra(pool_id2str(pool, solvable->name), epoch, version, release,
                         pool_id2str(pool, solvable->arch));
}

// The versions of the name.arch of `id` in the repositories, newest first, one per version (the
// repository libsolv prefers: higher priority, then the one given first).
std::vector<Id> versions_of(Pool* pool, Id id) {
    const Solvable* of = pool_id2solvable(pool, id);
    std::vector<Id> versions;
    Id candidate = 0;
    Id candidates = 0;
    FOR_PROVIDES(candidate, candidates, of->name) {
        const Solvable* solvable = pool_id2solvable(pool, candidate);
        if (solvable->name == of->name && solvable->arch == of->arch &&
            solvable->repo != pool->installed &&
            pool_installable(pool, const_cast<Solvable*>(solvable))) {
            versions.push_back(candidate);
        }
    }
    std::sort(versions.begin(), versions.end(), [pool](Id a, Id b) {
        const Solvable* left = pool_id2solvable(pool, a);
        const Solvable* right = pool_id2solvable(pool, b);
        if (const int order = pool_evrcmp(pool, left->evr, right->evr, EVRCMP_COMPARE);
            order != 0) {
            return order > 0;
        }
        if (left->repo->priority != right->repo->priority) {
            return left->repo->priority > right->repo->priority;
        }
        if (left->repo->subpriority != right->repo->subpriority) {
            return left->repo->subpriority > right->repo->subpriority;
        }
        return left->repo->repoid < right->repo->repoid;
    });
    versions.erase(std::unique(versions.begin(), versions.end(),
                               [pool](Id a, Id b) {
                                   return pool_id2solvable(pool, a)->evr ==
                                          pool_id2solvable(pool, b)->evr;
                               }),
                   versions.end());
    return versions;
}

// --keep-versions N over a closure: the N newest versions of every name.arch in `chosen`, each
// with a closure of its own (exactly that version installed on the base), until no new name.arch
// comes in. A version whose closure cannot be solved is left out, described in `left_out`.
void add_kept_versions(Pool* pool, const ClosureRequest& request, std::set<Id>& chosen,
                       std::vector<std::string>& left_out) {
    std::set<std::pair<Id, Id>> done;  // name.arch pairs whose versions were taken
    std::set<Id> solved(chosen.begin(), chosen.end());
    std::vector<Id> pending(chosen.begin(), chosen.end());
    while (!pending.empty()) {
        const Id id = pending.back();
        pending.pop_back();
        const Solvable* solvable = pool_id2solvable(pool, id);
        if (!done.insert({solvable->name, solvable->arch}).second) {
            continue;
        }
        std::vector<Id> versions = versions_of(pool, id);
        versions.resize(std::min<std::size_t>(versions.size(), request.keep_versions));
        for (const Id version : versions) {
            if (!solved.insert(version).second) {
                continue;
            }
            SolvQueue job;
            queue_push2(job.get(), SOLVER_INSTALL | SOLVER_SOLVABLE, version);
            // An older kept version of a package the base has is a downgrade there.
            auto installed = solve(pool, job.get(), request.weak_dependencies, true);
            if (!installed) {
                left_out.push_back(fmt::format("{} (a kept older version) cannot be installed: {}",
                                               nevra_of(pool, version), installed.error()));
                continue;
            }
            for (const Id added : *installed) {
                solved.insert(added);
                if (chosen.insert(added).second) {
                    pending.push_back(added);
                }
            }
        }
    }
}

std::string repository_names(std::span<const ClosureRepo> repos) {
    std::string names;
    for (const ClosureRepo& repo : repos) {
        names += (names.empty() ? "" : ", ") + repo.id;
    }
    return names;
}

// dnf's modular filtering over the repositories' modules.yaml.
struct ModularFilter {
    // Whether any repository has modules: otherwise every package is a candidate.
    bool active() const { return !modular.empty(); }

    // Whether the package `id` may be a candidate: a modular package iff its stream is active;
    // another iff no active stream has a package of its name.
    // `nevra` is built only for a name some stream has.
    bool candidate(Pool* pool, Id id) const {
        const std::string name = pool_id2str(pool, pool_id2solvable(pool, id)->name);
        if (!modular_names.contains(name)) {
            return true;  // no stream has a package of its name
        }
        const std::string nevra = nevra_of(pool, id);
        if (modular.contains(nevra)) {
            return included.contains(nevra);
        }
        return !included_names.contains(name);
    }

    std::unordered_set<std::string> modular;         // every stream's artifacts
    std::unordered_set<std::string> modular_names;   // their package names
    std::unordered_set<std::string> included;        // the active streams' artifacts
    std::unordered_set<std::string> included_names;  // their package names
};

// The modular filter of `repos` with the streams `enabled` ("name:stream") active besides the
// default ones. Returns Error{BadInput} naming the stream iff it is malformed, in no
// repository's modules.yaml, or a second stream of one module; a modules.yaml's error iff one
// cannot be read.
Result<ModularFilter> modular_filter(std::span<const ClosureRepo> repos,
                                     const std::vector<std::string>& enabled) {
    std::vector<ModuleStreamBuild> builds;
    for (const ClosureRepo& repo : repos) {
        if (repo.modules.empty()) {
            continue;
        }
        auto parsed = parse_modules_file(repo.modules, repo.id + ": modules.yaml");
        if (!parsed) {
            return tl::unexpected(std::move(parsed.error()));
        }
        builds.insert(builds.end(), std::make_move_iterator(parsed->begin()),
                      std::make_move_iterator(parsed->end()));
    }
    std::map<std::string, std::string> active;  // module -> stream
    for (const ModuleStreamBuild& build : builds) {
        if (build.is_default) {
            active[build.name] = build.stream;
        }
    }
    std::map<std::string, std::string> chosen;
    for (const std::string& spec : enabled) {
        const std::size_t colon = spec.find(':');
        if (colon == std::string::npos || colon == 0 || colon + 1 == spec.size() ||
            spec.find(':', colon + 1) != std::string::npos) {
            return make_error(ErrorCode::BadInput, "a module stream is NAME:STREAM",
                              "modules " + spec);
        }
        const std::string name = spec.substr(0, colon);
        const std::string stream = spec.substr(colon + 1);
        if (const auto [at, inserted] = chosen.emplace(name, stream);
            !inserted && at->second != stream) {
            return make_error(ErrorCode::BadInput,
                              fmt::format("conflicting module streams: {}:{} and {}:{} (a "
                                          "machine enables one stream of a module)",
                                          name, at->second, name, stream),
                              "modules " + spec);
        }
        if (std::none_of(builds.begin(), builds.end(), [&](const ModuleStreamBuild& build) {
                return build.name == name && build.stream == stream;
            })) {
            return make_error(ErrorCode::BadInput,
                              fmt::format("module stream {} is in no modules.yaml of {}", spec,
                                          repository_names(repos)),
                              "modules " + spec);
        }
        active[name] = stream;
    }
    ModularFilter filter;
    for (const ModuleStreamBuild& build : builds) {
        const auto at = active.find(build.name);
        const bool included = at != active.end() && at->second == build.stream;
        for (const std::string& artifact : build.artifacts) {
            filter.modular.insert(artifact);
            std::string_view name;
            std::string evr;
            std::string_view arch;
            const bool named = split_nevra(artifact, name, evr, arch);
            if (named) {
                filter.modular_names.emplace(name);
            }
            if (included) {
                filter.included.insert(artifact);
                if (named) {
                    filter.included_names.emplace(name);
                }
            }
        }
    }
    return filter;
}

}  // namespace

Result<Closure> resolve_closure(std::span<const ClosureRepo> repos, const ClosureRequest& request,
                                std::stop_token stop) {
    const std::unique_ptr<Pool, PoolFree> pool(pool_create());
    pool_setdisttype(pool.get(), DISTTYPE_RPM);
    pool_setarch(pool.get(), request.arch.c_str());
    Closure closure;
    for (const ClosureRepo& source : repos) {
        closure.shares[source.id];
        Repo* repo = repo_create(pool.get(), source.id.c_str());
        // dnf's preference: a lower priority number, then a lower cost (libsolv: higher wins).
        repo->priority = -source.priority;
        repo->subpriority = -source.cost;
        const std::unique_ptr<FILE, FileClose> file(solv_xfopen(source.primary.c_str(), "r"));
        if (!file) {
            return make_errno_error("cannot read the primary metadata of " + source.id,
                                    source.primary.string(), errno);
        }
        if (repo_add_rpmmd(repo, file.get(), nullptr, 0) != 0) {
            return make_error(ErrorCode::BadInput,
                              fmt::format("the primary metadata of {} cannot be read: {}",
                                          source.id, pool_errstr(pool.get())),
                              source.primary.string());
        }
    }
    pool_addfileprovides(pool.get());
    pool_createwhatprovides(pool.get());
    if (!request.installed_base.empty()) {
        if (auto added = add_installed_base(pool.get(), request.installed_base); !added) {
            return tl::unexpected(std::move(added.error()));
        }
        pool_addfileprovides(pool.get());
        pool_createwhatprovides(pool.get());
    }

    // What may be a candidate: --as-of leaves out what was built later, modular filtering the
    // packages of inactive streams and those their active streams replace (the base's own stay).
    auto modular = modular_filter(repos, request.modules);
    if (!modular) {
        return tl::unexpected(std::move(modular.error()));
    }
    std::optional<ConsideredMap> considered;
    if (request.built_by || modular->active()) {
        considered.emplace(pool.get());
        map_setall(considered->get());
        for (Id id = 2; id < pool->nsolvables; ++id) {
            Solvable* solvable = pool_id2solvable(pool.get(), id);
            if (solvable->repo == nullptr || solvable->repo == pool->installed) {
                continue;
            }
            if ((request.built_by && solvable_lookup_num(solvable, SOLVABLE_BUILDTIME, 0) >
                                         static_cast<unsigned long long>(*request.built_by)) ||
                (modular->active() && !modular->candidate(pool.get(), id))) {
                MAPCLR(considered->get(), id);
            }
        }
        pool->considered = considered->get();
        pool_createwhatprovides(pool.get());
    }

    // Each spec's jobs (a glob: one per name it matches), and all of them in one queue.
    struct SpecJob {
        std::string spec;
        Id how;
        Id what;
    };
    std::vector<SpecJob> per_spec;
    SolvQueue jobs;
    std::set<Id> spec_selects;  // with advisories: what the specs select
    for (const std::string& spec : request.packages) {
        SolvQueue selection;
        constexpr int kFlags = SELECTION_NAME | SELECTION_PROVIDES | SELECTION_GLOB |
                               SELECTION_CANON | SELECTION_DOTARCH | SELECTION_REL |
                               SELECTION_FILELIST;
        selection_make(pool.get(), selection.get(), spec.c_str(), kFlags);
        if ((*selection).count == 0) {
            return make_error(ErrorCode::BadInput,
                              fmt::format("package '{}' matches nothing {} can install in {}", spec,
                                          request.arch, repository_names(repos)),
                              spec);
        }
        if (request.advisories.active()) {
            SolvQueue selected;
            selection_solvables(pool.get(), selection.get(), selected.get());
            spec_selects.insert((*selected).elements, (*selected).elements + (*selected).count);
            continue;
        }
        for (int index = 0; index < (*selection).count; index += 2) {
            const Id how = (*selection).elements[index] | SOLVER_INSTALL;
            const Id what = (*selection).elements[index + 1];
            queue_push2(jobs.get(), how, what);
            per_spec.push_back({spec, how, what});
        }
    }
    // A group's packages: by name, each one the repositories have (not with advisories, which
    // choose the packages themselves).
    if (!request.advisories.active()) {
        for (const std::string& name : request.optional_packages) {
            SolvQueue selection;
            selection_make(pool.get(), selection.get(), name.c_str(), SELECTION_NAME);
            for (int index = 0; index < (*selection).count; index += 2) {
                const Id how = (*selection).elements[index] | SOLVER_INSTALL;
                const Id what = (*selection).elements[index + 1];
                queue_push2(jobs.get(), how, what);
                per_spec.push_back({name, how, what});
            }
        }
    }
    // --advisories: each package the advisories list that the machines can install (and a spec
    // selects, when specs are given) is installed alone; one that cannot be is left out.
    const bool advised = request.advisories.active();
    if (advised) {
        std::set<Id> roots;
        for (const std::string& nevra : request.advised_nevras) {
            ListedPackage listed;
            std::string_view name;
            std::string_view arch;
            if (!split_nevra(nevra, name, listed.evr, arch)) {
                continue;
            }
            listed.name = std::string(name);
            listed.arch = std::string(arch);
            const Id id = find_listed(pool.get(), listed);
            if (id != 0 && pool_installable(pool.get(), pool_id2solvable(pool.get(), id)) &&
                (request.packages.empty() || spec_selects.contains(id)) &&
                roots.insert(id).second) {
                per_spec.push_back(
                    {nevra_of(pool.get(), id), SOLVER_INSTALL | SOLVER_SOLVABLE, id});
            }
        }
        if (per_spec.empty()) {
            return make_error(
                ErrorCode::BadInput,
                fmt::format("the advisories selected list no package {} can install in {}{}",
                            request.arch, repository_names(repos),
                            request.packages.empty() ? "" : " that the package specs select"),
                "--advisories");
        }
    }

    // Every package alone, as a machine that installs only it (and `dnf download --resolve`)
    // would choose its dependencies: where alternatives offer one thing, each package's own
    // choice is mirrored; packages that conflict with each other (two mail servers) can share a
    // mirror. Then all of them together, which a conflict may make impossible (a warning).
    // One spec alone (not an advisory's package) is the installation of all of them.
    const bool solve_alone = request.each_alone && (advised || per_spec.size() > 1);
    std::set<Id> chosen;
    for (std::size_t at = 0; solve_alone && at < per_spec.size(); ++at) {
        const auto& [spec, how, what] = per_spec[at];
        if (stop.stop_requested()) {
            return make_error(ErrorCode::Interrupted, "interrupted while solving the closure",
                              std::string(spec));
        }
        SolvQueue alone;
        queue_push2(alone.get(), how, what);
        auto installed = solve(pool.get(), alone.get(), request.weak_dependencies, false);
        if (!installed && advised) {
            closure.left_out.push_back(fmt::format(
                "{} (an advisory's package) cannot be installed: {}", spec, installed.error()));
            continue;
        }
        if (!installed) {
            return make_error(ErrorCode::BadInput,
                              fmt::format("package '{}' cannot be installed from {}: {}", spec,
                                          repository_names(repos), installed.error()),
                              std::string(spec));
        }
        chosen.insert(installed->begin(), installed->end());
    }
    // Advisories list versions of one package side by side: no installation of all of them.
    if (!advised) {
        auto installed = solve(pool.get(), jobs.get(), request.weak_dependencies, false);
        if (!installed && !solve_alone) {
            const std::string what = per_spec.size() == 1
                                         ? fmt::format("package '{}'", per_spec.front().spec)
                                         : std::string("the packages");
            return make_error(ErrorCode::BadInput,
                              fmt::format("{} cannot be installed from {}: {}", what,
                                          repository_names(repos), installed.error()),
                              per_spec.size() == 1
                                  ? per_spec.front().spec
                                  : fmt::format("{} package spec(s)", request.packages.size()));
        }
        if (!installed) {
            closure.left_out.push_back(fmt::format(
                "the packages cannot all be installed on one machine (each can alone, and each "
                "one's dependencies are mirrored): {}",
                installed.error()));
        } else {
            chosen.insert(installed->begin(), installed->end());
        }
    }
    if (request.keep_versions > 1) {
        add_kept_versions(pool.get(), request, chosen, closure.left_out);
    }
    for (const Id id : chosen) {
        closure.shares[pool_id2solvable(pool.get(), id)->repo->name].insert(
            nevra_of(pool.get(), id));
    }
    return closure;
}

}  // namespace rpmirror
