// Auditing (and repairing) a mirror in object storage (see rpmirror/s3_audit.hpp).
#include "rpmirror/s3_audit.hpp"

#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <thread>
#include <utility>

#include <fmt/core.h>

#include "audit/report_parts.hpp"
#include "plan/selection_json.hpp"
#include "rpmirror/checksum.hpp"
#include "rpmirror/metadata.hpp"
#include "rpmirror/plan.hpp"
#include "s3/lease.hpp"
#include "s3/mirror_state.hpp"
#include "store/s3_store.hpp"
#include "util/parallel.hpp"
#include "util/scratch_dir.hpp"
#include "util/text.hpp"

namespace rpmirror {

namespace {

constexpr std::string_view kRepomdKey = "repodata/repomd.xml";

// One object the mirror must hold.
struct Check {
    std::string key;  // relative to the repository's prefix
    ChecksumType type = ChecksumType::Sha256;
    std::string digest;  // lowercase hex
    std::optional<std::uint64_t> size;
    bool is_metadata = false;
};

// The digest of an object read whole, or in ranges of `range_size` read `threads` at a time and
// hashed in order.
struct ObjectDigest {
    std::string digest;
    std::uint64_t size = 0;
};

class S3Auditor {
  public:
    S3Auditor(std::string_view repo_id, const s3::S3Config& config, const s3::S3Location& repo,
              const S3AuditOptions& options, RepoAuditReport& report)
        : config_(config), repo_(repo), options_(options), report_(report), client_(config) {
        report_.repo_id = repo_id;
        report_.repo_dir = repo.to_string();
        report_.reference_root = repo.to_string();
    }

    Result<void> run() {
        auto listing = s3::list_mirror(client_, repo_, nullptr);
        if (!listing) {
            return tl::unexpected(std::move(listing.error()));
        }
        listing_ = std::move(*listing);
        auto state = s3::load_state(client_, repo_);
        if (!state) {
            return tl::unexpected(std::move(state.error()));
        }
        state_ = std::move(*state);
        auto scratch = ScratchDir::create("rpmirror-s3verify");
        if (!scratch) {
            return tl::unexpected(std::move(scratch.error()));
        }
        scratch_.emplace(std::move(*scratch));

        std::set<std::string> listed;
        if (listing_.contains(std::string(kRepomdKey))) {
            if (auto from_metadata = expect_from_metadata(listed); !from_metadata) {
                return from_metadata;
            }
        } else if (state_) {
            // Nothing published (a sync without --download-metadata): what the state recorded.
            for (const auto& [key, object] : state_->objects) {
                const bool is_metadata = key.starts_with("repodata/");
                checks_.push_back({key, object.checksum_type, text::to_lower(object.digest),
                                   object.size, is_metadata});
                if (!is_metadata) {
                    ++report_.packages;
                    listed.insert(key);
                }
            }
            run_checks();
        } else {
            return make_error(ErrorCode::NotFound,
                              "no repository here: neither published metadata (repodata/"
                              "repomd.xml) nor rpmirror's state (.rpmirror/state.json)",
                              repo_.to_string());
        }
        if (options_.report_extra) {
            store::S3Store store(client_, repo_, &listing_);
            auto extra = store::unlisted_packages(store, listed);
            if (!extra) {
                return tl::unexpected(std::move(extra.error()));
            }
            for (const auto& [key, object] : *extra) {
                AuditProblem problem;
                problem.kind = ProblemKind::Extra;
                problem.path = key;
                problem.actual_size = object.size;
                problem.root = repo_.to_string();
                problem.destination = key;
                report_.problems.push_back(std::move(problem));
            }
        }
        return {};
    }

  private:
    std::string url(std::string_view key) const {
        return s3::object_url(repo_.bucket, repo_.key(key));
    }

    // Reads the object `key` whole into the file `path`.
    Result<void> download(std::string_view key, const std::filesystem::path& path) {
        return s3::get_object_to_file(client_, repo_, key, path);
    }

