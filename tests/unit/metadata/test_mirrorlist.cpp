#include <gtest/gtest.h>

#include "metadata/metadata.hpp"

namespace rpmirror {
namespace {

TEST(Mirrorlist, KeepsUrlsAndAbsolutePathsInOrder) {
    const auto mirrors = parse_mirrorlist(
        "# Fedora mirrors\n"
        "https://mirror-a.example/fedora/40/x86_64/\n"
        "\n"
        "   http://mirror-b.example/pub/fedora/  \n"
        "#https://commented.example/\n"
        "/srv/mirror/fedora/\n"
        "ftp://mirror-c.example/fedora\n",
        "https://mirrors.example/mirrorlist?repo=fedora-40");
    ASSERT_TRUE(mirrors) << mirrors.error().to_string();
    EXPECT_EQ(*mirrors, (std::vector<std::string>{
                            "https://mirror-a.example/fedora/40/x86_64/",
                            "http://mirror-b.example/pub/fedora/",
                            "/srv/mirror/fedora/",
                            "ftp://mirror-c.example/fedora",
                        }));
}

TEST(Mirrorlist, CrlfLineEndingsAreStripped) {
    const auto mirrors =
        parse_mirrorlist("https://a.example/repo/\r\n\r\nhttps://b.example/repo/\r\n", "crlf.list");
    ASSERT_TRUE(mirrors);
    EXPECT_EQ(*mirrors,
              (std::vector<std::string>{"https://a.example/repo/", "https://b.example/repo/"}));
}

// A NUL ends a line's text, as in librepo (found by the random differential test).
TEST(Mirrorlist, ANulEndsTheLine) {
    using namespace std::string_literals;
    const auto urls = parse_mirrorlist("https://a.example/r/\0junk\nhttps://b.\0x/\n"s, "list");
    ASSERT_TRUE(urls) << urls.error().to_string();
    EXPECT_EQ(*urls, (std::vector<std::string>{"https://a.example/r/", "https://b."}));
}

TEST(Mirrorlist, LeadingByteOrderMarkIsNotPartOfTheFirstUrl) {
    const auto urls =
        parse_mirrorlist("\xEF\xBB\xBFhttps://a.example/r/\nhttps://b.example/r/\n", "list");
    ASSERT_TRUE(urls) << urls.error().to_string();
    EXPECT_EQ(*urls, (std::vector<std::string>{"https://a.example/r/", "https://b.example/r/"}));
}

TEST(Mirrorlist, RelativeLinesAndStrayWordsAreDropped) {
    const auto mirrors = parse_mirrorlist(
        "relative/path/\nmirror.example/no-scheme\nhttps://kept.example/\n../up\n", "mixed.list");
    ASSERT_TRUE(mirrors);
    EXPECT_EQ(*mirrors, (std::vector<std::string>{"https://kept.example/"}));
}

TEST(Mirrorlist, LastLineWithoutNewlineIsKept) {
    const auto mirrors = parse_mirrorlist("https://only.example/al2023/core/guids/abc/x86_64/",
                                          "https://cdn.example/mirror.list");
    ASSERT_TRUE(mirrors);
    ASSERT_EQ(mirrors->size(), 1U);
    EXPECT_EQ(mirrors->front(), "https://only.example/al2023/core/guids/abc/x86_64/");
}

TEST(Mirrorlist, EmptyListIsAnErrorNamingIt) {
    const auto mirrors = parse_mirrorlist("", "https://mirrors.example/empty.list");
    ASSERT_FALSE(mirrors);
    EXPECT_EQ(mirrors.error().code, ErrorCode::BadInput);
    EXPECT_EQ(mirrors.error().message,
              "mirrorlist https://mirrors.example/empty.list lists no mirrors");
    EXPECT_EQ(mirrors.error().subject, "https://mirrors.example/empty.list");
}

TEST(Mirrorlist, AllCommentedOrRelativeIsAnError) {
    const auto mirrors = parse_mirrorlist(
        "# https://a.example/\n   # https://b.example/\n\nrelative/\n", "/etc/m.list");
    ASSERT_FALSE(mirrors);
    EXPECT_EQ(mirrors.error().message, "mirrorlist /etc/m.list lists no mirrors");
}

}  // namespace
}  // namespace rpmirror
