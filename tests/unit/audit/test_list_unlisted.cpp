// list_unlisted_packages: the listing-only twin of delete_unlisted_packages (same walk).
#include <gtest/gtest.h>

#include <filesystem>

#include "rpmirror/publish.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror {
namespace {

namespace fs = std::filesystem;

TEST(ListUnlisted, ListsWhatDeleteWouldRemoveAndRemovesNothing) {
    test::TempDir dir;
    const fs::path repo = dir / "repo";
    test::TempDir::write_at(repo / "Packages/a/keep-1.0.rpm", "keep");
    test::TempDir::write_at(repo / "Packages/b/stale-1.0.rpm", "stale");
    test::TempDir::write_at(repo / "top.rpm", "top");
    test::TempDir::write_at(repo / "Packages/readme.txt", "not a package");
    test::TempDir::write_at(repo / "repodata/inside-metadata.rpm", "never walked");
    test::TempDir::write_at(dir / "outside/elsewhere.rpm", "outside");
    fs::create_directory_symlink(dir / "outside", repo / "Packages/linked-dir");
    fs::create_symlink(dir / "outside/elsewhere.rpm", repo / "Packages/link.rpm");

    const std::set<fs::path> keep{"Packages/a/keep-1.0.rpm"};
    const auto listed = list_unlisted_packages(repo, keep);
    ASSERT_TRUE(listed) << listed.error().to_string();
    const std::vector<fs::path> expected{"Packages/b/stale-1.0.rpm", "top.rpm"};
    EXPECT_EQ(*listed, expected);
    EXPECT_TRUE(fs::exists(repo / "Packages/b/stale-1.0.rpm"));
    EXPECT_TRUE(fs::exists(repo / "top.rpm"));

    // delete_unlisted_packages walks the same way: it removes exactly what was listed.
    const auto removed = delete_unlisted_packages(repo, keep);
    ASSERT_TRUE(removed) << removed.error().to_string();
    EXPECT_EQ(*removed, expected);
    EXPECT_TRUE(fs::exists(repo / "Packages/a/keep-1.0.rpm"));
    EXPECT_TRUE(fs::exists(dir / "outside/elsewhere.rpm"));
    EXPECT_TRUE(fs::is_symlink(repo / "Packages/link.rpm"));
}

TEST(ListUnlisted, MissingDirectoryListsNothingAndASymlinkedRootIsRefused) {
    test::TempDir dir;
    const auto absent = list_unlisted_packages(dir / "absent", {});
    ASSERT_TRUE(absent);
    EXPECT_TRUE(absent->empty());

    test::TempDir::write_at(dir / "real/x.rpm", "x");
    fs::create_directory_symlink(dir / "real", dir / "link");
    const auto refused = list_unlisted_packages(dir / "link", {});
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, ErrorCode::Unsafe);
}

}  // namespace
}  // namespace rpmirror
