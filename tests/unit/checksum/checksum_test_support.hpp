// What the checksum tests share: a digest known by heart, and a file's stat, extended attributes
// and age.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

namespace rpmirror {

// sha256("abc"), FIPS 180-2's example.
inline const std::string kAbcSha256 =
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

inline struct stat stat_of(const std::filesystem::path& path) {
    struct stat st {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
    return st;
}

inline void set_attribute(const std::filesystem::path& path, const std::string& name,
                          const std::string& value) {
    ASSERT_EQ(::setxattr(path.c_str(), name.c_str(), value.data(), value.size(), 0), 0)
        << name << ": " << std::strerror(errno);
}

// Moves the file's mtime an hour into the past, so it is not "racy" and its digest is cached.
inline void age(const std::filesystem::path& path) {
    const struct stat st = stat_of(path);
    struct timespec times[2] = {st.st_atim, st.st_mtim};
    times[1].tv_sec -= 3600;
    ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
}

}  // namespace rpmirror
