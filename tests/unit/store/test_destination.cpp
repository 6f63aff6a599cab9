// A destination told apart once (store::Destination): its medium, normal form, parent, joins,
// descriptions, bad inputs, and where two destinations lie one inside the other.
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "store/destination.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror::store {
namespace {

TEST(Destination, TellsABucketFromADirectoryByItsScheme) {
    EXPECT_TRUE(Destination::of("s3://x").in_bucket());
    EXPECT_TRUE(Destination::of("s3://bucket/m").in_bucket());
    EXPECT_FALSE(Destination::of("/srv/mirror").in_bucket());
    // "s3:/x" is a relative directory named "s3:" holding "x", not a bucket.
    const Destination one_slash = Destination::of("s3:/x");
    EXPECT_FALSE(one_slash.in_bucket());
    EXPECT_EQ(one_slash.path(), std::filesystem::current_path() / "s3:" / "x");
    EXPECT_TRUE(Destination::of("s3://bucket/m").same_medium(Destination::of("s3://other")));
    EXPECT_FALSE(Destination::of("s3://bucket/m").same_medium(Destination::of("/srv/m")));
    EXPECT_TRUE(Destination::of("/srv/m").same_medium(Destination::of("relative")));
}

TEST(Destination, NormalFormHasNoTrailingSlashAndDirectoriesAreAbsolute) {
    EXPECT_EQ(Destination::of("/srv/mirror/").path(), "/srv/mirror");
    EXPECT_EQ(Destination::of("/srv//a/../mirror///").path(), "/srv/mirror");
    EXPECT_EQ(Destination::of("/").path(), "/");
    EXPECT_EQ(Destination::of("rel/m/").path(), std::filesystem::current_path() / "rel" / "m");
    EXPECT_EQ(Destination::of("rel/m/").given(), "rel/m/");
    // URLs are never normalised as paths ("s3://" is not "s3:/").
    EXPECT_EQ(Destination::of("s3://bucket/m/").path().native(), "s3://bucket/m");
    EXPECT_EQ(Destination::of("s3://bucket//").path().native(), "s3://bucket");
    EXPECT_EQ(Destination::of("s3://").path().native(), "s3://");
    // A configuration keeps a bucket's URL as written, a directory in its normal form.
    EXPECT_EQ(Destination::of("s3://bucket/m/").configured().native(), "s3://bucket/m/");
    EXPECT_EQ(Destination::of("/srv/mirror/").configured(), "/srv/mirror");
}

TEST(Destination, ParseRefusesBadInputNamingIt) {
    for (const std::string text :
         {"s3://", "s3:///m", "s3://Bad_Bucket/m", "s3://bucket//m", "s3://bucket/../m", ""}) {
        auto parsed = Destination::parse(text);
        ASSERT_FALSE(parsed) << text;
        EXPECT_EQ(parsed.error().code, ErrorCode::BadInput) << text;
        EXPECT_EQ(parsed.error().subject, text);
        EXPECT_FALSE(parsed.error().message.empty());
    }
    auto no_bucket = Destination::parse("s3://");
    ASSERT_FALSE(no_bucket);
    EXPECT_NE(no_bucket.error().message.find("no bucket name"), std::string::npos);
    // of() keeps what parse() refuses: it is a bucket's that lies nowhere.
    EXPECT_TRUE(Destination::of("s3://").in_bucket());
    EXPECT_FALSE(Destination::of("s3://").parent());
    for (const std::string text : {"s3://bucket", "s3://bucket/m/", "/srv/m", "rel", "s3:/x"}) {
        EXPECT_TRUE(Destination::parse(text)) << text;
    }
}

TEST(Destination, LocationIsTheBucketAndPrefixAndRefusesADirectory) {
    auto where = Destination::of("s3://bucket/a/b/").location();
    ASSERT_TRUE(where);
    EXPECT_EQ(where->bucket, "bucket");
    EXPECT_EQ(where->prefix, "a/b/");
    auto directory = Destination::of("/srv/m").location();
    ASSERT_FALSE(directory);
    EXPECT_EQ(directory.error().code, ErrorCode::BadInput);
    EXPECT_EQ(directory.error().subject, "/srv/m");
}

TEST(Destination, ParentStopsAtTheTop) {
    auto above = Destination::of("s3://bucket/a/b/").parent();
    ASSERT_TRUE(above);
    EXPECT_TRUE(above->in_bucket());
    EXPECT_EQ(above->path().native(), "s3://bucket/a");
    auto top = above->parent();
    ASSERT_TRUE(top);
    EXPECT_EQ(top->path().native(), "s3://bucket");
    EXPECT_FALSE(top->parent());  // nothing above a bucket's top
    auto directory = Destination::of("/srv/m/").parent();
    ASSERT_TRUE(directory);
    EXPECT_FALSE(directory->in_bucket());
    EXPECT_EQ(directory->path(), "/srv");
    EXPECT_EQ(directory->parent()->path(), "/");
    EXPECT_FALSE(Destination::of("/").parent());
}

TEST(Destination, JoinAndDescribeWorkOnBoth) {
    EXPECT_EQ(Destination::of("s3://bucket/m/").join("snapshots/x").path().native(),
              "s3://bucket/m/snapshots/x");
    EXPECT_TRUE(Destination::of("s3://bucket").join("m").in_bucket());
    EXPECT_EQ(Destination::of("/srv/m/").join("snapshots/x").path(), "/srv/m/snapshots/x");
    EXPECT_EQ(Destination::of("/srv/m").join("").path(), "/srv/m");
    EXPECT_EQ(Destination::of("s3://bucket/m/").describe("Packages/a.rpm"),
              "s3://bucket/m/Packages/a.rpm");
    EXPECT_EQ(Destination::of("/srv/m/").describe("Packages/a.rpm"), "/srv/m/Packages/a.rpm");
    EXPECT_EQ(Destination::of("rel").describe("a.rpm"),
              (std::filesystem::current_path() / "rel" / "a.rpm").string());
}

TEST(Destination, MayExistIsADirectoryThatExistsOrAnyPrefix) {
    test::TempDir dir;
    EXPECT_TRUE(Destination::of(dir.path().native()).may_exist());
    EXPECT_FALSE(Destination::of((dir / "missing").native()).may_exist());
    const auto file = dir.write("file", "x");
    EXPECT_FALSE(Destination::of(file.native()).may_exist());
    EXPECT_TRUE(Destination::of("s3://bucket/m").may_exist());
}

TEST(Destination, ResolvedPrefixesCompareByBucketAndSegments) {
    const auto outer = Destination::of("s3://bucket/m/").resolve();
    const auto inner = Destination::of("s3://bucket/m/a").resolve();
    const auto sibling = Destination::of("s3://bucket/ma").resolve();
    const auto other_bucket = Destination::of("s3://other/m/a").resolve();
    const auto unparsed = Destination::of("s3://bucket//m").resolve();
    EXPECT_TRUE(outer.contains(inner));
    EXPECT_FALSE(inner.contains(outer));
    EXPECT_TRUE(outer.contains(outer));
    EXPECT_FALSE(outer.contains(sibling));
    EXPECT_FALSE(outer.contains(other_bucket));
    EXPECT_FALSE(outer.contains(unparsed));
    EXPECT_FALSE(unparsed.contains(unparsed));
    EXPECT_EQ(inner.relation(false), " is under ");
    EXPECT_EQ(inner.relation(true), " is the same prefix as ");
    EXPECT_EQ(inner.how(outer), "");
}

TEST(Destination, ResolvedDirectoriesCompareThroughSymlinksAndAcrossMediaNever) {
    test::TempDir dir;
    std::filesystem::create_directories(dir / "real" / "sub");
    std::filesystem::create_directory_symlink(dir / "real", dir / "link");
    const auto real = Destination::of((dir / "real").native()).resolve();
    const auto through_link = Destination::of((dir / "link" / "sub" / "new").native()).resolve();
    const auto missing = Destination::of((dir / "real" / "not" / "yet").native()).resolve();
    EXPECT_TRUE(real.contains(through_link));
    EXPECT_FALSE(through_link.contains(real));
    EXPECT_TRUE(real.contains(missing));
    EXPECT_EQ(through_link.relation(false), " is inside ");
    EXPECT_EQ(through_link.relation(true), " is the same directory as ");
    EXPECT_NE(through_link.how(real).find("they resolve to"), std::string::npos);
    EXPECT_EQ(missing.how(real), "");
    const auto bucket = Destination::of("s3://bucket" + dir.path().native()).resolve();
    EXPECT_FALSE(real.contains(bucket));
    EXPECT_FALSE(bucket.contains(real));
}

}  // namespace
}  // namespace rpmirror::store
