// Prefetch into dnf's cache for a launch-time `dnf install` (rpmirror/prefetch/prefetch.hpp):
//   metadata of every repository, in parallel, into <cachedir>/<id>-<hash>/repodata/ (a sync of
//   the metadata alone, published there atomically as a mirror's is) unless dnf's copy is fresh
//   -> the closure of the install on the installroot's rpm database (libsolv, resolve_closure),
//   modular packages filtered as dnf filters them (each repository's modules.yaml, each module's
//   default stream and the streams the installroot's /etc/dnf/modules.d enables); it starts as
//   soon as each repository's primary, modules and comps are verified, while the other records
//   download and the metadata is published
//   -> each repository's share synced, in parallel, into packages/ under the file names dnf
//   looks for (downloaded as .NAME.part, hashed while streaming, checksum recorded for librepo,
//   renamed once verified; a package dnf's cache already holds whole is kept), from the revision
//   its metadata step parsed, as soon as the closure is known: while filelists may still download.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "checksum/hasher.hpp"
#include "fs/durable.hpp"
#include "fs/scratch_dir.hpp"
#include "fs/tree.hpp"
#include "metadata/metadata.hpp"
#include "prefetch/dnf_state.hpp"
#include "prefetch/prefetch.hpp"
#include "resolve/dnf_solv_cache.hpp"
#include "resolve/plain_primary.hpp"
#include "resolve/resolve.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "rpmirror/prefetch/prefetch.hpp"
#include "sync/sync.hpp"

namespace rpmirror {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The records of a repository the closure reads besides its primary: modules, and comps ("group"
// or "group_gz": the same document, the first at hand is read).
constexpr std::string_view kModulesRecord = "modules";
constexpr std::array<std::string_view, 2> kCompsRecords = {"group", "group_gz"};

// One repository's part of the prefetch.
struct RepoWork {
    const RepoConfig* repo = nullptr;
    std::filesystem::path cache;  // <cachedir>/<id>-<hash>
    // What the closure reads is at hand (below); set once, under the Gate's lock.
    bool inputs_ready = false;
    bool metadata_done = false;  // its metadata step returned (under the Gate's lock)
    bool metadata_ready = false;
    bool metadata_fetched = false;
    std::filesystem::path primary;  // decompressed, in the temporary directory
    std::filesystem::path modules;  // its modules.yaml; empty: none
    std::filesystem::path comps;    // its comps document (maybe compressed); empty: none
    std::vector<std::string> share;
    unsigned parallel = 1;  // connections the package step may hold (package_step_connections)
    std::size_t packages = 0;
    std::uint64_t bytes = 0;
    std::vector<std::string> metadata_warnings;
    std::vector<std::string> package_warnings;
    // What the metadata step fetched of upstream, primary parsed: the package step works from
    // the same revision. Set once, under the Gate's lock, maybe before that step is done.
    std::shared_ptr<const UpstreamRevision> upstream;
    // The metadata step's; the package step's too (reusing its connections) when the metadata
    // step is done before the package step starts, else the package step takes `package_syncer`.
    std::unique_ptr<Syncer> syncer;
    std::unique_ptr<Syncer> package_syncer;
};

// The packages `dnf install @GROUP` installs for each of `groups`, from the comps of every
// repository of `work` whose metadata is ready (merged, as dnf merges them). Returns
// Error{Unsupported} naming the group iff a module has its name (dnf reads `@NAME` as the module
// first), Error{NotFound} iff no repository's comps has it, or the reader's error.
Result<std::vector<std::string>> group_packages(const std::vector<std::string>& groups,
                                                const std::vector<RepoWork>& work) {
    std::set<std::string> packages;
    std::set<std::string> found;
    for (const RepoWork& item : work) {
        if (!item.inputs_ready) {
            continue;
        }
        if (!item.modules.empty()) {
            auto builds = parse_modules_file(item.modules, item.modules.string());
            if (!builds) {
                return tl::unexpected(std::move(builds.error()));
            }
            for (const ModuleStreamBuild& build : *builds) {
                if (std::find(groups.begin(), groups.end(), build.name) != groups.end()) {
                    return make_error(ErrorCode::Unsupported,
                                      fmt::format("@{} names a module of repository {} (module "
                                                  "specs are not prefetched)",
                                                  build.name, item.repo->id),
                                      "@" + build.name);
                }
            }
        }
        if (!item.comps.empty()) {
            auto comps = decompress_file_to_string(item.comps, {});
            if (!comps) {
                return tl::unexpected(std::move(comps.error()));
            }
            const std::string shown = fmt::format("repository {}: comps", item.repo->id);
            if (auto added = add_group_packages(*comps, shown, groups, packages, found); !added) {
                return tl::unexpected(std::move(added.error()));
            }
        }
    }
    for (const std::string& group : groups) {
        if (!found.contains(group)) {
            return make_error(ErrorCode::NotFound,
                              fmt::format("group '{}' is in no repository's comps", group),
                              "@" + group);
        }
    }
    return std::vector<std::string>(packages.begin(), packages.end());
}

// Runs `work(item)` for every item, each on its own thread, and waits for all.
template <typename Work>
void for_each_in_parallel(std::vector<RepoWork>& items, Work work) {
    std::vector<std::jthread> threads;
    threads.reserve(items.size());
    for (RepoWork& item : items) {
        threads.emplace_back([&work, &item] { work(item); });
    }
}

// Where the closure reads `work`'s primary, decompressed, in `temporary` (ids are unique file
// names).
std::filesystem::path plain_primary_path(const RepoWork& work,
                                         const std::filesystem::path& temporary) {
    return temporary / (work.repo->id + "-primary.xml");
}

// Where the metadata steps tell the closure what they have (RepoWork::inputs_ready,
// metadata_done).
struct Gate {
    std::mutex mutex;
    std::condition_variable changed;

    void set(bool& flag) {
        {
            const std::lock_guard lock(mutex);
            flag = true;
        }
        changed.notify_all();
    }
    // Sets `work.upstream` unless it is set.
    void set_revision(RepoWork& work, std::shared_ptr<const UpstreamRevision> revision) {
        {
            const std::lock_guard lock(mutex);
            if (!work.upstream) {
                work.upstream = std::move(revision);
            }
        }
        changed.notify_all();
    }
    // Waits until `ready(item)` holds for every item of `work` (called under the lock).
    template <typename Ready>
    void wait_for_all(const std::vector<RepoWork>& work, Ready ready) {
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] { return std::all_of(work.begin(), work.end(), ready); });
    }
    // Waits until `ready(item)` holds, then returns `then(item)`, both under the lock.
    template <typename Ready, typename Then>
    auto wait_for(const RepoWork& item, Ready ready, Then then) {
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] { return ready(item); });
        return then(item);
    }
};

