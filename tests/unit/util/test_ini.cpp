#include <gtest/gtest.h>

#include "util/ini.hpp"

namespace rpmirror::ini {
namespace {

TEST(ConfigIni, SectionsAndKeysWithOrWithoutSpacesAroundEquals) {
    auto sections =
        parse_ini("[one]\nname=First\nbaseurl = http://a/\n\n[two]\n  enabled =1\n", "x.repo");
    ASSERT_TRUE(sections) << sections.error().to_string();
    ASSERT_EQ(sections->size(), 2u);
    EXPECT_EQ((*sections)[0].name, "one");
    EXPECT_EQ((*sections)[0].line, 1u);
    ASSERT_EQ((*sections)[0].entries.size(), 2u);
    EXPECT_EQ((*sections)[0].entries[0].key, "name");
    EXPECT_EQ((*sections)[0].entries[0].value, "First");
    EXPECT_EQ((*sections)[0].entries[1].key, "baseurl");
    EXPECT_EQ((*sections)[0].entries[1].value, "http://a/");
    EXPECT_EQ((*sections)[0].entries[1].line, 3u);
    EXPECT_EQ((*sections)[1].name, "two");
    EXPECT_EQ((*sections)[1].line, 5u);
    ASSERT_EQ((*sections)[1].entries.size(), 1u);
    EXPECT_EQ((*sections)[1].entries[0].key, "enabled");  // an indented key with no key before it
    EXPECT_EQ((*sections)[1].entries[0].value, "1");
}

TEST(ConfigIni, HashAndSemicolonCommentsAreSkippedEvenIndented) {
    auto sections = parse_ini(
        "# leading comment\n; another\n[r]\n#name=commented out\n;enabled=0\n   # indented\n"
        "name=kept\n",
        "x.repo");
    ASSERT_TRUE(sections) << sections.error().to_string();
    ASSERT_EQ(sections->size(), 1u);
    ASSERT_EQ((*sections)[0].entries.size(), 1u);
    EXPECT_EQ((*sections)[0].entries[0].key, "name");
    EXPECT_EQ((*sections)[0].entries[0].value, "kept");
}

TEST(ConfigIni, NoInlineCommentsValueKeptVerbatim) {
    auto sections = parse_ini("[r]\nname=Repo # not a comment ; nor this\n", "x.repo");
    ASSERT_TRUE(sections);
    EXPECT_EQ((*sections)[0].entries[0].value, "Repo # not a comment ; nor this");
}

TEST(ConfigIni, ContinuationLinesJoinWithNewlines) {
    auto sections = parse_ini(
        "[r]\nbaseurl=http://a/\n  http://b/\n\thttp://c/\n\n   http://d/\n  # comment inside\n"
        "name=after\n\n\n",
        "x.repo");
    ASSERT_TRUE(sections) << sections.error().to_string();
    const auto& entries = (*sections)[0].entries;
    ASSERT_EQ(entries.size(), 2u);
    EXPECT_EQ(entries[0].value, "http://a/\nhttp://b/\nhttp://c/\n\nhttp://d/");
    EXPECT_EQ(entries[1].key, "name");
    EXPECT_EQ(entries[1].value, "after");  // trailing blank lines do not belong to the value
    EXPECT_EQ(entries[1].line, 8u);
}

TEST(ConfigIni, KeysAreLowerCasedSectionNamesAreNot) {
    auto sections = parse_ini("[MyRepo]\nBaseURL=http://A/\n", "x.repo");
    ASSERT_TRUE(sections);
    EXPECT_EQ((*sections)[0].name, "MyRepo");
    EXPECT_EQ((*sections)[0].entries[0].key, "baseurl");
    EXPECT_EQ((*sections)[0].entries[0].value, "http://A/");
}

TEST(ConfigIni, CrlfLineEndsAndByteOrderMarkAreAccepted) {
    auto sections = parse_ini("\xEF\xBB\xBF[r]\r\nname=Windows\r\n", "x.repo");
    ASSERT_TRUE(sections) << sections.error().to_string();
    EXPECT_EQ((*sections)[0].name, "r");
    EXPECT_EQ((*sections)[0].entries[0].value, "Windows");
}

TEST(ConfigIni, KeyBeforeAnySectionIsAnError) {
    auto sections = parse_ini("\nname=orphan\n[r]\n", "/etc/yum.repos.d/x.repo");
    ASSERT_FALSE(sections);
    EXPECT_EQ(sections.error().code, ErrorCode::BadInput);
    EXPECT_EQ(sections.error().to_string(),
              "/etc/yum.repos.d/x.repo: line 2: key 'name' outside of any [section]");
}

TEST(ConfigIni, LineWithoutEqualsIsAnError) {
    auto sections = parse_ini("[r]\nname=ok\nbaseurl http://a/\n", "x.repo");
    ASSERT_FALSE(sections);
    EXPECT_EQ(sections.error().to_string(),
              "x.repo: line 3: expected 'key=value', found 'baseurl http://a/'");
}

TEST(ConfigIni, MalformedSectionHeadersAreErrors) {
    for (const char* text : {"[r\nname=x\n", "[]\n", "[r] trailing\n", "[  ]\n"}) {
        SCOPED_TRACE(text);
        auto sections = parse_ini(text, "x.repo");
        ASSERT_FALSE(sections);
        EXPECT_EQ(sections.error().code, ErrorCode::BadInput);
        EXPECT_NE(sections.error().message.find("line 1: malformed section header"),
                  std::string::npos)
            << sections.error().message;
    }
}

TEST(ConfigIni, MissingKeyBeforeEqualsIsAnError) {
    auto sections = parse_ini("[r]\n=value\n", "x.repo");
    ASSERT_FALSE(sections);
    EXPECT_EQ(sections.error().to_string(), "x.repo: line 2: missing key before '=' in '=value'");
}

}  // namespace
}  // namespace rpmirror::ini