    // The expected objects from the published repodata/: every record, and the selected packages
    // of primary.xml (fetched into the scratch directory and verified first).
    Result<void> expect_from_metadata(std::set<std::string>& listed) {
        const std::filesystem::path local_repomd = scratch_->path() / kRepomdKey;
        if (auto got = download(kRepomdKey, local_repomd); !got) {
            return got;
        }
        std::ifstream in(local_repomd, std::ios::binary);
        const std::string repomd_bytes((std::istreambuf_iterator<char>(in)),
                                       std::istreambuf_iterator<char>());
        auto repomd = parse_repomd(repomd_bytes, url(kRepomdKey));
        if (!repomd) {
            return tl::unexpected(std::move(repomd.error()));
        }
        const RepomdRecord* primary = repomd->find("primary");
        if (primary == nullptr) {
            return make_error(ErrorCode::BadInput, "lists no primary metadata", url(kRepomdKey));
        }
        std::optional<std::string> primary_key;
        for (const RepomdRecord& record : repomd->records) {
            const std::optional<std::filesystem::path> relative =
                audit_parts::record_path(record, report_);
            if (!relative) {
                continue;
            }
            if (&record == primary) {
                primary_key = relative->generic_string();
            }
            checks_.push_back({relative->generic_string(), record.checksum.type,
                               text::to_lower(record.checksum.hex), record.size, true});
        }
        run_checks();
        if (!primary_key) {
            return make_error(ErrorCode::BadInput, "its primary record cannot be checked",
                              url(kRepomdKey));
        }
        for (const AuditProblem& problem : report_.problems) {
            if (problem.path == *primary_key) {
                return make_error(ErrorCode::Corrupt,
                                  "primary metadata " + problem.describe() +
                                      "; the package list cannot be trusted, packages not audited",
                                  url(*primary_key));
            }
        }
        auto primary_path = fetch_record(*primary, *primary_key);
        if (!primary_path) {
            Error error = std::move(primary_path.error());
            error.message += "; the package list cannot be trusted, packages not audited";
            return tl::unexpected(std::move(error));
        }
        RepoPackageSource source;
        source.primary_path = *primary_path;
        source.primary_name = url(*primary_key);
        source.primary_open_size = primary->open_size;
        if (const RepomdRecord* modules = repomd->find("modules");
            modules != nullptr && options_.selection.newest_only) {
            auto relative = safe_relative_path(modules->location_href, "module metadata");
            if (!relative) {
                return tl::unexpected(std::move(relative.error()));
            }
            auto fetched = fetch_record(*modules, relative->generic_string());
            if (!fetched) {
                Error error = std::move(fetched.error());
                error.message +=
                    "; the newest packages of module streams cannot be chosen, packages not "
                    "audited";
                return tl::unexpected(std::move(error));
            }
            source.modules_path = *fetched;
            source.modules_name = url(relative->generic_string());
        }
        auto packages = audit_parts::read_packages(source, options_.selection, report_);
        if (!packages) {
            return tl::unexpected(std::move(packages.error()));
        }
        // The planner's safe paths (an object store has no symlinks, but an href must still
        // name a key inside the repository: the sync refuses any other).
        auto plan = plan_sync(packages->index, packages->selection, scratch_->path() / "plan",
                              PathPolicy{}, report_.repo_id);
        if (!plan) {
            return tl::unexpected(std::move(plan.error()));
        }
        report_.packages = plan->targets.size();
        for (const PackageTarget& target : plan->targets) {
            const PackageView package = packages->index[target.position];
            const std::string key = target.relative_path.generic_string();
            checks_.push_back({key, package.checksum_type, text::to_lower(package.checksum_hex()),
                               package.package_size == kUnknownSize
                                   ? std::nullopt
                                   : std::optional<std::uint64_t>(package.package_size),
                               false});
            listed.insert(key);
        }
        run_checks();
        return {};
    }

    // GETs the metadata record `key` into the scratch directory and verifies it against
    // `record`; returns its local path.
    Result<std::filesystem::path> fetch_record(const RepomdRecord& record, const std::string& key) {
        const std::filesystem::path local = scratch_->path() / key;
        if (auto got = download(key, local); !got) {
            return tl::unexpected(std::move(got.error()));
        }
        if (auto verified = verify_metadata_file(local, record); !verified) {
            Error error = std::move(verified.error());
            error.subject = url(key);
            return tl::unexpected(std::move(error));
        }
        return local;
    }

