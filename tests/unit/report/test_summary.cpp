// The one-line summary of a repository's sync: every selected package accounted for.
#include <gtest/gtest.h>

#include "rpmirror/report/report.hpp"
#include "rpmirror/sync/sync.hpp"

namespace rpmirror {
namespace {

// A run stopped by a full disk: two packages failed, six were never started. The summary says
// so instead of counts that do not add up to what was selected.
TEST(Summary, PackagesNeverStartedAreCounted) {
    RepoSyncReport report;
    report.repo_id = "base";
    report.upstream_packages = 8;
    report.selected = 8;
    report.failures = {{"a-1-1.noarch", "No space left on device", {}},
                       {"b-1-1.noarch", "No space left on device", {}}};
    EXPECT_NE(format_summary(report).find("failed 2, not started 6 of 8 selected"),
              std::string::npos)
        << format_summary(report);

    report.failures.clear();
    report.downloaded = 5;
    report.kept = 3;
    EXPECT_EQ(format_summary(report).find("not started"), std::string::npos)
        << format_summary(report);
}

}  // namespace
}  // namespace rpmirror
