// Destination safety: .part files are created beneath the root only, directories on the way are
// created, symlinks that leave the root are refused.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "download/destination.hpp"
#include "fs/beneath.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror::download {
namespace {

// Every test runs twice: with openat2(RESOLVE_BENEATH) and with the component walk that kernels
// without it get (forced through the fs layer's test seam).
class Destination : public ::testing::TestWithParam<bool> {
  protected:
    void SetUp() override { fs::force_fallbacks(GetParam()); }
    void TearDown() override { fs::force_fallbacks(false); }
};

INSTANTIATE_TEST_SUITE_P(Resolution, Destination, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "ComponentWalk" : "Openat2"; });

TEST_P(Destination, CreatesMissingDirectoriesAndAnEmptyPart) {
    test::TempDir dir;
    auto root = DestinationRoot::open(dir / "root");
    ASSERT_TRUE(root.has_value());
    auto part = root->open_part("Packages/f/foo.rpm");
    ASSERT_TRUE(part.has_value()) << part.error().to_string();
    EXPECT_EQ(part->part_name, ".foo.rpm.part");
    EXPECT_EQ(part->final_name, "foo.rpm");
    EXPECT_EQ(part->existing_size, 0U);
    EXPECT_TRUE(std::filesystem::is_regular_file(dir / "root/Packages/f/.foo.rpm.part"));
}

TEST_P(Destination, ReportsTheSizeOfALeftoverPart) {
    test::TempDir dir;
    dir.write("root/a/.x.rpm.part", "12345");
    auto root = DestinationRoot::open(dir / "root");
    ASSERT_TRUE(root.has_value());
    auto part = root->open_part("a/x.rpm");
    ASSERT_TRUE(part.has_value());
    EXPECT_EQ(part->existing_size, 5U);
}

TEST_P(Destination, RefusesAnIntermediateSymlinkLeavingTheRoot) {
    test::TempDir dir;
    std::filesystem::create_directories(dir / "root");
    std::filesystem::create_directories(dir / "elsewhere/deep");
    std::filesystem::create_directory_symlink(dir / "elsewhere", dir / "root/escape");
    auto root = DestinationRoot::open(dir / "root");
    ASSERT_TRUE(root.has_value());
    auto part = root->open_part("escape/deep/x.rpm");
    ASSERT_FALSE(part.has_value());
    EXPECT_EQ(part.error().code, ErrorCode::Unsafe);
    EXPECT_FALSE(std::filesystem::exists(dir / "elsewhere/deep/.x.rpm.part"));
    // A missing directory below the escaping link is not created either.
    auto deeper = root->open_part("escape/new/x.rpm");
    ASSERT_FALSE(deeper.has_value());
    EXPECT_FALSE(std::filesystem::exists(dir / "elsewhere/new"));
}

TEST_P(Destination, RefusesAFifoPlantedAsThePart) {
    test::TempDir dir;
    std::filesystem::create_directories(dir / "root");
    ASSERT_EQ(::mkfifo((dir / "root/.x.rpm.part").c_str(), 0644), 0);
    auto root = DestinationRoot::open(dir / "root");
    ASSERT_TRUE(root.has_value());
    auto part = root->open_part("x.rpm");  // must not block
    ASSERT_FALSE(part.has_value());
    EXPECT_EQ(part.error().code, ErrorCode::Unsafe);
}

TEST_P(Destination, ChecksDestinationPathsLexically) {
    EXPECT_TRUE(check_destination_path("a/b.rpm").has_value());
    EXPECT_EQ(check_destination_path("/abs.rpm").error().code, ErrorCode::BadInput);
    EXPECT_EQ(check_destination_path("a/../../b.rpm").error().code, ErrorCode::Unsafe);
    EXPECT_EQ(check_destination_path("").error().code, ErrorCode::BadInput);
    EXPECT_EQ(check_destination_path("a/").error().code, ErrorCode::BadInput);
    EXPECT_EQ(check_destination_path(".x.rpm.part").error().code, ErrorCode::BadInput);
}

TEST_P(Destination, CreatesDeepDirectoriesAndFollowsNoSymlinkOutOfTheRoot) {
    test::TempDir dir;
    std::filesystem::create_directories(dir / "root/a");
    std::filesystem::create_directories(dir / "outside/b");
    // A symlink deep in the path: the component walk must refuse it as openat2 does (a
    // multi-component path handed to one openat would follow it).
    std::filesystem::create_directory_symlink(dir / "outside", dir / "root/a/link");
    auto root = DestinationRoot::open(dir / "root");
    ASSERT_TRUE(root.has_value());
    auto part = root->open_part("a/link/b/x.rpm");
    ASSERT_FALSE(part.has_value());
    EXPECT_EQ(part.error().code, ErrorCode::Unsafe) << part.error().to_string();
    EXPECT_FALSE(std::filesystem::exists(dir / "outside/b/.x.rpm.part"));
    auto deep = root->open_part("a/c/d/e/x.rpm");
    ASSERT_TRUE(deep.has_value()) << deep.error().to_string();
    EXPECT_TRUE(std::filesystem::is_regular_file(dir / "root/a/c/d/e/.x.rpm.part"));
}

}  // namespace
}  // namespace rpmirror::download
