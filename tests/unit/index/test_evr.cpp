#include <gtest/gtest.h>

#include "index/index.hpp"

namespace rpmirror {
namespace {

struct VersionCase {
    const char* left;
    const char* right;
    int expected;  // sign of compare_versions(left, right)
};

int sign(int value) {
    return (value > 0) - (value < 0);
}

// rpm's own rpmvercmp cases (rpm tests/rpmvercmp.at), a representative subset.
constexpr VersionCase kRpmVercmpCases[] = {
    {"1.0", "1.0", 0},
    {"1.0", "2.0", -1},
    {"2.0", "1.0", 1},
    {"2.0.1", "2.0.1", 0},
    {"2.0", "2.0.1", -1},
    {"2.0.1a", "2.0.1a", 0},
    {"2.0.1a", "2.0.1", 1},
    {"5.5p1", "5.5p1", 0},
    {"5.5p1", "5.5p2", -1},
    {"5.5p10", "5.5p1", 1},
    {"10xyz", "10.1xyz", -1},
    {"xyz10", "xyz10", 0},
    {"xyz10", "xyz10.1", -1},
    {"xyz.4", "xyz.4", 0},
    {"xyz.4", "8", -1},
    {"8", "xyz.4", 1},
    {"xyz.4", "2", -1},
    {"5.5p2", "5.6p1", -1},
    {"5.6p1", "6.5p1", -1},
    {"6.0.rc1", "6.0", 1},
    {"10b2", "10a1", 1},
    {"1.0aa", "1.0a", 1},
    {"10.0001", "10.1", 0},  // leading zeros are ignored
    {"10.0001", "10.0039", -1},
    {"4.999.9", "5.0", -1},
    {"20101121", "20101122", -1},
    {"2_0", "2_0", 0},
    {"2.0", "2_0", 0},  // separators are equivalent
    {"a", "a", 0},
    {"a+", "a_", 0},
    {"+", "_", 0},
    {"1.0~rc1", "1.0~rc1", 0},  // tilde: before everything, even the end of the string
    {"1.0~rc1", "1.0", -1},
    {"1.0", "1.0~rc1", 1},
    {"1.0~rc1", "1.0~rc2", -1},
    {"1.0~rc1~git123", "1.0~rc1", -1},
    {"1.0^", "1.0^", 0},  // caret: after the base, before any further segment
    {"1.0^", "1.0", 1},
    {"1.0", "1.0^", -1},
    {"1.0^git1", "1.0", 1},
    {"1.0^git1", "1.01", -1},
    {"1.0^", "1.0.1", -1},
    {"1.0^git1", "1.0^git2", -1},
    {"1.0^git1", "1.0~rc1", 1},
    {"1.0^git1~pre", "1.0^git1", -1},
    {"1.0~rc1^git1", "1.0~rc1", 1},
    {"1.10", "1.9", 1},  // numeric segments compare as numbers
    {"1a", "1.0", -1},   // letters are older than digits
    {"1.a", "1.1", -1},
};

TEST(Evr, RpmVercmpTable) {
    for (const VersionCase& each : kRpmVercmpCases) {
        SCOPED_TRACE(std::string(each.left) + " vs " + each.right);
        EXPECT_EQ(sign(compare_versions(each.left, each.right)), each.expected);
        EXPECT_EQ(sign(compare_versions(each.right, each.left)), -each.expected);
    }
}

TEST(Evr, EpochDecidesBeforeVersionAndReleaseAfter) {
    EXPECT_GT(compare_evr({1, "1.0", "1"}, {0, "5.0", "1"}), 0);
    EXPECT_LT(compare_evr({0, "5.0", "1"}, {1, "1.0", "1"}), 0);
    EXPECT_GT(compare_evr({10, "1", "1"}, {9, "1", "1"}), 0) << "epochs compare as numbers";
    EXPECT_EQ(compare_evr({0, "1.0", "1"}, {0, "1.0", "1"}), 0);
    EXPECT_EQ(compare_evr(Evr{.epoch = 0, .version = "1.0", .release = "1"},
                          Evr{.epoch = {}, .version = "1.0", .release = "1"}),
              0)
        << "a missing epoch is 0";
    EXPECT_GT(compare_evr({0, "1.0", "10.el9"}, {0, "1.0", "9.el9"}), 0);
    EXPECT_LT(compare_evr({0, "1.0", "1.el9~beta"}, {0, "1.0", "1.el9"}), 0);
    EXPECT_GT(compare_evr({0, "1.0.1", "1"}, {0, "1.0", "99"}), 0) << "version before release";
}

TEST(Evr, ComparesViewsThatAreNotNulTerminated) {
    const std::string text = "1.10X1.9";
    const std::string_view left = std::string_view(text).substr(0, 4);   // "1.10"
    const std::string_view right = std::string_view(text).substr(5, 3);  // "1.9"
    EXPECT_GT(compare_versions(left, right), 0);
    EXPECT_EQ(compare_versions(std::string_view(text).substr(0, 3), "1.1"), 0);
}

}  // namespace
}  // namespace rpmirror