    AuditProblem problem_for(const Check& check) const {
        AuditProblem problem;
        problem.path = check.key;
        problem.is_metadata = check.is_metadata;
        problem.root = repo_.to_string();
        problem.destination = check.key;
        problem.expected_size = check.size;
        problem.checksum_type = check.type;
        return problem;
    }

    // Returns true iff the state recorded `check.key` with this digest and the listing still
    // shows the object it recorded.
    bool vouched_by_state(const Check& check, const s3::ListedObject& listed) const {
        if (!options_.use_state || !state_) {
            return false;
        }
        const auto found = state_->objects.find(check.key);
        return found != state_->objects.end() && s3::still_matches(found->second, listed) &&
               found->second.checksum_type == check.type &&
               text::to_lower(found->second.digest) == check.digest;
    }

    // Checks every pending object: listing (presence, size), then the state, then a read.
    void run_checks() {
        std::vector<const Check*> to_hash;
        for (const Check& check : checks_) {
            if (check.is_metadata) {
                ++report_.metadata_files;
            }
            const auto found = listing_.find(check.key);
            if (found == listing_.end()) {
                AuditProblem problem = problem_for(check);
                problem.kind = ProblemKind::Missing;
                report_.problems.push_back(std::move(problem));
                continue;
            }
            if (check.size && *check.size != found->second.size) {
                AuditProblem problem = problem_for(check);
                problem.kind = ProblemKind::SizeMismatch;
                problem.actual_size = found->second.size;
                report_.problems.push_back(std::move(problem));
                continue;
            }
            if (vouched_by_state(check, found->second)) {
                ++report_.verified;
                ++report_.from_cache;
                continue;
            }
            to_hash.push_back(&check);
        }
        hash_objects(to_hash);
        checks_.clear();
    }

    // Reads and hashes `checks`: small objects `threads` at once (one client per worker), then
    // each large one as parallel ranged GETs.
    void hash_objects(const std::vector<const Check*>& checks) {
        std::vector<const Check*> small;
        std::vector<const Check*> large;
        for (const Check* check : checks) {
            const std::uint64_t size = listing_.at(check->key).size;
            (size > options_.ranged_threshold ? large : small).push_back(check);
        }
        std::vector<Result<ObjectDigest>> results(small.size(),
                                                  Result<ObjectDigest>(ObjectDigest{}));
        for_each_index_in_parallel(small.size(), options_.threads, [&] {
            return [&, client = std::make_shared<s3::S3Client>(config_)](std::size_t index) {
                const std::uint64_t before = client->request_count();
                results[index] = hash_whole(*client, *small[index]);
                worker_requests_.fetch_add(client->request_count() - before);
            };
        });
        for (std::size_t index = 0; index < small.size(); ++index) {
            record(*small[index], std::move(results[index]));
        }
        for (const Check* check : large) {
            const s3::ListedObject& listed = listing_.at(check->key);
            record(*check, hash_ranged(*check, listed.size, listed.etag));
        }
    }

    Result<ObjectDigest> hash_whole(s3::S3Client& client, const Check& check) const {
        Hasher hasher(check.type);
        ObjectDigest digest;
        auto got = client.get_object(repo_.bucket, repo_.key(check.key),
                                     [&](std::span<const char> bytes) -> Result<void> {
                                         hasher.update(bytes.data(), bytes.size());
                                         digest.size += bytes.size();
                                         return {};
                                     });
        if (!got) {
            return tl::unexpected(std::move(got.error()));
        }
        digest.digest = hasher.finish();
        return digest;
    }

