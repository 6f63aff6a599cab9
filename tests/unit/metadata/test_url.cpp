#include <gtest/gtest.h>

#include "metadata/metadata.hpp"

namespace rpmirror {
namespace {

TEST(JoinUrl, ExactlyOneSlashBetweenBaseAndHref) {
    EXPECT_EQ(join_url("https://m.example/repo", "Packages/a.rpm"),
              "https://m.example/repo/Packages/a.rpm");
    EXPECT_EQ(join_url("https://m.example/repo/", "Packages/a.rpm"),
              "https://m.example/repo/Packages/a.rpm");
    EXPECT_EQ(join_url("https://m.example/repo//", "/Packages/a.rpm"),
              "https://m.example/repo/Packages/a.rpm");
    EXPECT_EQ(join_url("file:///", "srv/a.rpm"), "file:///srv/a.rpm");
    EXPECT_EQ(join_url("file:///srv/repo/", "a.rpm"), "file:///srv/repo/a.rpm");
    EXPECT_EQ(join_url("", "Packages/a.rpm"), "Packages/a.rpm");
}

TEST(JoinUrl, PercentEncodesEverythingOutsideUnreservedAndSlash) {
    EXPECT_EQ(join_url("https://m.example/r/", "Packages/g++-12.rpm"),
              "https://m.example/r/Packages/g%2B%2B-12.rpm");
    EXPECT_EQ(join_url("https://m.example/r/", "Packages/a b.rpm"),
              "https://m.example/r/Packages/a%20b.rpm");
    EXPECT_EQ(join_url("https://m.example/r/", "Packages/v1.0~rc1_x-y.rpm"),
              "https://m.example/r/Packages/v1.0~rc1_x-y.rpm");
    EXPECT_EQ(join_url("https://m.example/r/", "Packages/caf\xc3\xa9.rpm"),
              "https://m.example/r/Packages/caf%C3%A9.rpm");
    EXPECT_EQ(join_url("https://m.example/r/", "a^b%25?#:@&=.rpm"),
              "https://m.example/r/a%5Eb%2525%3F%23%3A%40%26%3D.rpm");
    EXPECT_EQ(join_url("https://m.example/r/", "../../../../blobstore/ab/x.rpm"),
              "https://m.example/r/../../../../blobstore/ab/x.rpm");
    // The base is used verbatim, even when it holds escapes or reserved characters.
    EXPECT_EQ(join_url("https://m.example/a%20b/c+d/", "x+y.rpm"),
              "https://m.example/a%20b/c+d/x%2By.rpm");
}

TEST(JoinUrl, EncodingCanBeTurnedOff) {
    EXPECT_EQ(join_url("https://m.example/r/", "Packages/g++ 1~x.rpm", false),
              "https://m.example/r/Packages/g++ 1~x.rpm");
    EXPECT_EQ(percent_encode_path("a+b c"), "a%2Bb%20c");
}

TEST(JoinUrl, XmlBaseWinsOverTheMirrorWhenPresent) {
    const std::optional<std::string> none;
    const std::optional<std::string> empty = "";
    const std::optional<std::string> cdn = "https://cdn.example/base/";
    EXPECT_EQ(pick_base_url("https://m.example/r/", none), "https://m.example/r/");
    EXPECT_EQ(pick_base_url("https://m.example/r/", empty), "https://m.example/r/");
    EXPECT_EQ(pick_base_url("https://m.example/r/", cdn), "https://cdn.example/base/");
    EXPECT_EQ(join_url(pick_base_url("https://m.example/r/", cdn), "Packages/a.rpm"),
              "https://cdn.example/base/Packages/a.rpm");
}

TEST(UpstreamUrls, OnlyHttpAndHttpsAreHttpUrls) {
    EXPECT_TRUE(is_http_url("http://m.example/repo/"));
    EXPECT_TRUE(is_http_url("HTTPS://m.example/repo/"));
    EXPECT_FALSE(is_http_url("file:///srv/repo/"));
    EXPECT_FALSE(is_http_url("ftp://m.example/repo/"));
    EXPECT_FALSE(is_http_url("httpx://m.example/"));
    EXPECT_FALSE(is_http_url("http:/m.example/"));
    EXPECT_FALSE(is_http_url("/srv/repo/"));
    EXPECT_FALSE(is_http_url(""));
}

TEST(UpstreamUrls, ListedMirrorsKeepHttpAndSkipFtpAndRsync) {
    const auto usable = usable_listed_mirrors(
        {"https://a.example/r/", "ftp://b.example/r/", "rsync://c.example/r/", "HTTP://d.example/"},
        "https://mirrors.example/list");
    ASSERT_TRUE(usable) << usable.error().to_string();
    EXPECT_EQ(*usable, (std::vector<std::string>{"https://a.example/r/", "HTTP://d.example/"}));
}

TEST(UpstreamUrls, UpstreamListNamingALocalMirrorIsRefused) {
    for (const std::string local :
         {"file:///etc/", "FILE://localhost/srv/", "/srv/mirror/", "gopher://g.example/"}) {
        const auto usable =
            usable_listed_mirrors({"https://a.example/r/", local}, "https://mirrors.example/list");
        ASSERT_FALSE(usable) << local;
        EXPECT_EQ(usable.error().code, ErrorCode::Unsafe);
        EXPECT_EQ(usable.error().subject, "https://mirrors.example/list");
        EXPECT_NE(usable.error().message.find("'" + local + "'"), std::string::npos)
            << usable.error().message;
    }
}

TEST(UpstreamUrls, TheUsersOwnListFileMayNameLocalMirrors) {
    const auto usable = usable_listed_mirrors(
        {"file:///srv/mirror/", "/srv/other/", "rsync://c.example/r/", "https://a.example/r/"},
        "file:///etc/yum/mirrors.txt");
    ASSERT_TRUE(usable) << usable.error().to_string();
    EXPECT_EQ(*usable, (std::vector<std::string>{"file:///srv/mirror/", "/srv/other/",
                                                 "https://a.example/r/"}));
}

}  // namespace
}  // namespace rpmirror
