// The live mirror of a local directory (snapshot/backend.hpp's LiveMirror): its sync state file
// and an audit (with the checksum cache the state vouches for) before a snapshot; the copy audited
// again (trusting the cache for the files the snapshot linked, as the links left them) before it
// appears; the state's records following those links after. Reads only: the snapshot's files are
// made by the store (snapshots.cpp).
#include <sys/stat.h>

#include <fmt/core.h>

#include "fs/beneath.hpp"
#include "fs/durable.hpp"
#include "fs/state.hpp"
#include "metadata/treeinfo.hpp"
#include "rpmirror/audit/audit.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "rpmirror/plan/plan.hpp"
#include "snapshot/backend.hpp"

namespace rpmirror::snapshot {

namespace {

// The first problems of `report`, for an error message.
std::string describe_problems(const RepoAuditReport& report) {
    if (report.error) {
        return report.error->to_string();
    }
    std::string text = fmt::format("{} problem(s)", report.problems.size());
    for (std::size_t index = 0; index < report.problems.size() && index < 3; ++index) {
        text +=
            fmt::format("{} {}: {}", index == 0 ? ":" : ";", report.problems[index].path.string(),
                        report.problems[index].describe());
    }
    return text;
}

std::filesystem::path state_dir_of(const SnapshotLock& lock) {
    return lock.state_dir.empty() ? fs::default_state_dir() : lock.state_dir;
}

class LocalLive final : public LiveMirror {
  public:
    LocalLive(const SnapshotRoot& root, store::LocalStore& mirror)
        : root_(root), mirror_(mirror), repo_dir_(mirror.root()) {}

