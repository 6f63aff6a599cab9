// On-change hooks: /bin/sh -c CMD with the job's environment, stdin /dev/null, and errors that
// name the job, the command and how it ended.
#include <pthread.h>
#include <signal.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "integration/sync/sync_harness.hpp"
#include "jobs/hooks.hpp"
#include "support/env_dump.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror {
namespace {

namespace stdfs = std::filesystem;

class Hooks : public ::testing::Test {
  protected:
    void SetUp() override {
        outcome_.job = "nightly";
        outcome_.report.repo_id = "base";
        outcome_.report.repo_dir = tmp_ / "mirror" / "base";
        outcome_.report.downloaded = 1;
    }
    test::TempDir tmp_;
    JobOutcome outcome_;
};

TEST_F(Hooks, CommandGetsTheJobsVariablesAndDevNullAsStdin) {
    // A variable of the same name in our environment is replaced, not duplicated.
    ::setenv("RPMIRROR_JOB", "stale", 1);  // NOLINT(concurrency-mt-unsafe)
    ::setenv("RPMIRROR_TEST_INHERITED", "yes", 1);
    const stdfs::path env_dump = tmp_ / "env";
    const stdfs::path stdin_target = tmp_ / "stdin";
    const std::string command = "env > '" + env_dump.string() + "'; readlink /proc/self/fd/0 > '" +
                                stdin_target.string() + "'; cat";
    const auto ran = run_change_hook(command, outcome_, tmp_ / "meta" / "base");
    ::unsetenv("RPMIRROR_JOB");
    ::unsetenv("RPMIRROR_TEST_INHERITED");

    ASSERT_TRUE(ran) << ran.error().to_string();
    const std::string dump = test::read_file(env_dump);
    EXPECT_EQ(test::variables_of(dump, {"RPMIRROR_JOB", "RPMIRROR_REPO_ID", "RPMIRROR_DESTINATION",
                                        "RPMIRROR_METADATA_DIR", "RPMIRROR_TEST_INHERITED"}),
              (std::map<std::string, std::string>{
                  {"RPMIRROR_JOB", "nightly"},
                  {"RPMIRROR_REPO_ID", "base"},
                  {"RPMIRROR_DESTINATION", (tmp_ / "mirror" / "base").string()},
                  {"RPMIRROR_METADATA_DIR", (tmp_ / "meta" / "base").string()},
                  {"RPMIRROR_TEST_INHERITED", "yes"},
              }))
        << dump;
    EXPECT_EQ(test::read_file(stdin_target), "/dev/null\n");
}

TEST_F(Hooks, RelativeDirectoriesArePassedAbsolute) {
    outcome_.report.repo_dir = "relative/base";
    const stdfs::path env_dump = tmp_ / "env";
    const auto ran = run_change_hook("env > '" + env_dump.string() + "'", outcome_, "meta");
    ASSERT_TRUE(ran) << ran.error().to_string();
    const auto variables = test::variables_of(test::read_file(env_dump));
    EXPECT_EQ(variables.at("RPMIRROR_DESTINATION"),
              (stdfs::current_path() / "relative/base").string());
    EXPECT_EQ(variables.at("RPMIRROR_METADATA_DIR"), (stdfs::current_path() / "meta").string());
}

TEST_F(Hooks, NonZeroExitIsAnErrorNamingJobCommandAndStatus) {
    const auto ran = run_change_hook("echo from the hook >&2; exit 7", outcome_, tmp_.path());
    ASSERT_FALSE(ran);
    EXPECT_EQ(ran.error().to_string(),
              "nightly: exec-on-change 'echo from the hook >&2; exit 7' failed: exit status 7");
}

TEST_F(Hooks, ShellThatCannotFindTheCommandIsExitStatus127) {
    const auto ran = run_change_hook("/nonexistent/purge-cdn", outcome_, tmp_.path());
    ASSERT_FALSE(ran);
    EXPECT_EQ(ran.error().to_string(),
              "nightly: exec-on-change '/nonexistent/purge-cdn' failed: exit status 127");
}

TEST_F(Hooks, KilledBySignalIsAnErrorNamingTheSignalEvenWhenWeBlockIt) {
    // rpmirror's CLI blocks SIGTERM in every thread; the hook must not inherit the mask (a
    // blocked SIGTERM would let `kill -TERM $$` pass and the hook exit 0).
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigset_t old_mask;
    ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &term, &old_mask), 0);
    const auto ran = run_change_hook("kill -TERM $$; exit 0", outcome_, tmp_.path());
    ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    ASSERT_FALSE(ran);
    EXPECT_EQ(ran.error().to_string(),
              "nightly: exec-on-change 'kill -TERM $$; exit 0' failed: killed by signal 15 "
              "(SIGTERM)");
}

TEST_F(Hooks, SuccessReturnsNothing) {
    EXPECT_TRUE(run_change_hook("true", outcome_, tmp_.path()));
}

}  // namespace
}  // namespace rpmirror