// Takes what the closure reads of a repository as its metadata step verifies each record (its
// primary decompressed for libsolv, its modules and comps records copied, all into `temporary`),
// and tells the Gate once the step waits for none of them: the solve goes on while the other
// records download and the metadata is published. Tells the Gate the revision once its primary
// is parsed too: the package step can start then. A record it cannot take leaves the inputs to
// be read from dnf's cache once the metadata is published (prepare_metadata).
class ClosureInputs final : public SyncEvents {
  public:
    ClosureInputs(RepoWork& work, Gate& gate, std::filesystem::path temporary)
        : work_(work), gate_(gate), temporary_(std::move(temporary)) {}

    void package(const PackageEvent& /*event*/) override {}

    void revision_parsed(const std::string& /*repo_id*/,
                         const std::shared_ptr<const UpstreamRevision>& revision) override {
        gate_.set_revision(work_, revision);
    }

    void record_fetched(const RecordEvent& event) override {
        if (failed_ || work_.inputs_ready) {
            return;
        }
        const std::string prefix = work_.repo->id + "-";  // ids are unique file names
        if (event.type == "primary") {
            failed_ =
                !write_plain_file(event.file, std::nullopt, plain_primary_path(work_, temporary_));
            primary_ = !failed_;
        } else if (event.type == kModulesRecord) {
            failed_ = !copy_record(
                event.file, temporary_ / (prefix + event.file.filename().string()), modules_);
        } else if (std::find(kCompsRecords.begin(), kCompsRecords.end(), event.type) !=
                       kCompsRecords.end() &&
                   comps_.empty()) {
            failed_ = !copy_record(event.file,
                                   temporary_ / (prefix + event.file.filename().string()), comps_);
        }
        const auto waits_for = [&event](std::string_view type) {
            return std::find(event.pending.begin(), event.pending.end(), type) !=
                   event.pending.end();
        };
        if (!failed_ && primary_ && !waits_for(kModulesRecord) &&
            std::none_of(kCompsRecords.begin(), kCompsRecords.end(), waits_for)) {
            work_.primary = plain_primary_path(work_, temporary_);
            work_.modules = modules_;
            work_.comps = comps_;
            gate_.set(work_.inputs_ready);
        }
    }

