// The audit's two uses of the sync stage: fetching a repository's current metadata to audit
// against (a sync that selects no package), and repairing a mirror (damaged files removed, then a
// full sync).
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <utility>

#include <fmt/format.h>

#include "fs/beneath.hpp"
#include "rpmirror/audit.hpp"
#include "rpmirror/plan.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror {

RemoteMetadata::RemoteMetadata(std::filesystem::path temp_dir, std::filesystem::path root)
    : temp_dir_(std::move(temp_dir)), root_(std::move(root)) {}

RemoteMetadata::RemoteMetadata(RemoteMetadata&& other) noexcept
    : temp_dir_(std::exchange(other.temp_dir_, {})), root_(std::exchange(other.root_, {})) {}

RemoteMetadata& RemoteMetadata::operator=(RemoteMetadata&& other) noexcept {
    if (this != &other) {
        RemoteMetadata discarded(std::move(*this));
        temp_dir_ = std::exchange(other.temp_dir_, {});
        root_ = std::exchange(other.root_, {});
    }
    return *this;
}

RemoteMetadata::~RemoteMetadata() {
    if (!temp_dir_.empty()) {
        std::error_code ignored;
        std::filesystem::remove_all(temp_dir_, ignored);
    }
}

Result<RemoteMetadata> RemoteMetadata::fetch(Syncer& syncer, const RepoConfig& repo,
                                             std::stop_token stop) {
    const char* tmpdir = std::getenv("TMPDIR");
    std::string pattern = std::string(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp") +
                          "/rpmirror-verify-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
        return make_errno_error("cannot create a temporary directory", pattern, errno);
    }
    RemoteMetadata metadata(pattern, std::filesystem::path(pattern) / repo.id);

    // A sync of the metadata alone: every package excluded, repodata/ downloaded, verified
    // (metalink, sizes, checksums) and published into the temporary directory.
    RepoConfig metadata_only = repo;
    metadata_only.excludepkgs.push_back("*");
    SyncOptions options;
    options.download_path = pattern;
    options.download_metadata = true;
    options.upstream_metadata = true;  // upstream's records as they are, never rewritten
    RepoSyncReport report = syncer.sync(metadata_only, options, nullptr, std::move(stop));
    if (report.error) {
        return tl::unexpected(std::move(*report.error));
    }
    if (!report.metadata_published) {
        return make_error(ErrorCode::Network, "the repository's metadata could not be fetched",
                          repo.id);
    }
    return metadata;
}

namespace {

bool is_removable(const AuditProblem& problem) {
    if (problem.is_metadata || problem.root.empty()) {
        return false;  // metadata is replaced as a whole by the sync's atomic publish
    }
    return problem.kind == ProblemKind::SizeMismatch ||
           problem.kind == ProblemKind::ChecksumMismatch ||
           (problem.kind == ProblemKind::NotRegularFile && problem.detail.starts_with("symlink"));
}

}  // namespace

std::optional<RecordedSelection> recorded_selection(const std::filesystem::path& state_dir,
                                                    const std::filesystem::path& repo_dir) {
    SyncOptions options;
    options.state_dir = state_dir;
    auto state = read_sync_state(sync_state_path(state_directory(options), repo_dir));
    if (!state) {
        return std::nullopt;
    }
    return state->selection;
}

std::string describe_selection(const SelectionOptions& selection) {
    std::vector<std::string> words;
    const auto joined = [](const std::vector<std::string>& items) {
        std::string text;
        for (const std::string& item : items) {
            text += (text.empty() ? "" : ",") + item;
        }
        return text;
    };
    if (selection.source_only) {
        words.push_back("--source");
    } else if (!selection.arches.empty()) {
        words.push_back("--arch " + joined(selection.arches));
    }
    if (selection.newest_only) {
        words.push_back(selection.keep_versions > 1
                            ? fmt::format("--keep-versions {}", selection.keep_versions)
                            : std::string("--newest-only"));
    }
    if (selection.min_build_time) {
        words.push_back(fmt::format("--min-buildtime {}", *selection.min_build_time));
    }
    if (!selection.include_globs.empty()) {
        words.push_back("includepkgs=" + joined(selection.include_globs));
    }
    if (!selection.exclude_globs.empty()) {
        words.push_back("excludepkgs=" + joined(selection.exclude_globs));
    }
    if (words.empty()) {
        return "every package";
    }
    std::string text;
    for (const std::string& word : words) {
        text += (text.empty() ? "" : " ") + word;
    }
    return text;
}

RepairReport repair_repository(Syncer& syncer, const RepoConfig& repo, const RepoAuditReport& audit,
                               const RepairOptions& options, std::stop_token stop) {
    RepairReport repair;
    SyncOptions sync_options;
    sync_options.download_path = options.download_path;
    sync_options.safe_write_path = options.safe_write_path;
    sync_options.use_checksum_cache = options.use_checksum_cache;
    sync_options.verify_threads = options.threads;
    sync_options.state_dir = options.state_dir;
    sync_options.lock_wait = options.lock_wait;
    sync_options.selection = options.selection;
    const std::filesystem::path repo_dir = repo_directory(sync_options, repo.id);
    // The lock covers the removals and the sync: another rpmirror must not download into the
    // repository while damaged files are removed.
    auto lock = lock_repository(sync_options, repo_dir, stop);
    if (!lock) {
        repair.error = std::move(lock.error());
        repair.sync.repo_id = repo.id;
        return repair;
    }
    sync_options.take_lock = false;
    for (const AuditProblem& problem : audit.problems) {
        if (!is_removable(problem)) {
            continue;
        }
        auto removed = fs::remove_beneath(problem.root, problem.destination, true);
        if (!removed) {
            repair.error = std::move(removed.error());
            repair.sync.repo_id = repo.id;
            return repair;
        }
        if (*removed == fs::Removal::Removed) {
            repair.removed.push_back(problem.path);
        }
    }
    std::error_code ignored;
    sync_options.download_metadata = std::filesystem::is_directory(
        std::filesystem::symlink_status(repo_dir / "repodata", ignored));
    // The metadata is published as the last sync published it (signed with its key).
    const auto state_path = sync_state_path(state_directory(sync_options), repo_dir);
    if (const auto previous = read_sync_state(state_path); previous && previous->publishing) {
        sync_options.sign_key = previous->publishing->sign_key;
        sync_options.upstream_metadata = previous->publishing->upstream_metadata;
    }
    // Without its state file the sync cannot take the no-op shortcut (which trusts sizes and
    // mtimes): every file is verified, and the metadata republished.
    std::filesystem::remove(state_path, ignored);
    repair.sync = syncer.sync(repo, sync_options, nullptr, std::move(stop));
    return repair;
}

}  // namespace rpmirror
