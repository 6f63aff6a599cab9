// A temporary directory for one test, removed with everything in it when the test ends.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace rpmirror::test {

class TempDir {
  public:
    TempDir() {
        const char* base = std::getenv("TMPDIR");
        std::string pattern =
            std::string(base != nullptr ? base : "/tmp") + "/rpmirror-test-XXXXXX";
        if (::mkdtemp(pattern.data()) == nullptr) {
            throw std::runtime_error("mkdtemp failed");
        }
        path_ = pattern;
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    ~TempDir() {
        std::error_code ignored;
        std::filesystem::permissions(path_, std::filesystem::perms::owner_all,
                                     std::filesystem::perm_options::add, ignored);
        std::filesystem::remove_all(path_, ignored);
    }

    const std::filesystem::path& path() const { return path_; }
    std::filesystem::path operator/(std::string_view name) const { return path_ / name; }

    // Writes `contents` to `name` inside the directory and returns its path.
    std::filesystem::path write(std::string_view name, std::string_view contents) const {
        return write_at(path_ / name, contents);
    }

    // Writes `contents` to `file` (creating its parent directories) and returns it.
    static std::filesystem::path write_at(const std::filesystem::path& file,
                                          std::string_view contents) {
        std::filesystem::create_directories(file.parent_path());
        std::ofstream stream(file, std::ios::binary | std::ios::trunc);
        stream.write(contents.data(), static_cast<std::streamsize>(contents.size()));
        return file;
    }

  private:
    std::filesystem::path path_;
};

// Returns `size` bytes of a fixed pattern (byte i = i % 251), the same on every run.
inline std::string pattern_bytes(std::size_t size) {
    std::string bytes(size, '\0');
    for (std::size_t index = 0; index < size; ++index) {
        bytes[index] = static_cast<char>(index % 251);
    }
    return bytes;
}

}  // namespace rpmirror::test