  private:
    static bool copy_record(const std::filesystem::path& from, const std::filesystem::path& to,
                            std::filesystem::path& taken) {
        std::error_code error;
        if (!std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing,
                                        error)) {
            return false;
        }
        taken = to;
        return true;
    }

    RepoWork& work_;
    Gate& gate_;
    std::filesystem::path temporary_;
    bool primary_ = false;
    bool failed_ = false;
    std::filesystem::path modules_;
    std::filesystem::path comps_;
};

// What the closure reads of the repository whose metadata is in dnf's cache at `work.cache`,
// into `work` (its primary decompressed into `temporary`). Returns what could not be read, if
// anything.
std::optional<std::string> read_closure_inputs(RepoWork& work,
                                               const std::filesystem::path& temporary) {
    const std::filesystem::path primary = plain_primary_path(work, temporary);
    if (auto written = write_plain_primary(work.cache, primary); !written) {
        return fmt::format("its primary cannot be read ({})", written.error().to_string());
    }
    auto modules = fetched_record(work.cache, kModulesRecord);
    if (!modules) {
        return fmt::format("its modules cannot be read ({})", modules.error().to_string());
    }
    std::filesystem::path comps;
    for (const std::string_view type : kCompsRecords) {
        auto record = fetched_record(work.cache, type);
        if (!record) {
            return fmt::format("its comps cannot be read ({})", record.error().to_string());
        }
        if (*record && comps.empty()) {
            comps = work.cache / (*record)->location_href;
        }
    }
    work.primary = primary;
    work.modules = *modules ? work.cache / (*modules)->location_href : std::filesystem::path();
    work.comps = comps;
    return std::nullopt;
}

// Fetches `work.repo`'s metadata into its cache directory (unless fresh), what the closure reads
// of it into `temporary` (through `inputs` as the records arrive, else from the cache), telling
// `gate` when its inputs are ready and when it is done.
void prepare_metadata(RepoWork& work, const PrefetchRequest& request,
                      const std::set<std::string>& expired, const std::filesystem::path& temporary,
                      Gate& gate, std::stop_token stop) {
    struct Done {
        RepoWork& work;
        Gate& gate;
        ~Done() { gate.set(work.metadata_done); }
    } done{work, gate};
    const RepoConfig& repo = *work.repo;
    if (request.refresh || expired.contains(repo.id) ||
        !metadata_is_fresh(work.cache, request.metadata_expire_seconds, repo.defined_at.file)) {
        RepoConfig metadata_only = repo;
        metadata_only.excludepkgs.push_back("*");
        SyncOptions options;
        options.download_path = work.cache;
        options.norepopath = true;
        options.download_metadata = true;
        options.upstream_metadata = true;  // dnf's cache holds upstream's records as they are
        options.announce_tree = false;     // dnf's cache is no mirror: no .treeinfo request
        options.dnf_cache = true;  // what dnf reads; flushed once, at the end (prefetch_for_dnf)
        options.state_dir = request.state_dir;
        options.parallel = request.parallel;
        ClosureInputs inputs(work, gate, temporary);
        options.events = &inputs;
        RepoSyncReport report = work.syncer->sync(metadata_only, options, nullptr, stop);
        if (report.error || !report.metadata_published) {
            work.metadata_warnings.push_back(fmt::format(
                "repository {}: metadata not prefetched ({}); dnf fetches it itself", repo.id,
                report.error ? report.error->to_string() : std::string("nothing published")));
            return;
        }
        work.metadata_fetched = true;
        gate.set_revision(work, report.upstream);  // unless revision_parsed did
        // Records the sync found unchanged keep their old mtimes: dnf would then think them
        // expired. libdnf touches its copy in that case too.
        std::error_code error;
        for (const auto& entry :
             std::filesystem::directory_iterator(work.cache / "repodata", error)) {
            (void)::utimensat(AT_FDCWD, entry.path().c_str(), nullptr, 0);
        }
    }
    if (!work.inputs_ready) {
        if (auto problem = read_closure_inputs(work, temporary)) {
            work.metadata_warnings.push_back(fmt::format("repository {}: {}", repo.id, *problem));
            return;
        }
        gate.set(work.inputs_ready);
    }
    work.metadata_ready = true;
}

