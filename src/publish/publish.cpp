// Atomic publication of repodata/ and removal of packages no longer selected.
#include "publish/publish.hpp"

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
#include "fs/fault.hpp"
#include "fs/swap.hpp"
#include "fs/tree.hpp"
#include "fs/walk.hpp"
#include "metadata/metadata.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror {

namespace {

constexpr std::string_view kStagingPrefix = fs::kStagingDirPrefix;
constexpr std::string_view kLiveName = fs::kLiveMetadataDirName;
constexpr std::string_view kIndexName = "repomd.xml";

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
    for (const std::string& href : record_hrefs(text)) {
        if (const std::filesystem::path relative(href); relative.parent_path() == kLiveName) {
            names.push_back(relative.filename().string());
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
        (void)fs::remove_tree(staging_dir_);
    }
}

Result<MetadataStage> MetadataStage::create(const std::filesystem::path& metadata_dir) {
    if (auto made = fs::make_directories(metadata_dir); !made) {
        return tl::unexpected(std::move(made.error()));
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
        (void)fs::remove_tree(pattern);
        return make_errno_error("cannot set permissions of staging directory", pattern,
                                chmod_errno);
    }
    return MetadataStage(metadata_dir, pattern);
}

Result<void> MetadataStage::publish(bool flush) {
    const std::filesystem::path live_path = metadata_dir_ / kLiveName;
    if (flush) {
        if (auto flushed = fs::flush_filesystem(metadata_dir_); !flushed) {
            return flushed;
        }
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
    switch (*swapped) {
        case fs::SwapMethod::Exchanged:
            method_ = Method::Exchanged;
            break;
        case fs::SwapMethod::Created:
            method_ = Method::Created;
            break;
        case fs::SwapMethod::Merged:
            method_ = Method::Merged;
            break;
    }
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
            (void)fs::remove_tree(stage);
            ++removed;
        }
    }
    return removed;
}

}  // namespace rpmirror