    // Reads `size` bytes of `check` in ranges, up to `threads` ranges at once (each worker with
    // its own client), and hashes them in order. Every range is pinned to the listed `etag`
    // (If-Match): an object replaced while it is read is an error, never a digest of a mix.
    Result<ObjectDigest> hash_ranged(const Check& check, std::uint64_t size,
                                     const std::string& etag) {
        const std::uint64_t range_size = std::max<std::uint64_t>(options_.range_size, 1);
        const std::uint64_t range_count = (size + range_size - 1) / range_size;
        const unsigned workers = effective_worker_count(options_.threads, range_count);
        std::vector<s3::S3Client> clients;
        clients.reserve(workers);
        for (unsigned worker = 0; worker < workers; ++worker) {
            clients.emplace_back(config_);
        }
        Hasher hasher(check.type);
        ObjectDigest digest;
        for (std::uint64_t first = 0; first < range_count; first += workers) {
            const std::uint64_t batch = std::min<std::uint64_t>(workers, range_count - first);
            std::vector<Result<std::string>> bodies(batch, Result<std::string>(std::string()));
            {
                std::vector<std::jthread> threads;
                for (std::uint64_t slot = 0; slot < batch; ++slot) {
                    threads.emplace_back([&, slot] {
                        const std::uint64_t offset = (first + slot) * range_size;
                        bodies[slot] = clients[slot].get_object(
                            repo_.bucket, repo_.key(check.key),
                            s3::ByteRange{offset, std::min(range_size, size - offset)}, etag);
                    });
                }
            }  // joined
            for (Result<std::string>& body : bodies) {
                if (!body) {
                    count_requests(clients);
                    if (body.error().code == ErrorCode::Busy) {
                        return make_error(ErrorCode::Busy,
                                          "replaced while it was being read (its ETag is no "
                                          "longer " +
                                              etag + "); not judged: verify again",
                                          s3::object_url(repo_.bucket, repo_.key(check.key)));
                    }
                    return tl::unexpected(std::move(body.error()));
                }
                hasher.update(body->data(), body->size());
                digest.size += body->size();
            }
        }
        count_requests(clients);
        digest.digest = hasher.finish();
        return digest;
    }

    void count_requests(const std::vector<s3::S3Client>& clients) {
        for (const s3::S3Client& client : clients) {
            worker_requests_.fetch_add(client.request_count());
        }
    }

    void record(const Check& check, Result<ObjectDigest> result) {
        if (!result) {
            AuditProblem problem = problem_for(check);
            problem.kind = result.error().code == ErrorCode::NotFound ? ProblemKind::Missing
                                                                      : ProblemKind::Unreadable;
            problem.detail = result.error().to_string();
            report_.problems.push_back(std::move(problem));
            return;
        }
        report_.bytes_hashed += result->size;
        if (result->digest == check.digest) {
            ++report_.verified;
            report_.intact.push_back({check.key, check.is_metadata});
            return;
        }
        AuditProblem problem = problem_for(check);
        problem.actual_size = result->size;
        problem.kind = ProblemKind::ChecksumMismatch;
        problem.expected_digest = check.digest;
        problem.actual_digest = result->digest;
        report_.problems.push_back(std::move(problem));
    }

    const s3::S3Config& config_;
    const s3::S3Location& repo_;
    const S3AuditOptions& options_;
    RepoAuditReport& report_;
    s3::S3Client client_;
    std::map<std::string, s3::ListedObject> listing_;
    std::optional<s3::MirrorState> state_;
    std::optional<ScratchDir> scratch_;
    std::vector<Check> checks_;
    std::atomic<std::uint64_t> worker_requests_{0};  // of the clients of the parallel reads

