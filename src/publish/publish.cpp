// Atomic publication of repodata/ and removal of packages no longer selected.
#include "rpmirror/publish.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <system_error>
#include <utility>

#include "util/unique_fd.hpp"

namespace rpmirror {

namespace {

constexpr std::string_view kStagingPrefix = ".repodata.staging-";
constexpr std::string_view kLiveName = "repodata";

UniqueFd open_directory(const std::filesystem::path& path) {
    return UniqueFd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
}

}  // namespace

MetadataStage::MetadataStage(std::filesystem::path metadata_dir, std::filesystem::path staging_dir)
    : metadata_dir_(std::move(metadata_dir)), staging_dir_(std::move(staging_dir)) {}

MetadataStage::MetadataStage(MetadataStage&& other) noexcept
    : metadata_dir_(std::move(other.metadata_dir_)),
      staging_dir_(std::exchange(other.staging_dir_, {})),
      published_(other.published_) {}

MetadataStage& MetadataStage::operator=(MetadataStage&& other) noexcept {
    if (this != &other) {
        MetadataStage discarded(std::move(*this));
        metadata_dir_ = std::move(other.metadata_dir_);
        staging_dir_ = std::exchange(other.staging_dir_, {});
        published_ = other.published_;
    }
    return *this;
}

MetadataStage::~MetadataStage() {
    if (!staging_dir_.empty()) {
        std::error_code ignored;
        std::filesystem::remove_all(staging_dir_, ignored);
    }
}

Result<MetadataStage> MetadataStage::create(const std::filesystem::path& metadata_dir) {
    std::error_code error;
    std::filesystem::create_directories(metadata_dir, error);
    if (error) {
        return make_errno_error("cannot create directory", metadata_dir.string(), error.value());
    }
    std::string pattern = (metadata_dir / (std::string(kStagingPrefix) + "XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr) {
        return make_errno_error("cannot create staging directory", metadata_dir.string(), errno);
    }
    return MetadataStage(metadata_dir, pattern);
}

Result<void> MetadataStage::publish() {
    const UniqueFd parent = open_directory(metadata_dir_);
    if (!parent) {
        return make_errno_error("cannot open directory", metadata_dir_.string(), errno);
    }
    const std::string staging_name = staging_dir_.filename().string();
    const std::string live_path = (metadata_dir_ / kLiveName).string();

    struct stat live {};
    const bool has_live =
        ::fstatat(parent.get(), kLiveName.data(), &live, AT_SYMLINK_NOFOLLOW) == 0;
    if (has_live && !S_ISDIR(live.st_mode)) {
        return make_error(ErrorCode::Unsafe, "exists and is not a directory; not replacing it",
                          live_path);
    }
    if (::syncfs(parent.get()) != 0) {
        return make_errno_error("cannot flush the filesystem before publishing", live_path, errno);
    }
    const unsigned flags = has_live ? RENAME_EXCHANGE : RENAME_NOREPLACE;
    if (::renameat2(parent.get(), staging_name.c_str(), parent.get(), kLiveName.data(), flags) !=
        0) {
        return make_errno_error("cannot swap in the new metadata", live_path, errno);
    }
    published_ = true;
    if (::fsync(parent.get()) != 0) {
        return make_errno_error("cannot make the metadata swap durable", live_path, errno);
    }
    if (!has_live) {
        staging_dir_.clear();  // nothing old to remove: the staging directory *is* repodata now
    }
    // Otherwise the old metadata now sits under the staging name; the destructor removes it.
    return {};
}

std::size_t remove_stale_stages(const std::filesystem::path& metadata_dir) {
    std::size_t removed = 0;
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(metadata_dir, error)) {
        const std::string name = entry.path().filename().string();
        if (name.starts_with(kStagingPrefix) && entry.is_directory(error) &&
            !entry.is_symlink(error)) {
            std::filesystem::remove_all(entry.path(), error);
            ++removed;
        }
    }
    return removed;
}

namespace {

struct DirCloser {
    void operator()(DIR* dir) const { ::closedir(dir); }
};

struct DeleteWalk {
    const std::set<std::filesystem::path>& keep;
    std::vector<std::filesystem::path> removed;

    // Walks the directory open as `dir_fd` (ownership taken), whose path relative to the
    // repository root is `relative`.
    Result<void> walk(UniqueFd dir_fd, const std::filesystem::path& relative,
                      const std::filesystem::path& repo_dir) {
        const int fd_for_unlink = dir_fd.get();
        std::unique_ptr<DIR, DirCloser> dir(::fdopendir(dir_fd.get()));
        if (!dir) {
            return make_errno_error("cannot read directory", (repo_dir / relative).string(), errno);
        }
        dir_fd.release();  // now owned by `dir`
        std::vector<std::string> subdirectories;
        errno = 0;
        while (const dirent* entry = ::readdir(dir.get())) {
            const std::string name = entry->d_name;
            if (name == "." || name == "..") {
                continue;
            }
            struct stat st {};
            if (::fstatat(fd_for_unlink, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
                continue;  // vanished meanwhile
            }
            if (S_ISDIR(st.st_mode)) {
                const bool is_metadata =
                    relative.empty() && (name == kLiveName || name.starts_with(kStagingPrefix));
                if (!is_metadata) {
                    subdirectories.push_back(name);
                }
                continue;
            }
            if (!S_ISREG(st.st_mode) || !name.ends_with(".rpm") || keep.contains(relative / name)) {
                continue;  // symlinks, devices, non-rpm files and selected packages stay
            }
            if (::unlinkat(fd_for_unlink, name.c_str(), 0) != 0) {
                return make_errno_error("cannot remove", (repo_dir / relative / name).string(),
                                        errno);
            }
            removed.push_back(relative / name);
        }
        for (const std::string& name : subdirectories) {
            UniqueFd child(::openat(fd_for_unlink, name.c_str(),
                                    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            if (!child) {
                if (errno == ENOENT || errno == ELOOP || errno == ENOTDIR) {
                    continue;  // removed or replaced by a symlink meanwhile: not ours to follow
                }
                return make_errno_error("cannot open directory",
                                        (repo_dir / relative / name).string(), errno);
            }
            auto walked = walk(std::move(child), relative / name, repo_dir);
            if (!walked) {
                return walked;
            }
        }
        return {};
    }
};

}  // namespace

Result<std::vector<std::filesystem::path>> delete_unlisted_packages(
    const std::filesystem::path& repo_dir, const std::set<std::filesystem::path>& keep) {
    UniqueFd root = open_directory(repo_dir);
    if (!root) {
        const int open_errno = errno;
        if (open_errno == ENOENT) {
            return std::vector<std::filesystem::path>{};
        }
        std::error_code ignored;
        if (std::filesystem::is_symlink(repo_dir, ignored)) {
            return make_error(ErrorCode::Unsafe, "is a symlink; not deleting through it",
                              repo_dir.string());
        }
        return make_errno_error("cannot open directory", repo_dir.string(), open_errno);
    }
    DeleteWalk walk{keep, {}};
    auto walked = walk.walk(std::move(root), {}, repo_dir);
    if (!walked) {
        return tl::unexpected(std::move(walked.error()));
    }
    std::sort(walk.removed.begin(), walk.removed.end());
    return std::move(walk.removed);
}

}  // namespace rpmirror
