// The JSON report of a job run (format_jobs_json_report): the repositories' report, each entry
// naming its job and errors, and the jobs' tally.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "rpmirror/report/report.hpp"

namespace rpmirror {
namespace {

TEST(JobsJson, EachEntryNamesItsJobAndErrorsAndTheTallyCloses) {
    JobOutcome synced;
    synced.job = "base";
    synced.report.repo_id = "base";
    synced.report.metadata_published = true;
    JobOutcome hook_failed = synced;
    hook_failed.job = "updates";
    hook_failed.report.repo_id = "updates";
    hook_failed.errors = {"updates: exec-on-change 'false' failed: exit status 1"};
    JobOutcome not_run;
    not_run.job = "extras";
    not_run.errors = {"rpmirror.conf:9: job 'extras': arch: 'x' is not an architecture"};
    const std::vector<JobOutcome> outcomes{synced, hook_failed, not_run};

    const std::string text = format_jobs_json_report(outcomes, 1);
    ASSERT_TRUE(text.ends_with("}\n"));
    const nlohmann::json json = nlohmann::json::parse(text);
    EXPECT_EQ(json["exit_code"], 1);
    const nlohmann::json& entries = json["repositories"];
    ASSERT_EQ(entries.size(), 3U);
    EXPECT_EQ(entries[0]["job"], "base");
    EXPECT_EQ(entries[0]["errors"], nlohmann::json::array());
    EXPECT_TRUE(entries[0]["error"].is_null());
    EXPECT_EQ(entries[1]["errors"], nlohmann::json(hook_failed.errors));
    // The job's error fails an entry whose report alone was fine.
    EXPECT_EQ(entries[1]["error"], hook_failed.errors.front());
    EXPECT_EQ(entries[2]["repo"], "extras");  // never ran: named by its job
    EXPECT_EQ(entries[2]["error"], not_run.errors.front());
    EXPECT_EQ(json["jobs"],
              (nlohmann::json{{"succeeded", 1}, {"changed", 1}, {"unchanged", 0}, {"failed", 2}}));
    // The same facts as a repository run's report, entry for entry.
    const nlohmann::json plain =
        nlohmann::json::parse(format_json_report(std::vector{synced.report}, 1));
    nlohmann::json first = entries[0];
    first.erase("job");
    first.erase("errors");
    EXPECT_EQ(first, plain["repositories"][0]);
}

}  // namespace
}  // namespace rpmirror
