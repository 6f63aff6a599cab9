// Trees of a jobs file that may not overlap (jobs/overlap.hpp): destinations, S3 prefixes,
// snapshot-dir; both jobs of a pair fail, each error naming both jobs and both lines.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "jobs_config_fixture.hpp"

namespace rpmirror {
namespace {

using test::job_named;
using test::JobsConfigTest;

// Two owners of one tree: both jobs fail (whichever ran would remove the other's packages with
// delete = 1), each error naming both jobs and both lines.
TEST_F(JobsConfigTest, TwoJobsOneDestinationFailBothNamingBothLines) {
    auto config = load(
        "[main]\ndestination = /srv\n"
        "[a]\nbaseurl = http://a/\ndestination = /srv/x\n"
        "[b]\nbaseurl = http://b/\ndestination = /srv/x/\n"
        "[x]\nbaseurl = http://c/\n"
        "[y]\nbaseurl = http://d/\n");
    ASSERT_TRUE(config) << config.error().to_string();
    const JobConfig& b = job_named(config->jobs, "b");
    ASSERT_FALSE(b.errors.empty());
    EXPECT_EQ(b.errors[0], main_file() +
                               ":8: job 'b': destination: /srv/x (repository directory "
                               "of job 'b', " +
                               main_file() +
                               ":8) is the same directory as /srv/x (repository "
                               "directory of job 'a', " +
                               main_file() + ":5); refused: one tree cannot have two owners");
    const JobConfig& a = job_named(config->jobs, "a");
    ASSERT_FALSE(a.errors.empty());
    EXPECT_TRUE(a.errors[0].starts_with(main_file() + ":5: job 'a': destination: /srv/x "
                                                      "(repository directory of job 'b'"))
        << a.errors[0];
    // [x] goes to /srv/x through the base destination: the same directory; its error names its
    // section's line.
    const JobConfig& x = job_named(config->jobs, "x");
    ASSERT_FALSE(x.errors.empty());
    EXPECT_TRUE(x.errors[0].starts_with(main_file() + ":9: job 'x': destination: ")) << x.errors[0];
    EXPECT_TRUE(job_named(config->jobs, "y").errors.empty());
}

TEST_F(JobsConfigTest, NestedDestinationsFailBothJobsInEitherOrder) {
    auto config = load(
        "[a]\nbaseurl = http://a/\ndestination = /srv/m\ndelete = 1\n"
        "[b]\nbaseurl = http://b/\ndestination = /srv/m/updates\n"
        "[c]\nbaseurl = http://c/\ndestination = /srv/n/sub\n"
        "[d]\nbaseurl = http://d/\ndestination = /srv/n\nenabled = 0\n"
        "[e]\nbaseurl = http://e/\ndestination = /srv/mx\n");
    ASSERT_TRUE(config) << config.error().to_string();
    const std::string file = main_file();
    EXPECT_EQ(job_named(config->jobs, "b").errors,
              std::vector<std::string>{
                  file +
                  ":7: job 'b': destination: /srv/m/updates (repository directory of job "
                  "'b', " +
                  file + ":7) is inside /srv/m (repository directory of job 'a', " + file +
                  ":3); refused: the repository's --delete removes every package beneath its "
                  "directory that its own metadata does not list"});
    ASSERT_EQ(job_named(config->jobs, "a").errors.size(), 1U);
    EXPECT_TRUE(
        job_named(config->jobs, "a")
            .errors[0]
            .starts_with(
                file +
                ":3: job 'a': destination: /srv/m/updates (repository directory of job 'b', " +
                file + ":7) is inside /srv/m"))
        << job_named(config->jobs, "a").errors[0];
    // A disabled job's tree is there all the same.
    EXPECT_EQ(job_named(config->jobs, "c").errors.size(), 1U);
    EXPECT_EQ(job_named(config->jobs, "d").errors.size(), 1U);
    EXPECT_TRUE(job_named(config->jobs, "e").errors.empty()) << "/srv/mx is beside /srv/m";
}

TEST_F(JobsConfigTest, NestedS3PrefixesAreRefusedAtLoadAndSiblingsWithACommonStartAreNot) {
    auto config = load(
        "[main]\ns3-endpoint = http://127.0.0.1:1\n"
        "[a]\nbaseurl = http://a/\ndestination = s3://bucket/m\ndelete = 1\n"
        "[b]\nbaseurl = http://b/\ndestination = s3://bucket/m/updates/\n"
        "[c]\nbaseurl = http://c/\ndestination = s3://bucket/mx\n"
        "[d]\nbaseurl = http://d/\ndestination = s3://other/m\n");
    ASSERT_TRUE(config) << config.error().to_string();
    const std::string file = main_file();
    ASSERT_EQ(job_named(config->jobs, "b").errors.size(), 1U);
    EXPECT_EQ(job_named(config->jobs, "b").errors[0],
              file +
                  ":9: job 'b': destination: s3://bucket/m/updates/ (repository directory of "
                  "job 'b', " +
                  file + ":9) is under s3://bucket/m (repository directory of job 'a', " + file +
                  ":5); refused: the repository's --delete removes every package beneath its "
                  "directory that its own metadata does not list");
    EXPECT_EQ(job_named(config->jobs, "a").errors.size(), 1U);
    EXPECT_TRUE(job_named(config->jobs, "c").errors.empty());
    EXPECT_TRUE(job_named(config->jobs, "d").errors.empty());
}

// The jobs key snapshot-dir: a job's snapshots inside its own or another job's destination.
TEST_F(JobsConfigTest, SnapshotTreesInsideADestinationFailTheJobNamingTheKeyLine) {
    auto config = load(
        "[main]\ndestination = /srv/mirror\n"
        "[small]\nbaseurl = http://a/\ndestination = /srv/small\nsnapshot = 1\n"
        "snapshot-dir = /srv/small/\n"
        "[big]\nbaseurl = http://b/\ndelete = 1\n"
        "[other]\nbaseurl = http://c/\ndestination = /srv/o/other\nsnapshot = 1\n"
        "snapshot-dir = /srv/mirror/big\n"
        "[fine]\nbaseurl = http://d/\nsnapshot = 1\n");
    ASSERT_TRUE(config) << config.error().to_string();
    const std::string file = main_file();
    const JobConfig& small = job_named(config->jobs, "small");
    ASSERT_EQ(small.errors.size(), 2U) << "the snapshot tree and the published tree";
    EXPECT_EQ(small.errors[0],
              file +
                  ":7: job 'small': snapshot-dir: /srv/small/snapshots (snapshot tree of job "
                  "'small', " +
                  file + ":7) is inside /srv/small (repository directory of job 'small', " + file +
                  ":5); refused: the repository's --delete removes every package beneath its "
                  "directory that its own metadata does not list");
    const JobConfig& other = job_named(config->jobs, "other");
    ASSERT_EQ(other.errors.size(), 2U);
    EXPECT_TRUE(other.errors[0].starts_with(file + ":15: job 'other': snapshot-dir: "
                                                   "/srv/mirror/big/snapshots"))
        << other.errors[0];
    const JobConfig& big = job_named(config->jobs, "big");
    ASSERT_EQ(big.errors.size(), 2U);
    EXPECT_TRUE(big.errors[0].starts_with(file +
                                          ":8: job 'big': destination: "
                                          "/srv/mirror/big/snapshots (snapshot tree of job "
                                          "'other', " +
                                          file + ":15) is inside /srv/mirror/big"))
        << big.errors[0];
    // Snapshots beside the mirrors (the default: the directory above the destination).
    EXPECT_TRUE(job_named(config->jobs, "fine").errors.empty())
        << job_named(config->jobs, "fine").errors[0];
}

}  // namespace
}  // namespace rpmirror
