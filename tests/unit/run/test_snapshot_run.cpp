// Where `rpmirror snapshot` finds a repository's snapshots (rpmirror/run/snapshot_run.hpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "rpmirror/run/snapshot_run.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror {
namespace {

TEST(SnapshotPlace, TheMirrorIsWhereSyncPutItAndSnapshotsAreUnderTheDownloadPath) {
    test::TempDir dir;
    SnapshotPlace place;
    place.repo_id = "base";
    place.download_path = dir.path().string();
    for (const bool writes : {false, true}) {
        auto root = open_snapshot_place(place, writes);
        ASSERT_TRUE(root) << root.error().to_string();
        EXPECT_EQ(root->repo_id, "base");
        EXPECT_EQ(root->repo_dir, dir / "base");
        EXPECT_EQ(root->snapshots_dir, dir / "snapshots" / "base");
        EXPECT_EQ(root->published_dir, dir / "published");
        EXPECT_FALSE(root->s3);
    }
}

TEST(SnapshotPlace, NorepopathMakesTheDownloadPathTheMirrorAndNeedsASnapshotDir) {
    test::TempDir dir;
    SnapshotPlace place;
    place.repo_id = "base";
    place.download_path = (dir / "mirror").string();
    place.norepopath = true;
    auto refused = open_snapshot_place(place, false);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, ErrorCode::BadInput);
    EXPECT_EQ(refused.error().to_string(),
              (dir / "mirror").string() +
                  ": with --norepopath, give --snapshot-dir (outside the mirror)");

    place.snapshot_dir = (dir / "snaps").string();
    auto root = open_snapshot_place(place, true);
    ASSERT_TRUE(root) << root.error().to_string();
    EXPECT_EQ(root->repo_dir, dir / "mirror");
    EXPECT_EQ(root->snapshots_dir, dir / "snaps" / "snapshots" / "base");
}

TEST(SnapshotPlace, WritingSnapshotsInsideTheMirrorIsRefusedListingThemIsNot) {
    test::TempDir dir;
    SnapshotPlace place;
    place.repo_id = "base";
    place.download_path = dir.path().string();
    place.snapshot_dir = (dir / "base" / "inside").string();
    auto refused = open_snapshot_place(place, /*writes=*/true);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, ErrorCode::BadInput);
    EXPECT_NE(refused.error().to_string().find("rpmirror snapshot"), std::string::npos)
        << refused.error().to_string();
    EXPECT_TRUE(open_snapshot_place(place, /*writes=*/false));
}

}  // namespace
}  // namespace rpmirror
