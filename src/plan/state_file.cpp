// The per-repository state file behind the fast no-op sync.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "rpmirror/plan.hpp"
#include "util/fault.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror {

namespace {

constexpr int kStateVersion = 1;

std::int64_t mtime_ns(const struct stat& st) {
    return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

}  // namespace

std::filesystem::path sync_state_path(const std::filesystem::path& repo_dir) {
    return repo_dir / ".rpmirror-state.json";
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
                                   file.at(2).get<std::int64_t>()});
        }
        return state;
    } catch (const nlohmann::json::exception&) {
        return std::nullopt;
    }
}

Result<void> write_sync_state(const std::filesystem::path& path, const SyncState& state) {
    nlohmann::json files = nlohmann::json::array();
    for (const SyncStateFile& file : state.files) {
        files.push_back({file.relative_path.string(), file.size, file.mtime_ns});
    }
    const nlohmann::json document = {{"version", kStateVersion},
                                     {"repomd_sha256", state.repomd_sha256},
                                     {"options", state.options_fingerprint},
                                     {"files", std::move(files)}};
    const std::string text = document.dump();
    const std::filesystem::path temporary = path.string() + ".tmp";
    // The state file vouches for the files it lists: flush the whole filesystem first (one
    // syncfs per sync instead of an fsync per file), so that after a power loss it never vouches
    // for data that did not reach the disk.
    if (UniqueFd directory(::open(path.parent_path().empty() ? "." : path.parent_path().c_str(),
                                  O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        !directory || fault::syncfs(directory.get(), path.string()) != 0) {
        return make_errno_error("cannot flush the filesystem before writing sync state",
                                path.string(), errno);
    }
    UniqueFd fd(fault::fails(fault::Op::Create, temporary.string())
                    ? -1
                    : ::open(temporary.c_str(),
                             O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644));
    if (!fd) {
        return make_errno_error("cannot write sync state", temporary.string(), errno);
    }
    std::size_t written = 0;
    while (written < text.size()) {
        const ssize_t result = fault::write(fd.get(), text.data() + written, text.size() - written);
        if (result < 0) {
            if (errno == EINTR) {
                continue;
            }
            const int write_errno = errno;
            ::unlink(temporary.c_str());
            return make_errno_error("cannot write sync state", temporary.string(), write_errno);
        }
        written += static_cast<std::size_t>(result);
    }
    fd.reset();
    if (fault::rename(temporary.c_str(), path.c_str()) != 0) {
        const int rename_errno = errno;
        ::unlink(temporary.c_str());
        return make_errno_error("cannot write sync state", path.string(), rename_errno);
    }
    return {};
}

std::optional<SyncStateFile> stat_for_state(const std::filesystem::path& repo_dir,
                                            const std::filesystem::path& relative_path) {
    struct stat st {};
    if (::lstat((repo_dir / relative_path).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
        return std::nullopt;
    }
    return SyncStateFile{relative_path, static_cast<std::uint64_t>(st.st_size), mtime_ns(st)};
}

bool state_files_unchanged(const std::filesystem::path& repo_dir, const SyncState& state) {
    for (const SyncStateFile& file : state.files) {
        const auto now = stat_for_state(repo_dir, file.relative_path);
        if (!now || now->size != file.size || now->mtime_ns != file.mtime_ns) {
            return false;
        }
    }
    return true;
}

}  // namespace rpmirror
