// Trees that may not overlap (jobs/overlap.hpp): spelled four ways on disk, as S3
// prefixes, and the pairs the rules allow.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "jobs/overlap.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror {
namespace {

namespace stdfs = std::filesystem;

OwnedTree repository(const stdfs::path& path, const std::string& owner) {
    return {TreeKind::Repository, path, owner, "test"};
}

// The overlaps of two repository directories of different owners.
std::vector<TreeOverlap> overlaps_of(const stdfs::path& first, const stdfs::path& second) {
    const std::vector<OwnedTree> trees{repository(first, "job 'a'"), repository(second, "job 'b'")};
    return find_tree_overlaps(trees);
}

TEST(TreeOverlap, NestedDirectoriesOverlapInEitherOrderWhetherTheyExistOrNot) {
    test::TempDir dir;
    for (const bool exists : {false, true}) {
        if (exists) {
            stdfs::create_directories(dir / "m/updates");
        }
        const auto nested = overlaps_of(dir / "m", dir / "m/updates");
        ASSERT_EQ(nested.size(), 1U) << "exists: " << exists;
        EXPECT_EQ(nested[0].inner, 1U);
        EXPECT_EQ(nested[0].outer, 0U);
        EXPECT_FALSE(nested[0].equal);
        EXPECT_EQ(nested[0].message.find((dir / "m/updates").string() +
                                         " (repository directory of job 'b', test) is inside " +
                                         (dir / "m").string() +
                                         " (repository directory of job 'a', test)"),
                  0U)
            << nested[0].message;
        const auto reversed = overlaps_of(dir / "m/updates", dir / "m");
        ASSERT_EQ(reversed.size(), 1U);
        EXPECT_EQ(reversed[0].inner, 0U);
        EXPECT_TRUE(overlaps_of(dir / "m", dir / "mx").empty()) << "siblings by name only";
        EXPECT_TRUE(overlaps_of(dir / "m/a", dir / "m/b").empty());
    }
}

TEST(TreeOverlap, EqualDirectoriesSpelledDifferentlyOverlap) {
    test::TempDir dir;
    stdfs::create_directories(dir / "m");
    stdfs::create_directories(dir / "other");
    for (const stdfs::path& spelling :
         {dir / "m", dir / "m/", dir / "m/./", dir / "other/../m", dir / "not-yet/../m"}) {
        const auto equal = overlaps_of(dir / "m", spelling);
        ASSERT_EQ(equal.size(), 1U) << spelling;
        EXPECT_TRUE(equal[0].equal) << spelling;
        EXPECT_NE(equal[0].message.find(" is the same directory as "), std::string::npos)
            << equal[0].message;
        EXPECT_NE(equal[0].message.find("one tree cannot have two owners"), std::string::npos)
            << equal[0].message;
    }
    // Neither exists yet: the names decide.
    EXPECT_EQ(overlaps_of(dir / "new/m", dir / "new/m/").size(), 1U);
    EXPECT_EQ(overlaps_of(dir / "new/m", dir / "new/m/sub").size(), 1U);
    EXPECT_TRUE(overlaps_of(dir / "new/m", dir / "new/n").empty());
}

TEST(TreeOverlap, ASymlinkedSpellingIsTheDirectoryItPointsToAndTheMessageSaysSo) {
    test::TempDir dir;
    stdfs::create_directories(dir / "real/m");
    stdfs::create_directory_symlink("real", dir / "link");
    stdfs::create_directory_symlink(dir / "real/m", dir / "m-link");
    const auto through_parent = overlaps_of(dir / "real/m", dir / "link/m/updates");
    ASSERT_EQ(through_parent.size(), 1U);
    EXPECT_FALSE(through_parent[0].equal);
    EXPECT_NE(
        through_parent[0].message.find("(they resolve to " + (dir / "real/m/updates").string() +
                                       " and " + (dir / "real/m").string() + ")"),
        std::string::npos)
        << through_parent[0].message;
    const auto itself = overlaps_of(dir / "m-link", dir / "real/m");
    ASSERT_EQ(itself.size(), 1U);
    EXPECT_TRUE(itself[0].equal);
    // ".." after a symlink goes up from where the link points, as the kernel does.
    stdfs::create_directories(dir / "real/n");
    EXPECT_EQ(overlaps_of(dir / "link/m/../n", dir / "real/n").size(), 1U);
    EXPECT_TRUE(overlaps_of(dir / "m-link/../n", dir / "n").empty())
        << "m-link/.. is real/, not the directory the link is in";
}

TEST(TreeOverlap, S3PrefixesNestAtSlashBoundariesOnly) {
    const auto of = [](const std::string& first, const std::string& second) {
        return overlaps_of(stdfs::path(first), stdfs::path(second));
    };
    const auto nested = of("s3://bucket/m", "s3://bucket/m/updates");
    ASSERT_EQ(nested.size(), 1U);
    EXPECT_EQ(nested[0].message.find("s3://bucket/m/updates (repository directory of job 'b', "
                                     "test) is under s3://bucket/m (repository directory of job "
                                     "'a', test); refused: "),
              0U)
        << nested[0].message;
    EXPECT_TRUE(of("s3://bucket/m/", "s3://bucket/m")[0].equal);
    EXPECT_EQ(of("s3://bucket", "s3://bucket/anything").size(), 1U) << "the bucket's root";
    EXPECT_TRUE(of("s3://bucket/m", "s3://bucket/mx").empty());
    EXPECT_TRUE(of("s3://bucket/m", "s3://other/m").empty()) << "another bucket";
    EXPECT_TRUE(of("s3://bucket/m", "/bucket/m").empty()) << "a bucket and a disk";
    EXPECT_TRUE(of("s3://bucket/m", "s3://bucket/m//x").empty())
        << "an s3:// URL that does not parse is left to the sync's own error";
}

TEST(TreeOverlap, ASnapshotTreeInsideItsOwnRepositoryIsRefusedItsMetadataDirectoryIsNot) {
    test::TempDir dir;
    const std::vector<OwnedTree> trees{
        {TreeKind::Repository, dir / "small", "repository 'small'", "-p D --norepopath"},
        {TreeKind::Metadata, dir / "small/meta", "repository 'small'", "--metadata-path M"},
        {TreeKind::Snapshots, dir / "small/snapshots", "--snapshot", "--snapshot-dir D"},
        {TreeKind::Published, dir / "small/published", "--snapshot", "--snapshot-dir D"}};
    const auto overlaps = find_tree_overlaps(trees);
    ASSERT_EQ(overlaps.size(), 2U);
    EXPECT_EQ(overlaps[0].inner, 2U);
    EXPECT_EQ(overlaps[0].outer, 0U);
    EXPECT_EQ(overlaps[0].message,
              (dir / "small/snapshots").string() +
                  " (snapshot tree of --snapshot, --snapshot-dir D) is inside " +
                  (dir / "small").string() +
                  " (repository directory of repository 'small', -p D --norepopath); refused: "
                  "the repository's --delete removes every package beneath its directory that "
                  "its own metadata does not list");
    EXPECT_EQ(overlaps[1].inner, 3U);
    // A repository inside a snapshot tree is refused as well.
    const std::vector<OwnedTree> reversed{
        {TreeKind::Snapshots, dir / "base/snapshots", "job 'a'", "conf:3"},
        {TreeKind::Repository, dir / "base/snapshots/b", "job 'b'", "conf:7"}};
    ASSERT_EQ(find_tree_overlaps(reversed).size(), 1U);
    EXPECT_NE(find_tree_overlaps(reversed)[0].message.find("removing a snapshot"),
              std::string::npos);
}

TEST(TreeOverlap, JobsOfOneSnapshotBaseShareItsTreesButNotNestedOnes) {
    test::TempDir dir;
    const std::vector<OwnedTree> shared{{TreeKind::Repository, dir / "m/a", "job 'a'", ""},
                                        {TreeKind::Snapshots, dir / "m/snapshots", "job 'a'", ""},
                                        {TreeKind::Published, dir / "m/published", "job 'a'", ""},
                                        {TreeKind::Repository, dir / "m/b", "job 'b'", ""},
                                        {TreeKind::Snapshots, dir / "m/snapshots", "job 'b'", ""},
                                        {TreeKind::Published, dir / "m/published", "job 'b'", ""}};
    EXPECT_TRUE(find_tree_overlaps(shared).empty());
    const std::vector<OwnedTree> nested{
        {TreeKind::Snapshots, dir / "m/snapshots", "job 'a'", ""},
        {TreeKind::Snapshots, dir / "m/snapshots/b/snapshots", "job 'b'", ""}};
    EXPECT_EQ(find_tree_overlaps(nested).size(), 1U);
    // Two repositories' metadata in one directory is not sharing.
    const std::vector<OwnedTree> metadata{{TreeKind::Metadata, dir / "meta", "job 'a'", ""},
                                          {TreeKind::Metadata, dir / "meta", "job 'b'", ""}};
    EXPECT_EQ(find_tree_overlaps(metadata).size(), 1U);
}

TEST(TreeOverlap, TheSyncCommandLineNamesItsOptions) {
    SyncOptions options;
    options.download_path = "/srv/m";
    const std::vector<std::string> ids{"base", "updates"};
    const auto trees = sync_command_trees(ids, options, /*snapshots=*/true, std::nullopt);
    ASSERT_EQ(trees.size(), 4U);
    EXPECT_EQ(trees[0].path, "/srv/m/base");
    EXPECT_EQ(trees[0].given_by, "-p /srv/m");
    EXPECT_EQ(trees[2].path, "/srv/m/snapshots");
    EXPECT_EQ(trees[2].given_by, "no --snapshot-dir: under -p /srv/m");
    EXPECT_TRUE(check_tree_overlaps(trees)) << "the default layout is fine";

    options.norepopath = true;
    options.download_path = "/srv/m/small";
    const std::vector<std::string> small{"small"};
    auto inside = check_tree_overlaps(sync_command_trees(small, options, true, "/srv/m/small/"));
    ASSERT_FALSE(inside);
    EXPECT_EQ(inside.error().code, ErrorCode::BadInput);
    EXPECT_EQ(inside.error().message.find(
                  "/srv/m/small/snapshots (snapshot tree of --snapshot, --snapshot-dir "
                  "/srv/m/small/) is inside /srv/m/small (repository directory of repository "
                  "'small', -p /srv/m/small --norepopath)"),
              0U)
        << inside.error().message;
    EXPECT_NE(inside.error().message.find("(and 1 more overlap)"), std::string::npos);
    EXPECT_TRUE(check_tree_overlaps(sync_command_trees(small, options, false, "/srv/m/small")))
        << "no --snapshot: no snapshot trees";
}

}  // namespace
}  // namespace rpmirror
