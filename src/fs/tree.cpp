// Directories made and removed whole, files placed as copies (fs/tree.hpp).
#include "fs/tree.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <system_error>

#include "fs/fault.hpp"

namespace rpmirror::fs {

Result<void> make_directories(const std::filesystem::path& path, std::string_view what) {
    std::error_code error;
    std::filesystem::create_directories(path, error);
    if (!error && !std::filesystem::is_directory(path, error)) {
        error = std::make_error_code(std::errc::not_a_directory);
    }
    if (error) {
        return make_error(ErrorCode::Io,
                          "cannot create " + std::string(what) + ": " + error.message(),
                          path.string());
    }
    return {};
}

Result<void> remove_tree(const std::filesystem::path& path) {
    if (fault::fails(fault::Op::Unlink, path.native())) {
        return make_errno_error("cannot remove", path.string(), errno);
    }
    std::error_code error;
    std::filesystem::remove_all(path, error);  // symlinks are removed, not followed
    if (error) {
        return make_error(ErrorCode::Io, "cannot remove: " + error.message(), path.string());
    }
    return {};
}

Result<void> remove_file(const std::filesystem::path& path) {
    if (fault::unlinkat(AT_FDCWD, path.c_str(), 0) != 0 && errno != ENOENT) {
        return make_errno_error("cannot remove", path.string(), errno);
    }
    return {};
}

Result<void> rename_file(const std::filesystem::path& from, const std::filesystem::path& to) {
    if (fault::rename(from.c_str(), to.c_str()) != 0) {
        return make_errno_error("cannot rename it to " + to.string(), from.string(), errno);
    }
    return {};
}

Result<void> copy_file(const std::filesystem::path& source, const std::filesystem::path& target) {
    if (fault::fails(fault::Op::Create, target.native())) {
        return make_errno_error("cannot copy " + source.string() + " to it", target.string(),
                                errno);
    }
    std::error_code error;
    if (std::filesystem::is_symlink(target, error)) {
        return make_errno_error("cannot copy " + source.string() + " to it", target.string(),
                                ELOOP);
    }
    std::filesystem::copy_file(source, target, std::filesystem::copy_options::overwrite_existing,
                               error);
    if (error) {
        return make_error(ErrorCode::Io,
                          "cannot copy " + source.string() + " to it: " + error.message(),
                          target.string());
    }
    return {};
}

Result<CopyMethod> place_copy(const std::filesystem::path& source,
                              const std::filesystem::path& target) {
    if (auto made = fs::make_directories(target.parent_path()); !made) {
        return tl::unexpected(std::move(made.error()));
    }
    std::filesystem::path temporary = target;
    temporary += ".tmp";
    (void)remove_file(temporary);  // a killed run's
    CopyMethod method = CopyMethod::Link;
    if (fault::fails(fault::Op::Create, temporary.native()) ||
        ::link(source.c_str(), temporary.c_str()) != 0) {
        method = CopyMethod::Copy;  // another filesystem, or one without hard links
        if (auto copied = fs::copy_file(source, temporary); !copied) {
            (void)remove_file(temporary);
            return tl::unexpected(std::move(copied.error()));
        }
    }
    if (auto renamed = rename_file(temporary, target); !renamed) {
        (void)remove_file(temporary);
        return tl::unexpected(std::move(renamed.error()));
    }
    return method;
}

}  // namespace rpmirror::fs
