// Publishing a staged directory: RENAME_EXCHANGE, or a merge by plain renames.
#include "fs/swap.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>

#include "fs/beneath.hpp"
#include "fs/durable.hpp"
#include "fs/fault.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror::fs {

namespace {

bool flags_unsupported(int error) {
    return error == EINVAL || error == ENOTSUP || error == ENOSYS;
}

// The regular files directly in the directory open as `dir_fd`, with their sizes.
Result<std::vector<std::pair<std::string, off_t>>> regular_files(
    int dir_fd, const std::filesystem::path& shown) {
    UniqueFd copy(::fcntl(dir_fd, F_DUPFD_CLOEXEC, 0));
    std::unique_ptr<DIR, DirCloser> dir(copy ? ::fdopendir(copy.get()) : nullptr);
    if (!dir) {
        return make_errno_error("cannot read directory", shown.string(), errno);
    }
    copy.release();  // owned by `dir`
    std::vector<std::pair<std::string, off_t>> files;
    while (const dirent* entry = ::readdir(dir.get())) {
        const std::string name = entry->d_name;
        struct stat st {};
        if (name == "." || name == ".." ||
            ::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISREG(st.st_mode)) {
            continue;
        }
        files.emplace_back(name, st.st_size);
    }
    std::sort(files.begin(), files.end());
    return files;
}

// True iff the regular files `name` in the directories open as `a_fd` and `b_fd` hold the same
// bytes (read with pread, never through a symlink). False when either cannot be read: a record
// that cannot be compared is published again.
bool same_content(int a_fd, int b_fd, const std::string& name) {
    const UniqueFd a(::openat(a_fd, name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    const UniqueFd b(::openat(b_fd, name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    struct stat a_st {};
    struct stat b_st {};
    if (!a || !b || ::fstat(a.get(), &a_st) != 0 || ::fstat(b.get(), &b_st) != 0 ||
        !S_ISREG(a_st.st_mode) || !S_ISREG(b_st.st_mode) || a_st.st_size != b_st.st_size) {
        return false;
    }
    constexpr std::size_t kChunk = 256 * 1024;
    const auto a_buffer = std::make_unique<char[]>(kChunk);
    const auto b_buffer = std::make_unique<char[]>(kChunk);
    for (off_t offset = 0; offset < a_st.st_size;) {
        const ssize_t got_a = ::pread(a.get(), a_buffer.get(), kChunk, offset);
        const ssize_t got_b = ::pread(b.get(), b_buffer.get(), kChunk, offset);
        if (got_a <= 0 || got_a != got_b ||
            std::memcmp(a_buffer.get(), b_buffer.get(), static_cast<std::size_t>(got_a)) != 0) {
            return false;
        }
        offset += got_a;
    }
    return true;
}

Result<void> merge(int parent_fd, const std::string& staging_name, const std::string& live_name,
                   const MergeOrder& order, const std::filesystem::path& shown_live) {
    const UniqueFd staging = open_child_directory(parent_fd, staging_name);
    const UniqueFd live = open_child_directory(parent_fd, live_name);
    if (!staging || !live) {
        return make_errno_error("cannot open directory", shown_live.string(), errno);
    }
    auto staged = regular_files(staging.get(), shown_live.parent_path() / staging_name);
    auto present = regular_files(live.get(), shown_live);
    if (!staged || !present) {
        return tl::unexpected(staged ? present.error() : staged.error());
    }
    const auto is_last = [&order](const std::string& name) {
        return std::find(order.last.begin(), order.last.end(), name) != order.last.end();
    };
    const auto live_size = [&present](const std::string& name) -> std::optional<off_t> {
        for (const auto& [live_name, size] : *present) {
            if (live_name == name) {
                return size;
            }
        }
        return std::nullopt;
    };
    const auto move_in = [&](const std::string& name) -> Result<void> {
        if (fault::renameat(staging.get(), name.c_str(), live.get(), name.c_str()) != 0) {
            return make_errno_error("cannot publish", (shown_live / name).string(), errno);
        }
        return {};
    };
    std::set<std::string> staged_names;
    for (const auto& [name, size] : *staged) {
        staged_names.insert(name);
        // A record already live with the same bytes stays (its readers see no change); one
        // whose name stayed but whose content changed (plain names: repodata/primary.xml.gz)
        // is replaced: a size says nothing about the bytes.
        if (is_last(name) ||
            (live_size(name) == size && same_content(staging.get(), live.get(), name))) {
            continue;
        }
        if (auto moved = move_in(name); !moved) {
            return moved;
        }
    }
    // Every record the new index lists is in place and durable before the index is.
    if (auto synced = sync_directory(live.get(), shown_live); !synced) {
        return synced;
    }
    for (std::size_t index = 1; index < order.last.size(); ++index) {
        const std::string& name = order.last[index];
        if (live_size(name) && fault::unlinkat(live.get(), name.c_str(), 0) != 0 &&
            errno != ENOENT) {
            return make_errno_error("cannot remove", (shown_live / name).string(), errno);
        }
    }
    for (const std::string& name : order.last) {
        if (staged_names.contains(name)) {
            if (auto moved = move_in(name); !moved) {
                return moved;
            }
        }
    }
    if (auto synced = sync_directory(live.get(), shown_live); !synced) {
        return synced;
    }
    // Files of older revisions: nothing published lists them any more.
    for (const auto& [name, size] : *present) {
        if (!staged_names.contains(name) && !is_last(name) && !order.retain.contains(name)) {
            if (fault::unlinkat(live.get(), name.c_str(), 0) != 0 && errno != ENOENT) {
                return make_errno_error("cannot remove", (shown_live / name).string(), errno);
            }
        }
    }
    return {};
}

}  // namespace

Result<SwapMethod> swap_in_directory(const std::filesystem::path& parent,
                                     const std::string& staging_name, const std::string& live_name,
                                     const MergeOrder& order) {
    const UniqueFd parent_fd(
        ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
    if (!parent_fd) {
        return make_errno_error("cannot open directory", parent.string(), errno);
    }
    const std::filesystem::path shown_live = parent / live_name;
    struct stat live {};
    const bool has_live =
        ::fstatat(parent_fd.get(), live_name.c_str(), &live, AT_SYMLINK_NOFOLLOW) == 0;
    if (has_live && !S_ISDIR(live.st_mode)) {
        return make_error(ErrorCode::Unsafe, "exists and is not a directory; not replacing it",
                          shown_live.string());
    }
    SwapMethod method = has_live ? SwapMethod::Exchanged : SwapMethod::Created;
    const unsigned flags = has_live ? RENAME_EXCHANGE : RENAME_NOREPLACE;
    int result = -1;
    int error = EINVAL;
    if (!fs::fallbacks_forced()) {
        result = fault::renameat2(parent_fd.get(), staging_name.c_str(), parent_fd.get(),
                                  live_name.c_str(), flags);
        error = errno;
    }
    if (result != 0 && flags_unsupported(error)) {
        if (has_live) {
            method = SwapMethod::Merged;
            if (auto merged = merge(parent_fd.get(), staging_name, live_name, order, shown_live);
                !merged) {
                return tl::unexpected(std::move(merged.error()));
            }
            return method;
        }
        // No live directory yet (and the run lock keeps other rpmirrors away): a plain rename.
        result = fault::renameat(parent_fd.get(), staging_name.c_str(), parent_fd.get(),
                                 live_name.c_str());
        error = errno;
    }
    if (result != 0) {
        return make_errno_error("cannot swap in the new metadata", shown_live.string(), error);
    }
    if (auto synced = sync_directory(parent_fd.get(), shown_live); !synced) {
        return tl::unexpected(std::move(synced.error()));
    }
    return method;
}

}  // namespace rpmirror::fs
