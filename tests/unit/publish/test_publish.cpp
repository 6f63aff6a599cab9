#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "publish/publish.hpp"
#include "support/source_tree.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror {
namespace {

std::vector<std::string> entries_of(const std::filesystem::path& dir) {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
}

TEST(MetadataStage, FirstPublishCreatesRepodata) {
    test::TempDir dir;
    auto stage = MetadataStage::create(dir / "repo");
    ASSERT_TRUE(stage) << stage.error().to_string();
    test::TempDir::write_at(stage->dir() / "repomd.xml", "new");
    ASSERT_TRUE(stage->publish());
    EXPECT_EQ(test::read_file(dir / "repo/repodata/repomd.xml"), "new");
    EXPECT_EQ(entries_of(dir / "repo"), std::vector<std::string>{"repodata"});
    // Readable by others (a web server), as a directory made with the umask would be.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    EXPECT_EQ(std::filesystem::status(dir / "repo/repodata").permissions(),
              static_cast<std::filesystem::perms>(0777 & ~mask));
}

TEST(MetadataStage, PublishSwapsInTheNewDirectoryAndRemovesTheOld) {
    test::TempDir dir;
    dir.write("repo/repodata/repomd.xml", "old");
    dir.write("repo/repodata/old-primary.xml.gz", "old primary");
    {
        auto stage = MetadataStage::create(dir / "repo");
        ASSERT_TRUE(stage);
        test::TempDir::write_at(stage->dir() / "repomd.xml", "new");
        test::TempDir::write_at(stage->dir() / "new-primary.xml.gz", "new primary");
        // Until publish, readers see the old metadata, complete.
        EXPECT_EQ(test::read_file(dir / "repo/repodata/repomd.xml"), "old");
        ASSERT_TRUE(stage->publish());
        EXPECT_EQ(test::read_file(dir / "repo/repodata/repomd.xml"), "new");
    }
    EXPECT_EQ(entries_of(dir / "repo/repodata"),
              (std::vector<std::string>{"new-primary.xml.gz", "repomd.xml"}));
    EXPECT_EQ(entries_of(dir / "repo"), std::vector<std::string>{"repodata"});
}

TEST(MetadataStage, AbandonedStageLeavesLiveMetadataUntouched) {
    test::TempDir dir;
    dir.write("repo/repodata/repomd.xml", "old");
    {
        auto stage = MetadataStage::create(dir / "repo");
        ASSERT_TRUE(stage);
        test::TempDir::write_at(stage->dir() / "repomd.xml", "half-written");
    }
    EXPECT_EQ(test::read_file(dir / "repo/repodata/repomd.xml"), "old");
    EXPECT_EQ(entries_of(dir / "repo"), std::vector<std::string>{"repodata"});
}

TEST(MetadataStage, RepodataSymlinkIsRefusedAndNotFollowed) {
    test::TempDir dir;
    dir.write("elsewhere/repomd.xml", "precious");
    std::filesystem::create_directories(dir / "repo");
    std::filesystem::create_directory_symlink(dir / "elsewhere", dir / "repo/repodata");
    auto stage = MetadataStage::create(dir / "repo");
    ASSERT_TRUE(stage);
    test::TempDir::write_at(stage->dir() / "repomd.xml", "new");
    const auto published = stage->publish();
    ASSERT_FALSE(published);
    EXPECT_EQ(published.error().code, ErrorCode::Unsafe);
    EXPECT_EQ(published.error().subject, (dir / "repo/repodata").string());
    EXPECT_EQ(test::read_file(dir / "elsewhere/repomd.xml"), "precious");
    EXPECT_TRUE(std::filesystem::is_symlink(dir / "repo/repodata"));
}

TEST(MetadataStage, StaleStagesFromCrashedRunsAreRemoved) {
    test::TempDir dir;
    dir.write("repo/.repodata.staging-abc123/repomd.xml", "stale");
    dir.write("repo/.repodata.staging-def456/primary.xml.gz", "stale");
    dir.write("repo/repodata/repomd.xml", "live");
    dir.write("repo/.other/keep", "keep");
    EXPECT_EQ(remove_stale_stages(dir / "repo"), 2U);
    EXPECT_EQ(entries_of(dir / "repo"), (std::vector<std::string>{".other", "repodata"}));
}

}  // namespace
}  // namespace rpmirror
