// The state directory and the per-repository run lock.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "fs/state.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror::fs {
namespace {

TEST(StateEntry, IsNamedAfterTheDirectoryAndKeepsDirectoriesApart) {
    const auto entry = state_entry("/var/lib/rpmirror", "/srv/mirror/fedora");
    EXPECT_EQ(entry.parent_path(), "/var/lib/rpmirror/repos");
    EXPECT_TRUE(entry.filename().string().starts_with("fedora-")) << entry;
    EXPECT_EQ(entry.filename().string().size(), std::string("fedora-").size() + 16);
    EXPECT_EQ(entry, state_entry("/var/lib/rpmirror", "/srv/mirror/./fedora/"));
    EXPECT_NE(entry, state_entry("/var/lib/rpmirror", "/srv/other/fedora"));
}

TEST(RunLock, ASecondHolderIsRefusedWithThePidOfTheFirstUntilItIsReleased) {
    test::TempDir dir;
    auto first = RunLock::acquire(dir / "state", dir / "mirror/base");
    ASSERT_TRUE(first) << first.error().to_string();
    // OFD locks belong to an open file description: a second acquire conflicts even in the
    // same process, as another rpmirror's would.
    auto second = RunLock::acquire(dir / "state", dir / "mirror/base");
    ASSERT_FALSE(second);
    EXPECT_EQ(second.error().code, ErrorCode::Busy);
    EXPECT_EQ(second.error().to_string(), "repository directory " + (dir / "mirror/base").string() +
                                              " is being synced by another rpmirror (pid " +
                                              std::to_string(::getpid()) + ")");
    auto other = RunLock::acquire(dir / "state", dir / "mirror/updates");
    EXPECT_TRUE(other) << "another repository directory is not blocked";

    auto waited = RunLock::acquire(dir / "state", dir / "mirror/base", std::chrono::seconds(0));
    ASSERT_FALSE(waited);
    EXPECT_EQ(waited.error().code, ErrorCode::Busy);

    std::stop_source stop;
    stop.request_stop();
    auto stopped = RunLock::acquire(dir / "state", dir / "mirror/base", std::chrono::seconds(60),
                                    stop.get_token());
    ASSERT_FALSE(stopped);
    EXPECT_EQ(stopped.error().code, ErrorCode::Interrupted);

    { RunLock released = std::move(*first); }
    EXPECT_TRUE(RunLock::acquire(dir / "state", dir / "mirror/base"));
}

TEST(RunLock, AnUnusableStateDirectoryIsAnErrorNamingIt) {
    test::TempDir dir;
    dir.write("state", "a file, not a directory");
    auto lock = RunLock::acquire(dir / "state", dir / "mirror/base");
    ASSERT_FALSE(lock);
    EXPECT_NE(lock.error().to_string().find((dir / "state").string()), std::string::npos)
        << lock.error().to_string();
}

}  // namespace
}  // namespace rpmirror::fs
