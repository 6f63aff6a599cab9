// Lookups and removals beneath a root, with openat2 and with the component walk.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "fs/beneath.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror::fs {
namespace {

class Beneath : public ::testing::TestWithParam<bool> {
  protected:
    void SetUp() override { force_fallbacks(GetParam()); }
    void TearDown() override { force_fallbacks(false); }
};

INSTANTIATE_TEST_SUITE_P(Resolution, Beneath, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "ComponentWalk" : "Openat2"; });

TEST_P(Beneath, LooksUpWithoutFollowingTheLastComponentOrLeavingTheRoot) {
    test::TempDir dir;
    dir.write("root/Packages/a.rpm", "abc");
    dir.write("outside/secret.rpm", "x");
    std::filesystem::create_symlink(dir / "outside/secret.rpm", dir / "root/Packages/link.rpm");
    std::filesystem::create_directory_symlink(dir / "outside", dir / "root/escape");
    ::mkfifo((dir / "root/fifo.rpm").c_str(), 0644);
    const UniqueFd root = open_directory(dir / "root");
    ASSERT_TRUE(root);

    const Entry file = lookup_beneath(root.get(), "Packages/a.rpm");
    EXPECT_EQ(file.kind, EntryKind::Regular);
    EXPECT_EQ(file.st.st_size, 3);
    EXPECT_EQ(lookup_beneath(root.get(), "Packages/link.rpm").kind, EntryKind::Symlink);
    EXPECT_EQ(lookup_beneath(root.get(), "Packages").kind, EntryKind::Directory);
    EXPECT_EQ(lookup_beneath(root.get(), "fifo.rpm").kind, EntryKind::Other);
    EXPECT_EQ(lookup_beneath(root.get(), "Packages/none.rpm").kind, EntryKind::Missing);
    EXPECT_EQ(lookup_beneath(root.get(), "Packages/a.rpm/x").kind, EntryKind::Missing);
    EXPECT_EQ(lookup_beneath(root.get(), "escape/secret.rpm").kind, EntryKind::Escapes);
    EXPECT_FALSE(open_directory_beneath(root.get(), "escape"));
    EXPECT_TRUE(open_directory_beneath(root.get(), "Packages"));
}

TEST_P(Beneath, RemovesRegularFilesOnlyAndNeverThroughASymlink) {
    test::TempDir dir;
    dir.write("root/Packages/a.rpm", "abc");
    dir.write("outside/b.rpm", "x");
    std::filesystem::create_symlink(dir / "outside/b.rpm", dir / "root/Packages/b.rpm");
    std::filesystem::create_directory_symlink(dir / "outside", dir / "root/escape");

    auto removed = remove_beneath(dir / "root", "Packages/a.rpm", false);
    ASSERT_TRUE(removed);
    EXPECT_EQ(*removed, Removal::Removed);
    EXPECT_FALSE(std::filesystem::exists(dir / "root/Packages/a.rpm"));
    EXPECT_EQ(remove_beneath(dir / "root", "Packages/a.rpm", false).value(), Removal::Missing);
    EXPECT_EQ(remove_beneath(dir / "root", "Packages/b.rpm", false).value(), Removal::Kept);
    EXPECT_EQ(remove_beneath(dir / "root", "Packages", false).value(), Removal::Kept);
    auto escaping = remove_beneath(dir / "root", "escape/b.rpm", false);
    EXPECT_FALSE(escaping.has_value());
    EXPECT_TRUE(std::filesystem::exists(dir / "outside/b.rpm")) << "nothing outside is touched";
    EXPECT_EQ(remove_beneath(dir / "root", "Packages/b.rpm", true).value(), Removal::Removed);
    EXPECT_TRUE(std::filesystem::exists(dir / "outside/b.rpm")) << "the link, not its target";
}

TEST_P(Beneath, MakesDirectoriesOneComponentAtATime) {
    test::TempDir dir;
    std::filesystem::create_directories(dir / "root");
    std::filesystem::create_directories(dir / "outside");
    std::filesystem::create_directory_symlink(dir / "outside", dir / "root/escape");
    const UniqueFd root = open_directory(dir / "root");
    auto made = make_directories_beneath(root.get(), "a/b/c", dir / "root");
    ASSERT_TRUE(made) << made.error().to_string();
    EXPECT_TRUE(std::filesystem::is_directory(dir / "root/a/b/c"));
    auto refused = make_directories_beneath(root.get(), "escape/new", dir / "root");
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, ErrorCode::Unsafe);
    EXPECT_FALSE(std::filesystem::exists(dir / "outside/new"));
}

}  // namespace
}  // namespace rpmirror::fs