  public:
    // Returns the requests sent so far by every client of this audit.
    std::uint64_t requests() const { return client_.request_count() + worker_requests_.load(); }
};

}  // namespace

RepoAuditReport audit_s3_repository(std::string_view repo_id, const s3::S3Config& config,
                                    const s3::S3Location& repo, const S3AuditOptions& options) {
    const auto started = std::chrono::steady_clock::now();
    RepoAuditReport report;
    S3Auditor auditor(repo_id, config, repo, options, report);
    if (auto audited = auditor.run(); !audited) {
        report.error = std::move(audited.error());
    }
    report.s3_requests = auditor.requests();
    audit_parts::finish(report, started);
    return report;
}

Result<std::vector<std::string>> discover_s3_repositories(const s3::S3Config& config,
                                                          const s3::S3Location& mirror) {
    s3::S3Client client(config);
    auto listed = client.list_all_objects(mirror.bucket, mirror.prefix);
    if (!listed) {
        return tl::unexpected(std::move(listed.error()));
    }
    std::set<std::string> ids;
    for (const s3::ListedObject& object : *listed) {
        const std::string_view relative = std::string_view(object.key).substr(mirror.prefix.size());
        const auto slash = relative.find('/');
        if (slash == std::string_view::npos) {
            continue;
        }
        const std::string id(relative.substr(0, slash));
        const std::string_view rest = relative.substr(slash + 1);
        if (is_valid_repo_id(id) &&
            (rest == "repodata/repomd.xml" || rest == ".rpmirror/state.json")) {
            ids.insert(id);
        }
    }
    return std::vector<std::string>(ids.begin(), ids.end());
}

Result<std::optional<RecordedSelection>> recorded_s3_selection(const s3::S3Config& config,
                                                               const s3::S3Location& repo) {
    s3::S3Client client(config);
    auto state = s3::load_state(client, repo);
    if (!state) {
        return tl::unexpected(std::move(state.error()));
    }
    if (!*state || (*state)->selection.empty()) {
        return std::optional<RecordedSelection>();
    }
    return selection_from_text((*state)->selection);
}

RepairReport repair_s3_repository(Syncer& syncer, const RepoConfig& repo,
                                  const s3::S3Config& config, const s3::S3Location& repo_location,
                                  const RepoAuditReport& audit, const S3RepairOptions& options,
                                  std::stop_token stop) {
    RepairReport repair;
    repair.sync.repo_id = repo.id;
    s3::S3Client client(config);
    std::vector<std::string> damaged;
    std::set<std::string> forget;
    for (const AuditProblem& problem : audit.problems) {
        const std::string key = problem.path.generic_string();
        if (problem.kind == ProblemKind::SizeMismatch ||
            problem.kind == ProblemKind::ChecksumMismatch) {
            damaged.push_back(repo_location.key(key));
            repair.removed.push_back(key);
            forget.insert(key);
        } else if (problem.kind == ProblemKind::Missing) {
            forget.insert(key);
        }
    }
    // The repository's lease, for the whole repair (the sync below runs under it): nothing is
    // changed while another worker syncs it, and no worker syncs it while it is repaired.
    auto lease = s3::Lease::acquire(client, repo_location, s3::default_lease_owner(),
                                    config.lease_ttl, options.lock_wait, stop);
    if (!lease) {
        repair.error = std::move(lease.error());
        return repair;
    }
    lease->keep_alive();
    auto state = s3::load_state(client, repo_location);
    if (!state) {
        repair.error = std::move(state.error());
        return repair;
    }
    // The ACL the mirror's objects were given: what is uploaded again gets it too.
    const std::string acl = *state ? (*state)->acl : std::string();
    const std::string recorded_publishing = *state ? (*state)->publishing : std::string();
    if (*state) {
        // First the state forgets them (a killed repair then leaves objects no state vouches
        // for, which the next sync verifies), then they go.
        s3::MirrorState updated = std::move(**state);
        for (const std::string& key : forget) {
            updated.objects.erase(key);
        }
        updated.repomd_sha256.clear();
        if (auto stored = s3::store_state(client, repo_location, updated); !stored) {
            repair.error = std::move(stored.error());
            return repair;
        }
    }
    if (auto held = lease->confirm(); !held) {
        repair.error = std::move(held.error());
        return repair;
    }
    if (!damaged.empty()) {
        if (auto deleted = client.delete_objects(repo_location.bucket, damaged); !deleted) {
            repair.error = std::move(deleted.error());
            repair.removed.clear();
            return repair;
        }
    }
    SyncOptions sync_options;
    sync_options.download_path = options.download_path;
    sync_options.norepopath = options.norepopath;
    sync_options.verify_threads = options.threads;
    sync_options.selection = options.selection;
    // The metadata is republished iff the mirror had it (a damaged record is replaced).
    sync_options.download_metadata = audit.metadata_files > 0;
    sync_options.s3 = options.s3;
    sync_options.s3_acl = acl;
    // The metadata is published as the last sync published it (signed with its key).
    if (const auto publishing = publishing_from_text(recorded_publishing)) {
        sync_options.sign_key = publishing->sign_key;
        sync_options.upstream_metadata = publishing->upstream_metadata;
    }
    sync_options.take_lock = false;  // the repair holds the lease
    repair.sync = syncer.sync(repo, sync_options, nullptr, std::move(stop));
    return repair;
}

}  // namespace rpmirror
