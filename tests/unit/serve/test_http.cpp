// The HTTP rules of `rpmirror serve` (src/serve/http.hpp): hostile request paths refused, ranges,
// dates and conditional requests.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "serve/http.hpp"

namespace rpmirror::serve {
namespace {

TEST(ServeRequestPath, SplitsJobAndKey) {
    auto target = parse_request_path("/updates/Packages/a/a-1-1.noarch.rpm");
    ASSERT_TRUE(target) << target.error().to_string();
    EXPECT_EQ(target->job, "updates");
    EXPECT_EQ(target->key, "Packages/a/a-1-1.noarch.rpm");
    auto directory = parse_request_path("/updates/");
    ASSERT_TRUE(directory);
    EXPECT_EQ(directory->job, "updates");
    EXPECT_EQ(directory->key, "");
}

TEST(ServeRequestPath, DecodesEscapes) {
    auto target = parse_request_path("/j/Packages/c%2B%2B-1.rpm");
    ASSERT_TRUE(target);
    EXPECT_EQ(target->key, "Packages/c++-1.rpm");
}

TEST(ServeRequestPath, RefusesEveryHostilePath) {
    const std::vector<std::string> hostile{
        "/j/../etc/passwd",
        "/j/repodata/../../x",
        "/j/%2e%2e/x",
        "/j/%2E%2E/x",
        "/j/.%2e/x",
        "/j/./repodata/repomd.xml",
        "/j/%2e/repodata/repomd.xml",
        "/..",
        "/%2e%2e/j/x",
        "/j/a%2f..%2fb",
        "/j/a%2F..",
        "/j/..\\x",
        "/j/a%5c..%5cb",
        "/j/a\\b",
        std::string("/j/a\0b", 6),
        "/j/a%00.rpm",
        "/j/a%0a.rpm",
        "/j/a%7f",
        "/j//etc/passwd",
        "//etc/passwd",
        "etc/passwd",
        "",
        "/j/a%",
        "/j/a%2",
        "/j/a%zz",
        "/j/a%2f",
    };
    for (const std::string& path : hostile) {
        auto target = parse_request_path(path);
        EXPECT_FALSE(target) << "accepted: " << path << " as " << target->job << " / "
                             << target->key;
        if (!target) {
            EXPECT_EQ(target.error().code, ErrorCode::Unsafe) << path;
        }
    }
}

TEST(ServeRange, ReadsOneRange) {
    EXPECT_EQ(parse_range(std::nullopt, 100).kind, RangeKind::Whole);
    struct Case {
        const char* header;
        std::uint64_t first;
        std::uint64_t length;
    };
    const Case cases[] = {
        {"bytes=0-9", 0, 10},      {"bytes=90-", 90, 10},  {"bytes=-5", 95, 5},
        {"bytes=50-1000", 50, 50}, {"bytes=-500", 0, 100}, {"bytes=3-3", 3, 1},
    };
    for (const Case& c : cases) {
        const RangeAnswer answer = parse_range(c.header, 100);
        ASSERT_EQ(answer.kind, RangeKind::Partial) << c.header;
        EXPECT_EQ(answer.range.first, c.first) << c.header;
        EXPECT_EQ(answer.range.length, c.length) << c.header;
    }
}

TEST(ServeRange, UnsatisfiableAndIgnored) {
    EXPECT_EQ(parse_range("bytes=100-", 100).kind, RangeKind::Unsatisfiable);
    EXPECT_EQ(parse_range("bytes=-0", 100).kind, RangeKind::Unsatisfiable);
    EXPECT_EQ(parse_range("bytes=0-1,5-6", 100).kind, RangeKind::Whole);
    EXPECT_EQ(parse_range("items=0-1", 100).kind, RangeKind::Whole);
    EXPECT_EQ(parse_range("bytes=9-1", 100).kind, RangeKind::Whole);
    EXPECT_EQ(parse_range("bytes=a-b", 100).kind, RangeKind::Whole);
}

TEST(ServeDates, RoundTrip) {
    EXPECT_EQ(http_date(784111777), "Sun, 06 Nov 1994 08:49:37 GMT");
    EXPECT_EQ(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"), 784111777);
    EXPECT_EQ(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT"), 784111777);
    EXPECT_EQ(parse_http_date("Sun Nov  6 08:49:37 1994"), 784111777);
    EXPECT_FALSE(parse_http_date("yesterday"));
}

TEST(ServeConditional, EntityTagsDecideBeforeDates) {
    const Validators file{"\"abc\"", 784111777};
    EXPECT_TRUE(not_modified(file, "\"abc\"", std::nullopt));
    EXPECT_TRUE(not_modified(file, "\"x\", W/\"abc\"", std::nullopt));
    EXPECT_TRUE(not_modified(file, "*", std::nullopt));
    EXPECT_FALSE(not_modified(file, "\"other\"", "Sun, 06 Nov 1994 08:49:37 GMT"));
    EXPECT_TRUE(not_modified(file, std::nullopt, "Sun, 06 Nov 1994 08:49:37 GMT"));
    EXPECT_FALSE(not_modified(file, std::nullopt, "Sun, 06 Nov 1994 08:49:36 GMT"));
    EXPECT_FALSE(not_modified(file, std::nullopt, std::nullopt));
    EXPECT_TRUE(if_range_holds(file, std::nullopt));
    EXPECT_TRUE(if_range_holds(file, "\"abc\""));
    EXPECT_FALSE(if_range_holds(file, "W/\"abc\""));
    EXPECT_FALSE(if_range_holds(file, "\"other\""));
}

}  // namespace
}  // namespace rpmirror::serve
