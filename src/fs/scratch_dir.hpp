// ScratchDir: a private temporary directory (mkdtemp under $TMPDIR, else /tmp), removed with
// everything in it when its owner goes. Move-only.
#pragma once

#include <stdlib.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>

#include "rpmirror/util/error.hpp"

namespace rpmirror {

class ScratchDir {
  public:
    // Creates `$TMPDIR/<name>-XXXXXX`. Returns Error{Io} naming the pattern iff it cannot.
    static Result<ScratchDir> create(std::string_view name) {
        const char* tmpdir = std::getenv("TMPDIR");
        std::string pattern = std::string(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp") +
                              "/" + std::string(name) + "-XXXXXX";
        if (::mkdtemp(pattern.data()) == nullptr) {
            return make_errno_error("cannot create a temporary directory", pattern, errno);
        }
        return ScratchDir(pattern);
    }
    ScratchDir(ScratchDir&& other) noexcept : path_(std::exchange(other.path_, {})) {}
    ScratchDir& operator=(ScratchDir&&) = delete;
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;
    ~ScratchDir() {
        if (!path_.empty()) {
            std::error_code ignored;
            std::filesystem::remove_all(path_, ignored);
        }
    }
    const std::filesystem::path& path() const { return path_; }

  private:
    explicit ScratchDir(std::filesystem::path path) : path_(std::move(path)) {}
    std::filesystem::path path_;
};

}  // namespace rpmirror
