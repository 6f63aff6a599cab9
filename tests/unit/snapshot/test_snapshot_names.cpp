// Snapshot names, the layout, and snapshot_directory (the seam `diff` resolves names through).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "rpmirror/snapshot/snapshot.hpp"
#include "snapshot/snapshot.hpp"
#include "support/temp_dir.hpp"
#include "sync/sync.hpp"

namespace rpmirror {
namespace {

TEST(SnapshotNames, ValidNamesPassAndBadOnesSayWhy) {
    for (const char* name : {"prod", "20261130T214000Z", "before-upgrade_2", "a.b"}) {
        EXPECT_TRUE(validate_snapshot_name(name, "snapshot name").has_value()) << name;
    }
    const auto why = [](std::string_view name) {
        auto checked = validate_snapshot_name(name, "published name");
        EXPECT_FALSE(checked.has_value()) << name;
        return checked ? std::string() : checked.error().message;
    };
    EXPECT_EQ(why(""), "invalid published name: empty");
    EXPECT_EQ(why("a/b"), "invalid published name: contains '/'");
    EXPECT_NE(why("..").find("starts with '.'"), std::string::npos);
    EXPECT_NE(why(".x.creating-1").find("reserved for temporary names"), std::string::npos);
    EXPECT_EQ(why("tab\there"), "invalid published name: contains a control character");
    EXPECT_EQ(why(std::string(201, 'x')), "invalid published name: longer than 200 bytes");
}

TEST(SnapshotNames, DefaultNameIsTheUtcTime) {
    const auto when = std::chrono::system_clock::time_point(std::chrono::seconds(1796075276));
    EXPECT_EQ(default_snapshot_name(when), "20261130T214756Z");
}

TEST(SnapshotRoot, LayoutIsBesideTheMirrorsAndRefusesToOverlapIt) {
    auto root = snapshot_root("base", "/srv/mirror/base", "/srv/mirror");
    ASSERT_TRUE(root.has_value());
    EXPECT_EQ(root->snapshots_dir, "/srv/mirror/snapshots/base");
    EXPECT_EQ(root->published_dir, "/srv/mirror/published");
    EXPECT_EQ(root->repo_dir, "/srv/mirror/base");
    for (const char* id : {"snapshots", "published"}) {
        auto refused = snapshot_root(id, std::filesystem::path("/srv/mirror") / id, "/srv/mirror");
        ASSERT_FALSE(refused.has_value()) << id;
        EXPECT_NE(refused.error().message.find("choose another --snapshot-dir"), std::string::npos);
    }
    EXPECT_TRUE(snapshot_root("snapshots", "/srv/mirror/snapshots", "/srv/snap").has_value());
}

TEST(SnapshotRoot, AnS3MirrorKeepsItsSnapshotsInItsStoreUnderUrlsNeverNormalised) {
    auto root = snapshot_root("base", "s3://bucket/pub/base", "s3://bucket/pub/");
    ASSERT_TRUE(root.has_value()) << root.error().to_string();
    EXPECT_EQ(root->repo_dir.native(), "s3://bucket/pub/base");
    EXPECT_EQ(root->snapshots_dir.native(), "s3://bucket/pub/snapshots/base");
    EXPECT_EQ(root->published_dir.native(), "s3://bucket/pub/published");
    EXPECT_TRUE(root->s3.has_value());
    for (const auto& [repo_dir, base] :
         {std::pair<std::string, std::string>{"s3://bucket/pub/base", "/srv/snapshots"},
          {"/srv/mirror/base", "s3://bucket/pub"}}) {
        auto refused = snapshot_root("base", repo_dir, base);
        ASSERT_FALSE(refused.has_value()) << repo_dir << " " << base;
        EXPECT_EQ(refused.error().code, ErrorCode::BadInput);
        EXPECT_EQ(refused.error().subject, base);
    }
    auto overlapping = snapshot_root("snapshots", "s3://bucket/pub/snapshots", "s3://bucket/pub");
    ASSERT_FALSE(overlapping.has_value());
    EXPECT_NE(overlapping.error().message.find("choose another --snapshot-dir"), std::string::npos);
    EXPECT_FALSE(snapshot_root("base", "s3://Bad_Bucket/base", "s3://Bad_Bucket").has_value());
}

TEST(SnapshotAfterSync, AMirrorWithNothingAboveItNeedsASnapshotDirNamingTheMirror) {
    for (const std::string top : {"s3://bucket", "s3://bucket/", "/"}) {
        RepoSyncReport report;
        report.repo_id = "base";
        report.repo_dir = top;
        SnapshotAfterSync policy;
        policy.name = "one";
        auto refused = snapshot_after_sync(report, policy);
        ASSERT_FALSE(refused.has_value()) << top;
        EXPECT_EQ(refused.error().code, ErrorCode::BadInput) << top;
        EXPECT_NE(refused.error().message.find("give --snapshot-dir"), std::string::npos) << top;
        EXPECT_EQ(refused.error().subject, top == "/" ? "/" : "s3://bucket") << top;
    }
}

TEST(SnapshotRoot, SnapshotDirectoryResolvesOnlyRealSnapshotDirectories) {
    test::TempDir tmp;
    auto root = snapshot_root("base", tmp / "mirror" / "base", tmp / "mirror");
    ASSERT_TRUE(root.has_value());
    std::filesystem::create_directories(root->snapshots_dir / "one");
    std::filesystem::create_symlink("one", root->snapshots_dir / "alias");
    auto found = snapshot_location(*root, "one");
    ASSERT_TRUE(found.has_value()) << found.error().to_string();
    EXPECT_EQ(*found, root->snapshots_dir / "one");
    for (const char* missing : {"two", "alias"}) {
        auto not_found = snapshot_location(*root, missing);
        ASSERT_FALSE(not_found.has_value()) << missing;
        EXPECT_EQ(not_found.error().code, ErrorCode::NotFound);
        EXPECT_EQ(not_found.error().message,
                  std::string("no snapshot ") + missing + " of repository base");
    }
    EXPECT_EQ(snapshot_location(*root, "../base").error().code, ErrorCode::BadInput);
}

}  // namespace
}  // namespace rpmirror
