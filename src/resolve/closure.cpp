// The dependency closure (rpmirror/resolve.hpp), solved by libsolv over primary metadata.
#include "rpmirror/resolve.hpp"

#include <cstdio>
#include <memory>

#include <fmt/format.h>

// `requires` is a C++20 keyword: libsolv then names the dependency members dep_requires, ...
#define LIBSOLV_SOLVABLE_PREPEND_DEP 1
#include <solv/pool.h>
#include <solv/poolarch.h>
#include <solv/repo.h>
#include <solv/selection.h>
#include <solv/solver.h>
#include <solv/transaction.h>
// libsolvext's headers declare C functions without extern "C".
extern "C" {
#include <solv/repo_rpmmd.h>
#include <solv/solv_xfopen.h>
}

namespace rpmirror {

namespace {

struct PoolFree {
    void operator()(Pool* pool) const { pool_free(pool); }
};
struct SolverFree {
    void operator()(Solver* solver) const { solver_free(solver); }
};
struct TransactionFree {
    void operator()(Transaction* transaction) const { transaction_free(transaction); }
};
struct FileClose {
    void operator()(FILE* file) const { std::fclose(file); }
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

std::string repository_names(std::span<const ClosureRepo> repos) {
    std::string names;
    for (const ClosureRepo& repo : repos) {
        names += (names.empty() ? "" : ", ") + repo.id;
    }
    return names;
}

}  // namespace

std::string closure_nevra(std::string_view name, std::string_view epoch, std::string_view version,
                          std::string_view release, std::string_view arch) {
    return fmt::format("{}-{}:{}-{}.{}", name, epoch.empty() ? "0" : epoch, version, release, arch);
}

Result<Closure> resolve_closure(std::span<const ClosureRepo> repos, const ClosureRequest& request) {
    const std::unique_ptr<Pool, PoolFree> pool(pool_create());
    pool_setdisttype(pool.get(), DISTTYPE_RPM);
    pool_setarch(pool.get(), request.arch.c_str());
    Closure closure;
    for (const ClosureRepo& source : repos) {
        closure[source.id];
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

    SolvQueue jobs;
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
        for (int index = 0; index < (*selection).count; index += 2) {
            queue_push2(jobs.get(), (*selection).elements[index] | SOLVER_INSTALL,
                        (*selection).elements[index + 1]);
        }
    }

    const std::unique_ptr<Solver, SolverFree> solver(solver_create(pool.get()));
    solver_set_flag(solver.get(), SOLVER_FLAG_IGNORE_RECOMMENDED,
                    request.weak_dependencies ? 0 : 1);
    if (const int problems = solver_solve(solver.get(), jobs.get()); problems > 0) {
        std::string text;
        for (Id problem = 1; problem <= problems; ++problem) {
            text += fmt::format("{}{}", text.empty() ? "" : "; ",
                                solver_problem2str(solver.get(), problem));
        }
        return make_error(ErrorCode::BadInput,
                          fmt::format("the packages cannot be installed from {}: {}",
                                      repository_names(repos), text),
                          fmt::format("{} package spec(s)", request.packages.size()));
    }
    const std::unique_ptr<Transaction, TransactionFree> transaction(
        solver_create_transaction(solver.get()));
    for (int step = 0; step < transaction->steps.count; ++step) {
        const Solvable* solvable = pool_id2solvable(pool.get(), transaction->steps.elements[step]);
        std::string_view epoch;
        std::string_view version;
        std::string_view release;
        split_evr(pool_id2str(pool.get(), solvable->evr), epoch, version, release);
        closure[solvable->repo->name].insert(
            closure_nevra(pool_id2str(pool.get(), solvable->name), epoch, version, release,
                          pool_id2str(pool.get(), solvable->arch)));
    }
    return closure;
}

}  // namespace rpmirror