// Writes dnf's solver caches (write_dnf_solv_caches) of the repositories of `work` whose metadata
// was fetched, over a pool of all whose metadata is at hand, their filelists decompressed into
// `scratch` first.
Result<void> write_solver_caches(const std::vector<RepoWork>& work, const PrefetchRequest& request,
                                 const std::filesystem::path& scratch) {
    DnfSolvCaches caches;
    caches.cachedir = request.cachedir;
    bool any = false;
    for (const RepoWork& item : work) {
        if (!item.metadata_ready) {
            continue;
        }
        DnfSolvCacheRepo repo;
        repo.id = item.repo->id;
        repo.repomd = item.cache / "repodata" / "repomd.xml";
        repo.plain_primary = item.primary;
        repo.plain_filelists = scratch / (item.repo->id + "-filelists.xml");
        repo.write = item.metadata_fetched;
        any = any || repo.write;
        auto filelists = write_plain_record(item.cache, "filelists", repo.plain_filelists);
        if (!filelists) {
            return tl::unexpected(std::move(filelists.error()));
        }
        if (!*filelists) {
            repo.plain_filelists.clear();
        }
        caches.repos.push_back(std::move(repo));
    }
    return any ? write_dnf_solv_caches(caches) : Result<void>{};
}

// Downloads `work.share` (NEVRAs) into packages/, each at its file name, where dnf looks, from
// `upstream` (null: the revision is fetched again) over `syncer`'s connections.
void fetch_share(RepoWork& work, Syncer& syncer, std::shared_ptr<const UpstreamRevision> upstream,
                 const PrefetchRequest& request, std::stop_token stop) {
    RepoConfig repo = *work.repo;
    repo.closure = work.share;
    repo.record_sources.push_back(work.cache / "repodata");  // the primary: copied, not fetched
    SyncOptions options;
    options.download_path = work.cache / "packages";
    options.norepopath = true;
    options.packages_by_file_name = true;  // hrefs into a shared blobstore too
    options.announce_tree = false;
    options.dnf_cache = true;                // flushed once, at the end (prefetch_for_dnf)
    options.upstream = std::move(upstream);  // no mirror list or repomd.xml fetched again
    options.state_dir = request.state_dir;
    options.parallel = work.parallel;
    RepoSyncReport report = syncer.sync(repo, options, nullptr, stop);
    if (report.error) {
        work.package_warnings.push_back(fmt::format("repository {}: packages not prefetched ({})",
                                                    repo.id, report.error->to_string()));
    } else if (!report.failures.empty()) {
        work.package_warnings.push_back(fmt::format(
            "repository {}: {} package(s) not prefetched (first: {}: {}); dnf downloads them",
            repo.id, report.failures.size(), report.failures.front().package,
            report.failures.front().reason));
    }
    work.packages = report.downloaded + report.kept;
    work.bytes = report.bytes_downloaded;
}

