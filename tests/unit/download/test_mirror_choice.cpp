// The choice of the mirror for a file's next attempt (src/download/mirror_choice.hpp), on its
// own: the policy the downloader's retry tests exercise through a server, case by case.
#include "download/mirror_choice.hpp"

#include <gtest/gtest.h>

namespace rpmirror::download {
namespace {

const std::vector<std::string> kOrder{"http://a/", "http://b/", "http://c/"};

std::vector<MirrorMark> marks_after(
    std::initializer_list<std::pair<std::string, FailureKind>> failures) {
    std::vector<MirrorMark> marks;
    for (const auto& [base, kind] : failures) {
        mark_failure(marks, base, kind);
    }
    return marks;
}

TEST(MirrorChoice, MarkFailureRulesOutOnPermanentAndCountsTransient) {
    const auto marks = marks_after({{"http://a/", FailureKind::Transient},
                                    {"http://b/", FailureKind::Permanent},
                                    {"http://a/", FailureKind::Transient},
                                    {"http://c/", FailureKind::RestartSame}});
    ASSERT_EQ(marks.size(), 3U);
    EXPECT_EQ(marks[0].base_url, "http://a/");
    EXPECT_FALSE(marks[0].ruled_out);
    EXPECT_EQ(marks[0].transient_failures, 2U);
    EXPECT_TRUE(marks[1].ruled_out);
    EXPECT_EQ(marks[1].transient_failures, 0U);
    EXPECT_FALSE(marks[2].ruled_out);  // tried, nothing held against it
    EXPECT_EQ(marks[2].transient_failures, 0U);
}

TEST(MirrorChoice, UntriedMirrorInOrderGoesFirstAtOnce) {
    const auto marks = marks_after({{"http://a/", FailureKind::Transient}});
    const auto next = choose_next_mirror(kOrder, marks, "http://a/", FailureKind::Transient);
    ASSERT_TRUE(next);
    EXPECT_EQ(next->base_url, "http://b/");
    EXPECT_FALSE(next->after_backoff);
}

TEST(MirrorChoice, CurrentOrderDecidesWhichUntriedMirrorIsNext) {
    // The repository's list demoted b meanwhile: c comes before it now.
    const auto marks = marks_after({{"http://a/", FailureKind::Permanent}});
    const auto next = choose_next_mirror({"http://a/", "http://c/", "http://b/"}, marks,
                                         "http://a/", FailureKind::Permanent);
    ASSERT_TRUE(next);
    EXPECT_EQ(next->base_url, "http://c/");
    EXPECT_FALSE(next->after_backoff);
}

TEST(MirrorChoice, AllTriedGoesBackToTheLeastFailedAfterABackoff) {
    const auto marks = marks_after({{"http://a/", FailureKind::Transient},
                                    {"http://a/", FailureKind::Transient},
                                    {"http://b/", FailureKind::Transient},
                                    {"http://c/", FailureKind::Transient},
                                    {"http://b/", FailureKind::Transient}});
    const auto next = choose_next_mirror(kOrder, marks, "http://b/", FailureKind::Transient);
    ASSERT_TRUE(next);
    EXPECT_EQ(next->base_url, "http://c/");
    EXPECT_TRUE(next->after_backoff);
}

TEST(MirrorChoice, TieGoesToTheFirstInOrder) {
    const auto marks = marks_after({{"http://c/", FailureKind::Transient},
                                    {"http://b/", FailureKind::Transient},
                                    {"http://a/", FailureKind::Transient}});
    const auto next = choose_next_mirror(kOrder, marks, "http://a/", FailureKind::Transient);
    ASSERT_TRUE(next);
    EXPECT_EQ(next->base_url, "http://a/");
    EXPECT_TRUE(next->after_backoff);
}

TEST(MirrorChoice, RuledOutMirrorsAreNeverChosenAgain) {
    const auto marks = marks_after({{"http://a/", FailureKind::Transient},
                                    {"http://a/", FailureKind::Transient},
                                    {"http://a/", FailureKind::Transient},
                                    {"http://b/", FailureKind::Permanent},
                                    {"http://c/", FailureKind::Permanent}});
    const auto next = choose_next_mirror(kOrder, marks, "http://c/", FailureKind::Permanent);
    ASSERT_TRUE(next);
    EXPECT_EQ(next->base_url, "http://a/");
}

TEST(MirrorChoice, NoneLeftWhenEveryMirrorIsRuledOut) {
    const auto marks = marks_after({{"http://a/", FailureKind::Permanent},
                                    {"http://b/", FailureKind::Permanent},
                                    {"http://c/", FailureKind::Permanent}});
    EXPECT_FALSE(choose_next_mirror(kOrder, marks, "http://c/", FailureKind::Permanent));
}

TEST(MirrorChoice, RestartSameKeepsTheMirrorAndStartsAtOnce) {
    const auto marks = marks_after({{"http://b/", FailureKind::RestartSame}});
    const auto next = choose_next_mirror(kOrder, marks, "http://b/", FailureKind::RestartSame);
    ASSERT_TRUE(next);
    EXPECT_EQ(next->base_url, "http://b/");
    EXPECT_FALSE(next->after_backoff);
}

TEST(MirrorChoice, AbsoluteUrlIsRetriedOnlyAfterTransientFailures) {
    const auto transient = choose_next_mirror({}, {}, "", FailureKind::Transient);
    ASSERT_TRUE(transient);
    EXPECT_EQ(transient->base_url, "");
    EXPECT_TRUE(transient->after_backoff);

    const auto restart = choose_next_mirror({}, {}, "", FailureKind::RestartSame);
    ASSERT_TRUE(restart);
    EXPECT_FALSE(restart->after_backoff);

    EXPECT_FALSE(choose_next_mirror({}, {}, "", FailureKind::Permanent));
}

}  // namespace
}  // namespace rpmirror::download
