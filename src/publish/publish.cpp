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
#include <functional>
#include <system_error>
#include <utility>

#include "util/fault.hpp"
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
    if (fault::fails(fault::Op::Create, pattern) || ::mkdtemp(pattern.data()) == nullptr) {
        return make_errno_error("cannot create staging directory", metadata_dir.string(), errno);
    }
    // mkdtemp creates 0700; the published repodata/ must be as readable as any directory the
    // user creates (a web server serves it), so apply the usual 0777 & ~umask.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    if (::chmod(pattern.c_str(), 0777 & ~mask) != 0) {
        const int chmod_errno = errno;
        std::error_code ignored;
        std::filesystem::remove_all(pattern, ignored);
        return make_errno_error("cannot set permissions of staging directory", pattern,
                                chmod_errno);
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
    if (fault::syncfs(parent.get(), live_path) != 0) {
        return make_errno_error("cannot flush the filesystem before publishing", live_path, errno);
    }
    const unsigned flags = has_live ? RENAME_EXCHANGE : RENAME_NOREPLACE;
    if (fault::renameat2(parent.get(), staging_name.c_str(), parent.get(), kLiveName.data(),
                         flags) != 0) {
        return make_errno_error("cannot swap in the new metadata", live_path, errno);
    }
    published_ = true;
    if (fault::fsync(parent.get(), live_path) != 0) {
        return make_errno_error("cannot make the metadata swap durable", live_path, errno);
    }
    if (!has_live) {
        staging_dir_.clear();  // nothing old to remove: the staging directory *is* repodata now
    }
    // Otherwise the old metadata now sits under the staging name; the destructor removes it.
    return {};
}

std::vector<std::filesystem::path> find_stale_stages(const std::filesystem::path& metadata_dir) {
    std::vector<std::filesystem::path> stages;
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(metadata_dir, error)) {
        const std::string name = entry.path().filename().string();
        if (name.starts_with(kStagingPrefix) && entry.is_directory(error) &&
            !entry.is_symlink(error)) {
            stages.push_back(entry.path());
        }
    }
    std::sort(stages.begin(), stages.end());
    return stages;
}

std::size_t remove_stale_stages(const std::filesystem::path& metadata_dir,
                                const std::filesystem::path& except) {
    std::size_t removed = 0;
    for (const std::filesystem::path& stage : find_stale_stages(metadata_dir)) {
        if (stage != except) {
            std::error_code error;
            std::filesystem::remove_all(stage, error);
            ++removed;
        }
    }
    return removed;
}

namespace {

struct DirCloser {
    void operator()(DIR* dir) const { ::closedir(dir); }
};

// What the walk does with each unlisted package: given the open directory holding it, its name
// and its path relative to the repository root, returns an error to stop the walk.
using UnlistedVisitor = std::function<Result<void>(int dir_fd, const std::string& name,
                                                   const std::filesystem::path& relative)>;

// The walk shared by delete_unlisted_packages and list_unlisted_packages: every regular `*.rpm`
// file below the repository root that `keep` does not list is handed to `visit`, from the
// directory fd it was found in (never through a symlink, never outside the root).
struct UnlistedWalk {
    const std::set<std::filesystem::path>& keep;
    const UnlistedVisitor& visit;

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
            auto visited = visit(fd_for_unlink, name, relative / name);
            if (!visited) {
                return visited;
            }
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

// Opens `repo_dir` and walks it with `visit`. Returns false (and no error) iff it does not exist.
Result<bool> walk_unlisted(const std::filesystem::path& repo_dir,
                           const std::set<std::filesystem::path>& keep,
                           const UnlistedVisitor& visit, std::string_view refusal) {
    UniqueFd root = open_directory(repo_dir);
    if (!root) {
        const int open_errno = errno;
        if (open_errno == ENOENT) {
            return false;
        }
        std::error_code ignored;
        if (std::filesystem::is_symlink(repo_dir, ignored)) {
            return make_error(ErrorCode::Unsafe, std::string(refusal), repo_dir.string());
        }
        return make_errno_error("cannot open directory", repo_dir.string(), open_errno);
    }
    UnlistedWalk walk{keep, visit};
    auto walked = walk.walk(std::move(root), {}, repo_dir);
    if (!walked) {
        return tl::unexpected(std::move(walked.error()));
    }
    return true;
}

}  // namespace

Result<std::vector<std::filesystem::path>> delete_unlisted_packages(
    const std::filesystem::path& repo_dir, const std::set<std::filesystem::path>& keep) {
    std::vector<std::filesystem::path> removed;
    const UnlistedVisitor remove = [&](int dir_fd, const std::string& name,
                                       const std::filesystem::path& relative) -> Result<void> {
        if (fault::unlinkat(dir_fd, name.c_str(), 0) != 0) {
            return make_errno_error("cannot remove", (repo_dir / relative).string(), errno);
        }
        removed.push_back(relative);
        return {};
    };
    auto walked = walk_unlisted(repo_dir, keep, remove, "is a symlink; not deleting through it");
    if (!walked) {
        return tl::unexpected(std::move(walked.error()));
    }
    std::sort(removed.begin(), removed.end());
    return removed;
}

Result<std::vector<std::filesystem::path>> list_unlisted_packages(
    const std::filesystem::path& repo_dir, const std::set<std::filesystem::path>& keep) {
    std::vector<std::filesystem::path> unlisted;
    const UnlistedVisitor record = [&](int, const std::string&,
                                       const std::filesystem::path& relative) -> Result<void> {
        unlisted.push_back(relative);
        return {};
    };
    auto walked = walk_unlisted(repo_dir, keep, record, "is a symlink; not walking through it");
    if (!walked) {
        return tl::unexpected(std::move(walked.error()));
    }
    std::sort(unlisted.begin(), unlisted.end());
    return unlisted;
}

}  // namespace rpmirror