// The closure of the install over the repositories whose primary (and modules, comps) is at
// hand, in dnf's order, as soon as each repository has it or its metadata step gave up: each
// repository's RepoWork::share. Returns false iff it cannot be worked out (a warning in `report`
// says why: dnf then downloads the packages itself).
bool resolve_shares(std::vector<RepoWork>& work, const PrefetchRequest& request, Gate& gate,
                    PrefetchReport& report) {
    gate.wait_for_all(work,
                      [](const RepoWork& item) { return item.inputs_ready || item.metadata_done; });
    const auto started = std::chrono::steady_clock::now();
    std::vector<ClosureRepo> sources;
    for (const RepoWork& item : work) {
        if (item.inputs_ready) {
            sources.push_back(
                {item.repo->id, item.primary, item.repo->priority, item.repo->cost, item.modules});
        }
    }
    ClosureRequest closure_request;
    closure_request.packages = request.packages;
    closure_request.arch = request.arch;
    closure_request.weak_dependencies = request.weak_dependencies;
    closure_request.each_alone = false;  // what this one `dnf install` fetches
    closure_request.modules = enabled_module_streams(request.installroot, report.warnings);
    // An installroot without an rpm database (dnf creates it) is an empty machine.
    std::error_code missing;
    if (std::filesystem::is_directory(request.installroot, missing)) {
        closure_request.installed_base = request.installroot;
    }
    Result<Closure> closure =
        make_error(ErrorCode::NotFound, "no repository's metadata is at hand");
    if (!sources.empty()) {
        auto groups = request.groups.empty() ? Result<std::vector<std::string>>()
                                             : group_packages(request.groups, work);
        if (groups) {
            closure_request.optional_packages = std::move(*groups);
            closure = resolve_closure(sources, closure_request);
        } else {
            closure = tl::unexpected(std::move(groups.error()));
        }
    }
    report.resolve_seconds = seconds_since(started);
    if (!closure) {
        report.warnings.push_back(fmt::format(
            "cannot work out what dnf will install ({}); dnf downloads the packages itself",
            closure.error().to_string()));
        return false;
    }
    for (RepoWork& item : work) {
        if (item.inputs_ready) {  // written no more once the closure began (Gate)
            const std::set<std::string>& share = closure->shares[item.repo->id];
            item.share.assign(share.begin(), share.end());
        }
    }
    return true;
}

// Each repository's share downloaded into dnf's cache, the connections split by share
// (package_step_connections): a repository's packages go as soon as its revision is parsed,
// while its other records may still download (a repository whose metadata then fails keeps
// them: dnf checks each package against the metadata it fetches itself); those of a repository
// whose metadata in dnf's cache was fresh, once that is read; none where neither holds.
void fetch_packages(std::vector<RepoWork>& work, const PrefetchRequest& settings, Gate& gate,
                    std::stop_token stop) {
    std::vector<std::size_t> shares;
    for (const RepoWork& item : work) {
        shares.push_back(item.share.size());
    }
    const std::vector<unsigned> connections = package_step_connections(shares, settings.parallel);
    for (std::size_t index = 0; index < work.size(); ++index) {
        work[index].parallel = connections[index];
    }
    struct PackageStep {
        Syncer* syncer = nullptr;
        std::shared_ptr<const UpstreamRevision> upstream;
    };
    for_each_in_parallel(work, [&](RepoWork& item) {
        if (item.share.empty()) {
            return;
        }
        const PackageStep step = gate.wait_for(
            item, [](const RepoWork& one) { return one.upstream || one.metadata_done; },
            [](const RepoWork& one) {
                if (one.upstream) {
                    return PackageStep{
                        one.metadata_done ? one.syncer.get() : one.package_syncer.get(),
                        one.upstream};
                }
                return PackageStep{one.metadata_ready ? one.syncer.get() : nullptr, nullptr};
            });
        if (step.syncer != nullptr) {
            fetch_share(item, *step.syncer, step.upstream, settings, stop);
        }
    });
}

}  // namespace

std::vector<unsigned> package_step_connections(std::span<const std::size_t> packages,
                                               unsigned total) {
    total = std::max(total, 1U);
    std::size_t all = 0;
    std::size_t largest = 0;
    for (std::size_t index = 0; index < packages.size(); ++index) {
        all += packages[index];
        largest = packages[index] > packages[largest] ? index : largest;
    }
    std::vector<unsigned> connections(packages.size(), total);
    for (std::size_t index = 0; index < packages.size(); ++index) {
        const std::size_t proportional = all == 0 ? 1 : (packages[index] * total + all / 2) / all;
        const std::size_t floor = std::min<std::size_t>(packages[index], 4);
        if (index != largest) {
            connections[index] = static_cast<unsigned>(
                std::clamp<std::size_t>(std::max(proportional, floor), 1, total));
        }
    }
    return connections;
}

std::string dnf_cache_directory_name(const RepoConfig& repo) {
    std::string source = repo.id;
    if (repo.metalink && !repo.metalink->empty()) {
        source = *repo.metalink;
    } else if (repo.mirrorlist && !repo.mirrorlist->empty()) {
        source = *repo.mirrorlist;
    } else if (!repo.baseurls.empty() && !repo.baseurls.front().empty()) {
        source = repo.baseurls.front();
    }
    return repo.id + "-" + hash_bytes(ChecksumType::Sha256, source).substr(0, 16);
}

