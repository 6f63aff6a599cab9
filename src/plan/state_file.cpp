// The per-repository state file behind the fast no-op sync.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "fs/durable.hpp"
#include "fs/state.hpp"
#include "rpmirror/plan.hpp"

namespace rpmirror {

namespace {

constexpr int kStateVersion = 2;

std::int64_t nanoseconds(const struct timespec& time) {
    return static_cast<std::int64_t>(time.tv_sec) * 1'000'000'000 + time.tv_nsec;
}

}  // namespace

std::filesystem::path sync_state_path(const std::filesystem::path& state_dir,
                                      const std::filesystem::path& repo_dir) {
    return fs::state_entry(state_dir, repo_dir).string() + ".json";
}

std::optional<SyncState> read_sync_state(const std::filesystem::path& path) {
    std::ifstream stream(path, std::ios::binary);
    if (!stream) {
        return std::nullopt;
    }
    const nlohmann::json document = nlohmann::json::parse(stream, nullptr, false);
    if (document.is_discarded() || !document.is_object() ||
        document.value("version", 0) != kStateVersion) {
        return std::nullopt;
    }
    try {
        SyncState state;
        state.repomd_sha256 = document.at("repomd_sha256").get<std::string>();
        state.options_fingerprint = document.at("options").get<std::string>();
        for (const auto& file : document.at("files")) {
            state.files.push_back({file.at(0).get<std::string>(), file.at(1).get<std::uint64_t>(),
                                   file.at(2).get<std::int64_t>(), file.at(3).get<std::uint64_t>(),
                                   file.at(4).get<std::int64_t>()});
        }
        return state;
    } catch (const nlohmann::json::exception&) {
        return std::nullopt;
    }
}

Result<void> write_sync_state(const std::filesystem::path& path, const SyncState& state) {
    nlohmann::json files = nlohmann::json::array();
    for (const SyncStateFile& file : state.files) {
        files.push_back(
            {file.relative_path.string(), file.size, file.mtime_ns, file.inode, file.ctime_ns});
    }
    const nlohmann::json document = {{"version", kStateVersion},
                                     {"repomd_sha256", state.repomd_sha256},
                                     {"options", state.options_fingerprint},
                                     {"files", std::move(files)}};
    std::error_code error;
    std::filesystem::create_directories(path.parent_path(), error);
    if (error) {
        return make_errno_error("cannot create the state directory", path.parent_path().string(),
                                error.value());
    }
    if (auto written = fs::replace_file(path, document.dump()); !written) {
        Error failure = std::move(written.error());
        failure.message = "cannot write sync state: " + failure.message;
        return tl::unexpected(std::move(failure));
    }
    return {};
}

std::optional<SyncStateFile> stat_for_state(const std::filesystem::path& repo_dir,
                                            const std::filesystem::path& relative_path) {
    struct stat st {};
    if (::lstat((repo_dir / relative_path).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
        return std::nullopt;
    }
    return SyncStateFile{relative_path, static_cast<std::uint64_t>(st.st_size),
                         nanoseconds(st.st_mtim), static_cast<std::uint64_t>(st.st_ino),
                         nanoseconds(st.st_ctim)};
}

bool state_files_unchanged(const std::filesystem::path& repo_dir, const SyncState& state) {
    for (const SyncStateFile& file : state.files) {
        const auto now = stat_for_state(repo_dir, file.relative_path);
        if (!now || now->size != file.size || now->mtime_ns != file.mtime_ns ||
            now->inode != file.inode || now->ctime_ns != file.ctime_ns) {
            return false;
        }
    }
    return true;
}

}  // namespace rpmirror
