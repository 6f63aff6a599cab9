// Atomic publication of repodata/ and removal of packages no longer selected.
#include "rpmirror/publish.hpp"

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

#include <fstream>
#include <iterator>

#include "fs/beneath.hpp"
#include "fs/durable.hpp"
#include "fs/swap.hpp"
#include "fs/walk.hpp"
#include "rpmirror/metadata.hpp"
#include "util/fault.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror {

namespace {

constexpr std::string_view kStagingPrefix = fs::kStagingDirPrefix;
constexpr std::string_view kLiveName = fs::kLiveMetadataDirName;
constexpr std::string_view kIndexName = "repomd.xml";

UniqueFd open_directory(const std::filesystem::path& path) {
    return fs::open_directory(path, /*nofollow=*/true);
}

// The file names (in repodata/) of the records the repomd.xml at `path` lists; empty iff it
// cannot be read or parsed.
std::vector<std::string> records_listed_by(const std::filesystem::path& path) {
    std::vector<std::string> names;
    std::ifstream stream(path, std::ios::binary);
    if (!stream) {
        return names;
    }
    const std::string text((std::istreambuf_iterator<char>(stream)),
                           std::istreambuf_iterator<char>());
    auto repomd = parse_repomd(text, path.string());
    if (!repomd) {
        return names;
    }
    for (const RepomdRecord& record : repomd->records) {
        const std::filesystem::path href(record.location_href);
        if (href.parent_path() == kLiveName) {
            names.push_back(href.filename().string());
        }
    }
    return names;
}

}  // namespace

MetadataStage::MetadataStage(std::filesystem::path metadata_dir, std::filesystem::path staging_dir)
    : metadata_dir_(std::move(metadata_dir)), staging_dir_(std::move(staging_dir)) {}

MetadataStage::MetadataStage(MetadataStage&& other) noexcept
    : metadata_dir_(std::move(other.metadata_dir_)),
      staging_dir_(std::exchange(other.staging_dir_, {})),
      published_(other.published_),
      method_(other.method_) {}

MetadataStage& MetadataStage::operator=(MetadataStage&& other) noexcept {
    if (this != &other) {
        MetadataStage discarded(std::move(*this));
        metadata_dir_ = std::move(other.metadata_dir_);
        staging_dir_ = std::exchange(other.staging_dir_, {});
        published_ = other.published_;
        method_ = other.method_;
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
    const std::filesystem::path live_path = metadata_dir_ / kLiveName;
    if (auto flushed = fs::flush_filesystem(metadata_dir_); !flushed) {
        return flushed;
    }
    // Only used where the filesystem cannot exchange directories: the records the index being
    // replaced lists stay for readers that read that index a moment ago.
    fs::MergeOrder order{{std::string(kIndexName), std::string(kIndexName) + ".asc"}, {}};
    for (const std::string& name : records_listed_by(live_path / kIndexName)) {
        order.retain.insert(name);
    }
    auto swapped = fs::swap_in_directory(metadata_dir_, staging_dir_.filename().string(),
                                         std::string(kLiveName), order);
    if (!swapped) {
        return tl::unexpected(std::move(swapped.error()));
    }
    published_ = true;
    method_ = static_cast<int>(*swapped);
    if (*swapped == fs::SwapMethod::Created) {
        staging_dir_.clear();  // nothing old to remove: the staging directory *is* repodata now
    }
    // Otherwise the old metadata (exchanged) or what the merge left in the staging directory is
    // removed by the destructor.
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

// What the walk does with each unlisted package: given the open directory holding it, its name
// and its path relative to the repository root, returns an error to stop the walk.
using UnlistedVisitor = std::function<Result<void>(int dir_fd, const std::string& name,
                                                   const std::filesystem::path& relative)>;

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
    // repodata/ and the staging directories at the top are not descended into; every regular
    // `*.rpm` file that `keep` does not list is handed to `visit`.
    const fs::DescendFilter descend = [](const std::filesystem::path& relative,
                                         const struct stat&) {
        const std::string name = relative.filename().string();
        return relative.has_parent_path() || !fs::is_metadata_dir_name(name);
    };
    const fs::RpmVisitor unlisted = [&](int dir_fd, const std::string& name,
                                        const std::filesystem::path& relative,
                                        const struct stat&) -> Result<bool> {
        if (keep.contains(relative)) {
            return true;  // selected packages stay
        }
        auto visited = visit(dir_fd, name, relative);
        if (!visited) {
            return tl::unexpected(std::move(visited.error()));
        }
        return true;
    };
    auto walked = fs::walk_rpm_files(std::move(root), repo_dir, descend, unlisted);
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
        if (fs::unlink_at(dir_fd, name) != 0) {
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
