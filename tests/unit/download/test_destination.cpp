// Destination safety: .part files are created beneath the root only, directories on the way are
// created, symlinks that leave the root are refused.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "download/destination.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror::download {
namespace {

TEST(Destination, CreatesMissingDirectoriesAndAnEmptyPart) {
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

TEST(Destination, ReportsTheSizeOfALeftoverPart) {
    test::TempDir dir;
    dir.write("root/a/.x.rpm.part", "12345");
    auto root = DestinationRoot::open(dir / "root");
    ASSERT_TRUE(root.has_value());
    auto part = root->open_part("a/x.rpm");
    ASSERT_TRUE(part.has_value());
    EXPECT_EQ(part->existing_size, 5U);
}

TEST(Destination, RefusesAnIntermediateSymlinkLeavingTheRoot) {
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

TEST(Destination, RefusesAFifoPlantedAsThePart) {
    test::TempDir dir;
    std::filesystem::create_directories(dir / "root");
    ASSERT_EQ(::mkfifo((dir / "root/.x.rpm.part").c_str(), 0644), 0);
    auto root = DestinationRoot::open(dir / "root");
    ASSERT_TRUE(root.has_value());
    auto part = root->open_part("x.rpm");  // must not block
    ASSERT_FALSE(part.has_value());
    EXPECT_EQ(part.error().code, ErrorCode::Unsafe);
}

TEST(Destination, ChecksDestinationPathsLexically) {
    EXPECT_TRUE(check_destination_path("a/b.rpm").has_value());
    EXPECT_EQ(check_destination_path("/abs.rpm").error().code, ErrorCode::BadInput);
    EXPECT_EQ(check_destination_path("a/../../b.rpm").error().code, ErrorCode::Unsafe);
    EXPECT_EQ(check_destination_path("").error().code, ErrorCode::BadInput);
    EXPECT_EQ(check_destination_path("a/").error().code, ErrorCode::BadInput);
    EXPECT_EQ(check_destination_path(".x.rpm.part").error().code, ErrorCode::BadInput);
}

}  // namespace
}  // namespace rpmirror::download
