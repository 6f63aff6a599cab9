// The walk of `*.rpm` files (see fs/walk.hpp).
#include "fs/walk.hpp"

#include <dirent.h>
#include <fcntl.h>

#include <cerrno>
#include <memory>
#include <vector>

#include "fs/beneath.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror::fs {

namespace {

// True iff the directory open as `dir_fd` is another tree: it holds its own
// `repodata/repomd.xml` (another repository, or a complete snapshot). An lstat, so a symlinked
// repomd.xml counts too: a reason to stay out, never to go in.
bool is_other_tree(int dir_fd) {
    struct stat st {};
    return ::fstatat(dir_fd, "repodata/repomd.xml", &st, AT_SYMLINK_NOFOLLOW) == 0;
}

// Walks the directory open as `dir_fd` (ownership taken), at `relative` to the root. Returns
// false iff the visitor ended the walk.
Result<bool> walk_directory(UniqueFd dir_fd, const std::filesystem::path& relative,
                            const std::filesystem::path& shown_root, const DescendFilter& descend,
                            const RpmVisitor& visit, NestedTrees nested,
                            const std::function<bool(std::string_view)>& wanted) {
    const int fd = dir_fd.get();
    std::unique_ptr<DIR, DirCloser> dir(::fdopendir(fd));
    if (!dir) {
        return make_errno_error("cannot read directory", (shown_root / relative).string(), errno);
    }
    dir_fd.release();  // now owned by `dir`
    std::vector<std::string> subdirectories;
    while (const dirent* entry = ::readdir(dir.get())) {
        const std::string name = entry->d_name;
        if (name == "." || name == "..") {
            continue;
        }
        struct stat st {};
        if (::fstatat(fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
            continue;  // vanished meanwhile
        }
        if (S_ISDIR(st.st_mode)) {
            if (nested == NestedTrees::Skip && is_snapshot_staging_name(name)) {
                continue;
            }
            if (descend(relative / name, st)) {
                subdirectories.push_back(name);
            }
            continue;
        }
        if (!S_ISREG(st.st_mode) || !(wanted ? wanted(name) : name.ends_with(".rpm"))) {
            continue;
        }
        auto visited = visit(fd, name, relative / name, st);
        if (!visited || !*visited) {
            return visited;
        }
    }
    for (const std::string& name : subdirectories) {
        UniqueFd child = open_child_directory(fd, name);
        if (!child) {
            if (errno == ENOENT || errno == ELOOP || errno == ENOTDIR) {
                continue;  // removed or replaced by a symlink meanwhile: not ours to follow
            }
            return make_errno_error("cannot open directory",
                                    (shown_root / relative / name).string(), errno);
        }
        if (nested == NestedTrees::Skip && is_other_tree(child.get())) {
            continue;
        }
        auto walked = walk_directory(std::move(child), relative / name, shown_root, descend, visit,
                                     nested, wanted);
        if (!walked || !*walked) {
            return walked;
        }
    }
    return true;
}

}  // namespace

Result<void> walk_rpm_files(UniqueFd root, const std::filesystem::path& shown_root,
                            const DescendFilter& descend, const RpmVisitor& visit,
                            NestedTrees nested,
                            const std::function<bool(std::string_view)>& wanted) {
    auto walked = walk_directory(std::move(root), {}, shown_root, descend, visit, nested, wanted);
    if (!walked) {
        return tl::unexpected(std::move(walked.error()));
    }
    return {};
}

}  // namespace rpmirror::fs
