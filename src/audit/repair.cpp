// verify --repair, written once over store::MirrorStore (see audit/audit.hpp): what the
// audit found damaged is removed under the repository's lock, then the repository is synced with
// the options its last sync recorded.
#include <map>
#include <set>

#include "audit/audit.hpp"
#include "audit/report_parts.hpp"
#include "store/mirror_root.hpp"

namespace rpmirror {

namespace {

// A package whose bytes are wrong, or a symlink where a package belongs: removed before the
// sync. Metadata is replaced as a whole by the sync's publication.
bool is_removable(const AuditProblem& problem) {
    if (problem.is_metadata || problem.root.empty()) {
        return false;
    }
    return problem.kind == ProblemKind::SizeMismatch ||
           problem.kind == ProblemKind::ChecksumMismatch ||
           (problem.kind == ProblemKind::NotRegularFile && problem.detail.starts_with("symlink"));
}

}  // namespace

namespace audit_parts {

RepairReport repair_store(Syncer& syncer, const RepoConfig& repo, store::MirrorStore& mirror,
                          const RepoAuditReport& audit, SyncOptions sync_options,
                          std::stop_token stop) {
    RepairReport repair;
    const auto failed = [&](Error error) {
        repair.error = std::move(error);
        repair.sync.repo_id = repo.id;
        return repair;
    };
    // The lock covers every change and the sync: nothing is changed while another run syncs the
    // repository, and none syncs it while it is repaired.
    auto lock = mirror.lock(sync_options.lock_wait, stop);
    if (!lock) {
        return failed(std::move(lock.error()));
    }
    // As the last sync made the mirror: its metadata signed with the same key, its objects given
    // the same ACL.
    auto recorded = mirror.recorded();
    if (!recorded) {
        return failed(std::move(recorded.error()));
    }
    if (recorded->publishing) {
        sync_options.sign_key = recorded->publishing->sign_key;
        sync_options.upstream_metadata = recorded->publishing->upstream_metadata;
    }
    sync_options.s3_acl = recorded->acl;
    // The metadata is republished iff the mirror has some (a damaged record is replaced).
    auto has_metadata = mirror.holds_below("repodata");
    if (!has_metadata) {
        return failed(std::move(has_metadata.error()));
    }
    sync_options.download_metadata = *has_metadata;

    // First the record forgets what is damaged or missing (a repair killed after it leaves files
    // nothing vouches for, which the next sync verifies), then the damaged files go.
    std::set<std::string> forget;
    std::map<std::filesystem::path, std::vector<std::string>> removable;  // by root
    for (const AuditProblem& problem : audit.problems) {
        if (problem.kind == ProblemKind::SizeMismatch ||
            problem.kind == ProblemKind::ChecksumMismatch || problem.kind == ProblemKind::Missing) {
            forget.insert(problem.path.generic_string());
        }
        if (is_removable(problem)) {
            removable[problem.root].push_back(problem.destination.generic_string());
        }
    }
    if (auto forgotten = mirror.forget(forget); !forgotten) {
        return failed(std::move(forgotten.error()));
    }
    if (auto held = (*lock)->confirm(); !held) {
        return failed(std::move(held.error()));
    }
    for (const auto& [root, keys] : removable) {
        std::unique_ptr<store::MirrorStore> other;
        store::MirrorStore* store = &mirror;
        if (root != audit.repo_dir) {
            auto opened = mirror.beside(root);
            if (!opened) {
                return failed(std::move(opened.error()));
            }
            other = std::move(*opened);
            store = other.get();
        }
        auto removed = store->remove_files(keys);
        if (!removed) {
            return failed(std::move(removed.error()));
        }
        for (const std::string& key : *removed) {
            // As the audit named it (relative to the repository directory).
            for (const AuditProblem& problem : audit.problems) {
                if (problem.root == root && problem.destination == key) {
                    repair.removed.push_back(problem.path);
                    break;
                }
            }
        }
    }
    repair.sync = syncer.sync(repo, sync_options, nullptr, std::move(stop), lock->get());
    return repair;
}

}  // namespace audit_parts

RepairReport repair_repository(Syncer& syncer, const RepoConfig& repo, const RepoAuditReport& audit,
                               const RepairOptions& options, std::stop_token stop) {
    SyncOptions sync_options;
    sync_options.download_path = options.download_path;
    sync_options.norepopath = options.norepopath;
    sync_options.safe_write_path = options.safe_write_path;
    sync_options.use_checksum_cache = options.use_checksum_cache;
    sync_options.verify_threads = options.threads;
    sync_options.state_dir = options.state_dir;
    sync_options.lock_wait = options.lock_wait;
    sync_options.selection = options.selection;
    sync_options.s3 = options.s3;
    auto root = store::MirrorRoot::open(options.download_path.native(),
                                        {state_directory(sync_options), options.s3});
    if (!root) {
        RepairReport report;
        report.error = std::move(root.error());
        return report;
    }
    const std::unique_ptr<store::MirrorStore> mirror =
        root->repository(options.norepopath ? std::string() : repo.id);
    return audit_parts::repair_store(syncer, repo, *mirror, audit, std::move(sync_options),
                                     std::move(stop));
}

}  // namespace rpmirror
