// The state directory and the per-repository run lock.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

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

// Keyed on the directory, not its spelling: a symlink, `..` or a trailing slash lead to the same
// lock (the second lock file is named after the directory's device and inode).
TEST(RunLock, TwoSpellingsOfOneDirectoryShareTheLockAndTheMessageNamesTheHoldersSpelling) {
    test::TempDir dir;
    std::filesystem::create_directories(dir / "real/mirror/base");
    std::filesystem::create_directories(dir / "real/mirror/other");
    std::filesystem::create_directory_symlink(dir / "real", dir / "link");
    auto held = RunLock::acquire(dir / "state", dir / "real/mirror/base");
    ASSERT_TRUE(held) << held.error().to_string();
    // (`..` and the trailing slash are the same path once normal: the lock by path refuses them,
    // and the holder's spelling is then the same as ours.)
    for (const auto& [spelling, is_other_path] :
         std::vector<std::pair<std::filesystem::path, bool>>{
             {dir / "link/mirror/base", true},
             {dir / "real/mirror/other/../base", false},
             {dir / "link/mirror/base/", true},
             {dir / "link/mirror/other/../base", true}}) {
        auto second = RunLock::acquire(dir / "state", spelling);
        ASSERT_FALSE(second) << spelling;
        EXPECT_EQ(second.error().code, ErrorCode::Busy);
        EXPECT_EQ(second.error().to_string(),
                  "repository directory " + spelling.string() +
                      " is being synced by another rpmirror (pid " + std::to_string(::getpid()) +
                      (is_other_path ? ", as " + (dir / "real/mirror/base").string() : "") + ")")
            << spelling;
    }
    EXPECT_TRUE(RunLock::acquire(dir / "state", dir / "link/mirror/other"))
        << "another directory through the same symlink is not blocked";
    { RunLock released = std::move(*held); }
    EXPECT_TRUE(RunLock::acquire(dir / "state", dir / "link/mirror/base"));
}

// A holder that created its directory removes it, still locked, when it ends; the inode number can
// then name a new directory before the holder's lock is gone. That lock is not a conflict: the
// holder's spelling names no directory with that inode, so the new run waits for its release
// instead of refusing (seen in CI: two tests' mirrors on one tmpfs).
TEST(RunLock, AnInodeLockWhoseHolderNoLongerHasThatDirectoryIsWaitedForNotReported) {
    test::TempDir dir;
    std::filesystem::create_directories(dir / "mirror/base");
    struct stat st {};
    ASSERT_EQ(::stat((dir / "mirror/base").c_str(), &st), 0);
    const auto stale_path = directory_lock_path(dir / "state", st.st_dev, st.st_ino);
    std::filesystem::create_directories(stale_path.parent_path());
    int stale = ::open(stale_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    ASSERT_GE(stale, 0);
    const std::string text = "999999\n" + (dir / "removed/base").string() + "\n";
    ASSERT_EQ(::pwrite(stale, text.data(), text.size(), 0), static_cast<ssize_t>(text.size()));
    struct flock whole {};
    whole.l_type = F_WRLCK;
    whole.l_whence = SEEK_SET;
    ASSERT_EQ(::fcntl(stale, F_OFD_SETLK, &whole), 0);

    // Release the stale lock once the run has opened its file (it then tries the lock at once:
    // without the wait, it would be refused).
    const int watch = ::inotify_init1(IN_CLOEXEC);
    ASSERT_GE(watch, 0);
    ASSERT_GE(::inotify_add_watch(watch, stale_path.c_str(), IN_OPEN), 0);
    std::optional<Result<RunLock>> taken;
    std::jthread run([&] { taken.emplace(RunLock::acquire(dir / "state", dir / "mirror/base")); });
    alignas(struct inotify_event) char events[4096];
    ASSERT_GT(::read(watch, events, sizeof(events)), 0);
    ::close(watch);
    ::close(stale);
    run.join();
    ASSERT_TRUE(taken && *taken) << (taken && !*taken ? (*taken).error().to_string() : "");
}

TEST(RunLock, CreatesTheDirectoryItLocksAndRemovesItIfLeftEmptyUnlessToldToLockOnlyAPresentOne) {
    test::TempDir dir;
    auto created = RunLock::acquire(dir / "state", dir / "mirror/new");
    ASSERT_TRUE(created) << created.error().to_string();
    EXPECT_TRUE(std::filesystem::is_directory(dir / "mirror/new"));
    struct stat st {};
    ASSERT_EQ(::stat((dir / "mirror/new").c_str(), &st), 0);
    EXPECT_TRUE(std::filesystem::exists(directory_lock_path(dir / "state", st.st_dev, st.st_ino)));

    // Released, what it created and is still empty goes (a run that wrote nothing leaves
    // nothing); what holds a file stays.
    {
        auto nested = RunLock::acquire(dir / "state", dir / "made/by/lock");
        ASSERT_TRUE(nested) << nested.error().to_string();
        ASSERT_TRUE(std::filesystem::is_directory(dir / "made/by/lock"));
        RunLock moved = std::move(*nested);
    }
    EXPECT_FALSE(std::filesystem::exists(dir / "made"));
    {
        auto written = RunLock::acquire(dir / "state", dir / "kept/repo");
        ASSERT_TRUE(written) << written.error().to_string();
        dir.write("kept/repo/a.rpm", "x");
    }
    EXPECT_TRUE(std::filesystem::exists(dir / "kept/repo/a.rpm"));

    auto absent = RunLock::acquire(dir / "state", dir / "mirror/absent", std::nullopt, {},
                                   MissingDirectory::LockOnlyIfPresent);
    ASSERT_TRUE(absent) << absent.error().to_string();
    EXPECT_FALSE(std::filesystem::exists(dir / "mirror/absent"));
    auto again = RunLock::acquire(dir / "state", dir / "mirror/absent", std::nullopt, {},
                                  MissingDirectory::LockOnlyIfPresent);
    ASSERT_FALSE(again) << "the lock by path is still taken";
    EXPECT_EQ(again.error().code, ErrorCode::Busy);

    dir.write("file", "not a directory");
    auto not_directory = RunLock::acquire(dir / "state", dir / "file/below");
    ASSERT_FALSE(not_directory);
    EXPECT_EQ(not_directory.error().to_string(),
              (dir / "file/below").string() +
                  ": cannot create the destination directory: Not a directory");
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