Result<PrefetchReport> prefetch_for_dnf(const PrefetchRequest& request, std::stop_token stop) {
    PrefetchReport report;
    report.cachedir = request.cachedir;
    if (auto made = fs::make_directories(request.cachedir, "dnf's cache directory"); !made) {
        return tl::unexpected(std::move(made.error()));
    }
    auto temporary = ScratchDir::create("rpmirror-prefetch");
    if (!temporary) {
        return tl::unexpected(std::move(temporary.error()));
    }
    PrefetchRequest settings = request;
    if (settings.state_dir.empty()) {
        settings.state_dir = temporary->path() / "state";
    }
    const std::set<std::string> expired = expired_repo_ids(request.cachedir);

    // One budget of connections for every repository: as many as one may use alone.
    DownloadOptions shared;
    shared.budget = std::make_shared<ConnectionBudget>(std::max(request.parallel, 1U));
    std::vector<RepoWork> work(request.repos.size());
    for (std::size_t index = 0; index < request.repos.size(); ++index) {
        work[index].syncer = std::make_unique<Syncer>(shared);
        work[index].package_syncer = std::make_unique<Syncer>(shared);
        work[index].repo = &request.repos[index];
        work[index].cache = request.cachedir / dnf_cache_directory_name(request.repos[index]);
    }
    const auto started_all = std::chrono::steady_clock::now();
    Gate gate;
    std::vector<std::jthread> metadata_steps;
    metadata_steps.reserve(work.size());
    for (RepoWork& item : work) {
        metadata_steps.emplace_back([&, one = &item] {
            prepare_metadata(*one, settings, expired, temporary->path(), gate, stop);
        });
    }
    // dnf's solver caches of the repositories whose metadata is new, written once every metadata
    // step is done, while the solve and the packages go on: dnf would otherwise build them from
    // the XML before its own solve.
    std::optional<Error> cache_error;
    std::jthread solver_caches(
        [&work, &settings, &cache_error, &gate, &report, started_all, scratch = temporary->path()] {
            gate.wait_for_all(work, [](const RepoWork& item) { return item.metadata_done; });
            report.metadata_seconds = seconds_since(started_all);
            // Behind the solve and the downloads for the CPU: they are what the install waits on.
            (void)::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 10);
            if (auto written = write_solver_caches(work, settings, scratch); !written) {
                cache_error = written.error();
            }
        });

    if (resolve_shares(work, request, gate, report) && !stop.stop_requested()) {
        const auto started = std::chrono::steady_clock::now();
        fetch_packages(work, settings, gate, stop);
        report.download_seconds = seconds_since(started);
    }
    gate.wait_for_all(work, [](const RepoWork& item) { return item.metadata_done; });
    for (const RepoWork& item : work) {
        report.repositories += item.metadata_ready ? 1 : 0;
        report.metadata_fetched += item.metadata_fetched ? 1 : 0;
    }
    solver_caches.join();
    if (cache_error) {
        report.warnings.push_back(fmt::format(
            "dnf's solver caches not written ({}); dnf builds them", cache_error->to_string()));
    }
    // The steps flushed nothing (SyncOptions::dnf_cache): one syncfs of the cache's filesystem
    // makes metadata, solver caches and packages durable before dnf reads them. (Each package's
    // checksum-cache entry is written at its rename, before any flush, as it was when each step
    // flushed.)
    if (auto flushed = fs::flush_filesystem(request.cachedir); !flushed) {
        report.warnings.push_back(
            fmt::format("dnf's cache cannot be flushed ({})", flushed.error().to_string()));
    }
    for (const RepoWork& item : work) {
        report.packages += item.packages;
        report.bytes += item.bytes;
        report.warnings.insert(report.warnings.end(), item.metadata_warnings.begin(),
                               item.metadata_warnings.end());
        report.warnings.insert(report.warnings.end(), item.package_warnings.begin(),
                               item.package_warnings.end());
    }
    if (stop.stop_requested()) {
        return make_error(ErrorCode::Interrupted, "interrupted", request.cachedir.string());
    }
    return report;
}

}  // namespace rpmirror
