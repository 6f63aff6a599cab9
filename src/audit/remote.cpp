// The audit's use of the sync stage to fetch a repository's current metadata to audit against (a
// sync that selects no package), and what verify reports about selections.
#include <stdlib.h>

#include <cerrno>
#include <cstdlib>
#include <utility>

#include <fmt/format.h>

#include "rpmirror/audit.hpp"
#include "rpmirror/plan.hpp"

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
    options.state_dir = std::filesystem::path(pattern) / ".state";  // removed with the rest
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
    if (selection.only_nevras) {
        // The closure replaces every other filter.
        return fmt::format("--with-dependencies ({} package(s))", selection.only_nevras->size());
    }
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

}  // namespace rpmirror