    Result<std::vector<LiveFile>> check(const SnapshotCreateOptions& options) override {
        options_ = options;
        // An installation tree (.treeinfo at the root) is snapshotted whole: every repository it
        // names, its images, and .treeinfo, as `sync --treeinfo` publishes them.
        std::vector<std::string> parts{""};
        auto tree = read_live_tree(mirror_);
        if (!tree) {
            return tl::unexpected(std::move(tree.error()));
        }
        if (*tree) {
            treeinfo_ = std::move((*tree)->text);
            parts = std::move((*tree)->tree.repositories);
        }
        for (const std::string& part : parts) {
            auto live = check_live(part, options);
            if (!live) {
                return tl::unexpected(std::move(live.error()));
            }
            repositories_.push_back(std::move(*live));
        }
        if (treeinfo_) {
            images_ = audit_tree_images(root_.repo_id, repo_dir_, options.use_checksum_cache,
                                        options.threads,
                                        cache_trust_of(options.lock.state_dir, repo_dir_));
            if (!images_->ok()) {
                return make_error(
                    ErrorCode::BadInput,
                    "not a complete, verified installation tree: " + describe_problems(*images_),
                    repo_dir_.string());
            }
        }
        std::vector<LiveFile> files;
        const auto add = [&](const std::filesystem::path& relative, bool is_metadata) {
            files.push_back({relative.generic_string(), is_metadata, std::nullopt});
            struct stat st {};
            if (!is_metadata && !options.copy &&
                ::lstat((repo_dir_ / relative).c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
                linked_.emplace(relative.generic_string(), st);
            }
        };
        for (const LiveRepository& live : repositories_) {
            // Its records and packages, then its index, the index's signature and comps.xml
            // (-m), which are not records of repomd.xml.
            for (const RepoAuditReport::IntactFile& file : live.audit.intact) {
                add(live.part / file.path, file.is_metadata);
            }
            for (const std::filesystem::path extra :
                 {"repodata/repomd.xml", "repodata/repomd.xml.asc", "comps.xml"}) {
                const std::filesystem::path relative = live.part / extra;
                struct stat st {};
                if (extra != "repodata/repomd.xml" &&
                    (::lstat((repo_dir_ / relative).c_str(), &st) != 0 || !S_ISREG(st.st_mode))) {
                    continue;
                }
                add(relative, true);
            }
        }
        if (treeinfo_) {
            for (const RepoAuditReport::IntactFile& image : images_->intact) {
                add(image.path, false);
            }
            add(std::string(kTreeinfoName), true);
        }
        return files;
    }

    Result<void> verify_copy(const std::string& staging_name) override {
        const std::filesystem::path staging(staging_name);
        // What each link changed (the ctime): recorded, so the copy's audit believes the cache as
        // the live audit did, and the live record follows (follow_own_links).
        auto trust = std::make_shared<CacheTrust>();
        for (const auto& [relative, before] : linked_) {
            struct stat after {};
            if (::lstat((staging / relative).c_str(), &after) == 0 &&
                after.st_ino == before.st_ino && after.st_size == before.st_size &&
                fs::timespec_ns(after.st_mtim) == fs::timespec_ns(before.st_mtim)) {
                relinked_.push_back(
                    {state_file_of(relative, before), state_file_of(relative, after)});
                trust->vouch(after.st_ino, static_cast<std::uint64_t>(after.st_size),
                             fs::timespec_ns(after.st_mtim), fs::timespec_ns(after.st_ctim));
            }
        }
        // What was linked is what was verified: each copy of an index is the one its state
        // names, and every record, package and image beneath the snapshot checks out (from the
        // cache for links).
        for (const LiveRepository& live : repositories_) {
            const std::filesystem::path dir = live.part.empty() ? staging : staging / live.part;
            auto copied_repomd = fs::read_file(dir / "repodata" / "repomd.xml");
            if (!copied_repomd ||
                hash_bytes(ChecksumType::Sha256, *copied_repomd) != live.repomd_sha256) {
                return make_error(ErrorCode::Corrupt,
                                  "repodata/repomd.xml changed while the snapshot was taken",
                                  (repo_dir_ / live.part).string());
            }
            AuditOptions copy_options = live.audit_options;
            copy_options.trust = trust;
            const RepoAuditReport copy =
                audit_repository(root_.repo_id, dir.string(), copy_options);
            if (!copy.ok() || copy.verified != live.audit.verified) {
                return make_error(ErrorCode::Corrupt,
                                  "the snapshot does not verify: " + describe_problems(copy),
                                  dir.string());
            }
        }
        if (treeinfo_) {
            auto copied = fs::read_file(staging / std::string(kTreeinfoName));
            const RepoAuditReport copy = audit_tree_images(
                root_.repo_id, staging, options_.use_checksum_cache, options_.threads, trust);
            if (!copied || *copied != *treeinfo_) {
                return make_error(ErrorCode::Corrupt,
                                  ".treeinfo changed while the snapshot was taken",
                                  repo_dir_.string());
            }
            if (!copy.ok() || copy.verified != images_->verified) {
                return make_error(ErrorCode::Corrupt,
                                  "the snapshot's images do not verify: " + describe_problems(copy),
                                  staging.string());
            }
        }
        return {};
    }

    void committed(const SnapshotCreateOptions& options) override {
        // The live mirror's records follow the links just made (they moved each file's ctime
        // only): the next sync stays a no-op, its cache still vouched for. Best effort: a record
        // not moved costs the next sync its no-op, never a wrong answer.
        const std::filesystem::path state_dir = state_dir_of(options.lock);
        for (const LiveRepository& live : repositories_) {
            const std::filesystem::path dir = live.part.empty() ? repo_dir_ : repo_dir_ / live.part;
            (void)follow_own_links(sync_state_path(state_dir, dir), relinked_);
        }
        if (treeinfo_) {
            (void)follow_own_links(
                sync_state_path(state_dir, repo_dir_ / std::string(kTreeImagesCatalogue)),
                relinked_);
        }
    }

  private:
    // One repository of the live mirror (the mirror's root, or a tree's repository at `part`),
    // checked complete and verified.
    struct LiveRepository {
        std::filesystem::path part;  // relative to the mirror's root ("" = the root)
        std::string repomd_sha256;
        AuditOptions audit_options;
        RepoAuditReport audit;
    };

    // Checks the repository at `part` of the live mirror: the state of its last successful sync
    // names the live repomd.xml, and every record and every selected package is present and
    // intact (the audit).
    Result<LiveRepository> check_live(const std::string& part,
                                      const SnapshotCreateOptions& options) const {
        LiveRepository live;
        live.part = part;
        const std::filesystem::path dir = part.empty() ? repo_dir_ : repo_dir_ / part;
        const std::filesystem::path state_dir = state_dir_of(options.lock);
        auto repomd = fs::read_file(dir / "repodata" / "repomd.xml");
        if (!repomd) {
            return make_error(ErrorCode::BadInput,
                              "no repodata/repomd.xml: a snapshot needs a mirror synced with "
                              "--download-metadata",
                              dir.string());
        }
        live.repomd_sha256 = hash_bytes(ChecksumType::Sha256, *repomd);
        const auto state = read_sync_state(sync_state_path(state_dir, dir));
        if (!state || !state->selection) {
            return make_error(
                ErrorCode::BadInput,
                fmt::format("no completed `rpmirror sync` recorded for this mirror (in "
                            "{}); sync it first",
                            state_dir.string()),
                dir.string());
        }
        // A filtered mirror publishes its own repomd.xml (rewritten metadata); others upstream's.
        const std::string& published_sha256 = state->published_repomd_sha256.empty()
                                                  ? state->repomd_sha256
                                                  : state->published_repomd_sha256;
        if (published_sha256 != live.repomd_sha256) {
            return make_error(
                ErrorCode::BadInput,
                "repodata/repomd.xml is not the one the last completed sync published "
                "(the last sync did not complete, or the metadata was changed); sync "
                "again first",
                dir.string());
        }
        live.audit_options.selection = state->selection->options;
        live.audit_options.use_checksum_cache = options.use_checksum_cache;
        live.audit_options.trust = cache_trust_of(state_dir, dir);
        live.audit_options.threads = options.threads;
        live.audit = audit_repository(root_.repo_id, dir.string(), live.audit_options);
        if (!live.audit.ok()) {
            // The sync's fingerprint (sync/sync_settings.cpp) names a policy other than
            // immediate: the mirror lacks what `rpmirror serve` has not fetched yet.
            const bool on_demand = state->options_fingerprint.find(" policy=") != std::string::npos;
            return make_error(ErrorCode::BadInput,
                              "not a complete, verified mirror: " + describe_problems(live.audit) +
                                  (on_demand ? "; it is synced with a download policy that "
                                               "fetches packages on demand: run `rpmirror sync "
                                               "--download-policy immediate` (job key "
                                               "download-policy = immediate) first, or fetch "
                                               "every package through `rpmirror serve`"
                                             : ""),
                              dir.string());
        }
        if (live.audit.intact.size() != live.audit.verified) {
            return make_error(
                ErrorCode::Unsupported,
                "packages outside the repository directory (--safe-write-path) cannot "
                "be snapshotted",
                dir.string());
        }
        return live;
    }

    const SnapshotRoot& root_;
    store::LocalStore& mirror_;
    std::filesystem::path repo_dir_;  // the live mirror
    SnapshotCreateOptions options_;
    std::optional<std::string> treeinfo_;
    std::vector<LiveRepository> repositories_;
    std::optional<RepoAuditReport> images_;
    std::map<std::string, struct stat> linked_;  // by key: the lstat before the link
    std::vector<RelinkedFile> relinked_;
};

}  // namespace

std::unique_ptr<LiveMirror> local_live_mirror(const SnapshotRoot& root, store::LocalStore& mirror) {
    return std::make_unique<LocalLive>(root, mirror);
}

}  // namespace rpmirror::snapshot
