// rpmirror.conf: the transfer, policy, dedupe and bucket keys of a job and of [main].
#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <string>

#include "jobs/jobs_config.hpp"
#include "jobs_config_fixture.hpp"
#include "rpmirror/jobs/jobs.hpp"
#include "unit/config/config_test_support.hpp"

namespace rpmirror {
namespace {

using test::count_warnings;
using test::job_named;
using test::JobsConfigTest;

// dedupe / dedupe-dir: the mode and the extra trees (the other jobs' mirrors, siblings under
// [main] destination, are found by the sync itself); a bad mode fails the job naming the line.
TEST_F(JobsConfigTest, ConnectionsPerFileKeysFromMainAndTheJob) {
    auto config = load(
        "[main]\ndestination = /srv/mirror\nconnections-per-file = 4\n"
        "[a]\nbaseurl = http://example.com/a/\nsegment-min-size = 16M\n"
        "[b]\nbaseurl = http://example.com/b/\nconnections_per_file = 1\n"
        "[c]\nbaseurl = http://example.com/c/\nconnections-per-file = 65\n"
        "[d]\nbaseurl = http://example.com/d/\nsegment-min-size = big\n");
    ASSERT_TRUE(config) << config.error().to_string();
    const JobConfig& a = job_named(config->jobs, "a");
    EXPECT_TRUE(a.errors.empty());
    EXPECT_EQ(a.options.connections_per_file, 4U);
    EXPECT_EQ(a.options.segment_min_size, 16U << 20);
    const JobConfig& b = job_named(config->jobs, "b");
    EXPECT_EQ(b.options.connections_per_file, 1U);
    EXPECT_EQ(b.options.segment_min_size, 64U << 20) << "64M by default";
    const JobConfig& c = job_named(config->jobs, "c");
    ASSERT_EQ(c.errors.size(), 1U);
    EXPECT_TRUE(c.errors[0].starts_with(main_file() + ":12: job 'c': connections-per-file: "
                                                      "invalid number '65' (expected 1 to 64)"))
        << c.errors[0];
    const JobConfig& d = job_named(config->jobs, "d");
    ASSERT_EQ(d.errors.size(), 1U);
    EXPECT_NE(d.errors[0].find("segment-min-size: invalid size 'big'"), std::string::npos)
        << d.errors[0];
}

// download-policy: Pulp's three names, [main]'s a default; another value, or a policy that
// leaves packages to `rpmirror serve` without the metadata it fetches them by, fails the job
// naming the key's line.
TEST_F(JobsConfigTest, DownloadPolicyKey) {
    auto config = load(
        "[main]\ndestination = /srv/mirror\ndownload-metadata = 1\n"
        "[a]\nbaseurl = http://example.com/a/\ndownload-policy = on-demand\n"
        "[b]\nbaseurl = http://example.com/b/\ndownload_policy = streamed\n"
        "[c]\nbaseurl = http://example.com/c/\n"
        "[d]\nbaseurl = http://example.com/d/\ndownload-policy = lazy\n"
        "[e]\nbaseurl = http://example.com/e/\ndownload-metadata = 0\n"
        "download-policy = on-demand\n"
        "[f]\nbaseurl = http://example.com/f/\nflatten-hrefs = 1\ndownload-policy = streamed\n");
    ASSERT_TRUE(config) << config.error().to_string();
    EXPECT_TRUE(job_named(config->jobs, "a").errors.empty());
    EXPECT_EQ(job_named(config->jobs, "a").options.download_policy, DownloadPolicy::OnDemand);
    EXPECT_EQ(job_named(config->jobs, "b").options.download_policy, DownloadPolicy::Streamed);
    EXPECT_EQ(job_named(config->jobs, "c").options.download_policy, DownloadPolicy::Immediate)
        << "immediate by default";
    const JobConfig& d = job_named(config->jobs, "d");
    ASSERT_EQ(d.errors.size(), 1U);
    EXPECT_EQ(d.errors[0], main_file() +
                               ":14: job 'd': download-policy: unknown download policy "
                               "'lazy' (expected immediate, on-demand or streamed)");
    const JobConfig& e = job_named(config->jobs, "e");
    ASSERT_EQ(e.errors.size(), 1U);
    EXPECT_TRUE(e.errors[0].starts_with(main_file() +
                                        ":18: job 'e': download-policy: on-demand needs "
                                        "--download-metadata"))
        << e.errors[0];
    const JobConfig& f = job_named(config->jobs, "f");
    ASSERT_EQ(f.errors.size(), 1U);
    EXPECT_NE(f.errors[0].find(":22: job 'f': download-policy: streamed is not combined with "),
              std::string::npos)
        << f.errors[0];
}

// Fails the test unless job `job` of `jobs` has exactly one error, holding `text`.
void expect_one_error(const std::vector<JobConfig>& jobs, const std::string& job,
                      const std::string& text) {
    const JobConfig& bad = job_named(jobs, job);
    ASSERT_EQ(bad.errors.size(), 1U) << job;
    EXPECT_NE(bad.errors[0].find(text), std::string::npos) << bad.errors[0];
}

// prefetch (the hybrid policy): newest, closure (with with-dependencies), or names/globs
// separated by commas or spaces, with download-policy = on-demand only; a bad value names the
// key's line and the value.
TEST_F(JobsConfigTest, PrefetchKey) {
    auto config = load(
        "[main]\ndestination = /srv/mirror\ndownload-metadata = 1\n"
        "download-policy = on-demand\n"
        "[a]\nbaseurl = http://example.com/a/\nprefetch = newest\n"
        "[b]\nbaseurl = http://example.com/b/\nprefetch = kernel*, glibc bash.x86_64\n"
        "[c]\nbaseurl = http://example.com/c/\n"
        "[d]\nbaseurl = http://example.com/d/\nprefetch = newest,glibc\n"
        "[e]\nbaseurl = http://example.com/e/\nprefetch = Packages/glibc\n"
        "[f]\nbaseurl = http://example.com/f/\ndownload-policy = streamed\n"
        "prefetch = newest\n"
        "[g]\nbaseurl = http://example.com/g/\nprefetch = ,\n"
        "[h]\nbaseurl = http://example.com/h/\nprefetch = closure\n"
        "[i]\nbaseurl = http://example.com/i/\npackages = bash\nwith-dependencies = 1\n"
        "prefetch = closure\n");
    ASSERT_TRUE(config) << config.error().to_string();
    const JobConfig& a = job_named(config->jobs, "a");
    EXPECT_TRUE(a.errors.empty());
    EXPECT_TRUE(a.options.prefetch.newest);
    EXPECT_TRUE(a.options.prefetch.globs.empty());
    const JobConfig& b = job_named(config->jobs, "b");
    EXPECT_TRUE(b.errors.empty());
    EXPECT_FALSE(b.options.prefetch.newest);
    EXPECT_EQ(b.options.prefetch.globs,
              (std::vector<std::string>{"kernel*", "glibc", "bash.x86_64"}));
    EXPECT_FALSE(job_named(config->jobs, "c").options.prefetch.active()) << "none by default";
    // Each bad job has exactly one error, holding `text`.
    const auto one_error = [&](const std::string& job, const std::string& text) {
        expect_one_error(config->jobs, job, text);
    };
    one_error("d", main_file() +
                       ":15: job 'd': prefetch: invalid prefetch 'newest,glibc': newest is not "
                       "combined with package names (expected newest, closure, or package names "
                       "or globs separated by commas)");
    one_error("e",
              ":18: job 'e': prefetch: invalid prefetch 'Packages/glibc': 'Packages/glibc' "
              "is no package name or glob");
    one_error("f",
              ":22: job 'f': prefetch: prefetch needs download-policy on-demand (not "
              "streamed)");
    one_error("g", "invalid prefetch ',': empty");
    one_error("h", ":28: job 'h': prefetch: closure needs with-dependencies = 1");
    const JobConfig& i = job_named(config->jobs, "i");
    EXPECT_TRUE(i.errors.empty()) << i.errors.front();
    EXPECT_TRUE(i.options.prefetch.closure);
    EXPECT_FALSE(i.options.prefetch.nevras) << "solved by the run, not when the file is read";
}

TEST_F(JobsConfigTest, DedupeKeysAndTheDestinationAsSiblings) {
    auto config = load(
        "[main]\ndestination = /srv/mirror\n"
        "[a]\nbaseurl = http://example.com/a/\ndedupe = reflink\n"
        "dedupe-dir = /srv/old /srv/other\n"
        "[b]\nbaseurl = http://example.com/b/\n"
        "[c]\nbaseurl = http://example.com/c/\ndedupe = copy\n");
    ASSERT_TRUE(config) << config.error().to_string();
    const JobConfig& a = job_named(config->jobs, "a");
    EXPECT_EQ(a.options.dedupe, DedupeMode::Reflink);
    EXPECT_EQ(a.options.dedupe_dirs,
              (std::vector<std::filesystem::path>{"/srv/old", "/srv/other"}));
    const JobConfig& b = job_named(config->jobs, "b");
    EXPECT_EQ(b.options.dedupe, DedupeMode::Hardlink) << "on by default";
    EXPECT_TRUE(b.options.dedupe_dirs.empty());
    const JobConfig& c = job_named(config->jobs, "c");
    ASSERT_EQ(c.errors.size(), 1U);
    EXPECT_TRUE(c.errors[0].starts_with(main_file() + ":11: job 'c': dedupe: invalid value "
                                                      "'copy' (expected hardlink, reflink or off)"))
        << c.errors[0];
}

TEST_F(JobsConfigTest, S3TransferKeysFromMainAndTheJobValidatedAsTheCommandLine) {
    auto config = load(
        "[main]\ndestination = s3://mirror/pub\ns3-parallel = 8\ns3-spool-size = 256M\n"
        "[a]\nbaseurl = http://example.com/a/\ns3_part_size = 16M\ns3-acl = public-read\n"
        "s3-spool-dir = /var/spool/rpmirror\n"
        "[b]\nbaseurl = http://example.com/b/\n"
        "[c]\nbaseurl = http://example.com/c/\ns3-part-size = 1M\n"
        "[d]\nbaseurl = http://example.com/d/\ns3-parallel = 65\n"
        "[e]\nbaseurl = http://example.com/e/\ns3-spool-size = lots\n"
        "[f]\nbaseurl = http://example.com/f/\ns3-part-size = 512M\n");
    ASSERT_TRUE(config) << config.error().to_string();
    const JobConfig& a = job_named(config->jobs, "a");
    EXPECT_TRUE(a.errors.empty()) << a.errors.front();
    EXPECT_EQ(a.options.s3_parallel, 8U);
    EXPECT_EQ(a.options.s3_spool_size, 256U << 20);
    EXPECT_EQ(a.options.s3_part_size, 16U << 20);
    EXPECT_EQ(a.options.s3_acl, "public-read");
    EXPECT_EQ(a.options.s3_spool_dir, "/var/spool/rpmirror");
    const JobConfig& b = job_named(config->jobs, "b");
    EXPECT_TRUE(b.errors.empty());
    EXPECT_EQ(b.options.s3_part_size, 64U << 20) << "64M by default";
    EXPECT_TRUE(b.options.s3_spool_dir.empty()) << "/dev/shm by default";
    const std::map<std::string, std::string> expected = {
        {"c", ":14: job 'c': s3-part-size: '1M' is not a size of at least 5M"},
        {"d", ":17: job 'd': s3-parallel: invalid number '65' (expected 1 to 64)"},
        {"e", ":20: job 'e': s3-spool-size: invalid size 'lots'"},
        {"f",
         ":23: job 'f': s3-part-size: s3-spool-size (268435456 bytes) is below "
         "s3-part-size (536870912 bytes)"},
    };
    for (const auto& [name, error] : expected) {
        const JobConfig& job = job_named(config->jobs, name);
        ASSERT_EQ(job.errors.size(), 1U) << name;
        EXPECT_TRUE(job.errors[0].starts_with(main_file() + error)) << job.errors[0];
    }
}

TEST_F(JobsConfigTest, SnapshotDirOfAnotherKindThanTheDestinationIsALoadErrorNamingTheJob) {
    auto config = load(
        "[main]\ndestination = /srv/mirror\n"
        "[local]\nbaseurl = http://example.com/a/\nsnapshot = 1\n"
        "[bucket]\nbaseurl = http://example.com/b/\ndestination = s3://mirror/pub/b\n"
        "snapshot = 1\nsnapshot-dir = /srv/snapshots\n");
    ASSERT_FALSE(config);
    const std::string message = config.error().to_string();
    EXPECT_NE(message.find(main_file()), std::string::npos) << message;
    EXPECT_NE(message.find("line 9: job 'bucket': snapshot-dir /srv/snapshots and destination "
                           "s3://mirror/pub/b must both be s3:// or both local"),
              std::string::npos)
        << message;
    // In its store, a bucket's snapshots are fine.
    EXPECT_TRUE(
        load("[bucket]\nbaseurl = http://example.com/b/\ndestination = s3://mirror/pub/b\n"
             "snapshot = 1\nsnapshot-dir = s3://mirror/snapshots\n"));
}

// cache-max-size: a size for on-demand jobs; in [main] the default of the on-demand jobs only
// (an immediate or streamed job ignores it), in a job of another policy an error naming the
// line and the value, as is a bad size or 0.
TEST_F(JobsConfigTest, CacheMaxSizeKey) {
    auto config = load(
        "[main]\ndestination = /srv/mirror\ndownload-metadata = 1\ncache-max-size = 10G\n"
        "[a]\nbaseurl = http://example.com/a/\ndownload-policy = on-demand\n"
        "[b]\nbaseurl = http://example.com/b/\ndownload-policy = on-demand\n"
        "cache_max_size = 500M\n"
        "[c]\nbaseurl = http://example.com/c/\n"
        "[d]\nbaseurl = http://example.com/d/\ncache-max-size = 1G\n"
        "[e]\nbaseurl = http://example.com/e/\ndownload-policy = streamed\n"
        "cache-max-size = 2G\n"
        "[f]\nbaseurl = http://example.com/f/\ndownload-policy = on-demand\n"
        "cache-max-size = lots\n"
        "[g]\nbaseurl = http://example.com/g/\ndownload-policy = on-demand\n"
        "cache-max-size = 0\n");
    ASSERT_TRUE(config) << config.error().to_string();
    const JobConfig& a = job_named(config->jobs, "a");
    EXPECT_TRUE(a.errors.empty());
    EXPECT_EQ(a.options.cache_max_size, 10ULL << 30) << "[main]'s";
    EXPECT_EQ(job_named(config->jobs, "b").options.cache_max_size, 500ULL << 20);
    const JobConfig& c = job_named(config->jobs, "c");
    EXPECT_TRUE(c.errors.empty()) << "[main]'s leaves an immediate job alone: " << c.errors[0];
    EXPECT_EQ(c.options.cache_max_size, 0U);
    const auto one_error = [&](const std::string& job, const std::string& text) {
        expect_one_error(config->jobs, job, text);
    };
    one_error("d", main_file() +
                       ":16: job 'd': cache-max-size: '1G' needs download-policy on-demand (not "
                       "immediate)");
    one_error("e",
              ":20: job 'e': cache-max-size: '2G' needs download-policy on-demand (not "
              "streamed)");
    one_error("f", ":24: job 'f': cache-max-size: invalid size 'lots'");
    one_error("g", ":28: job 'g': cache-max-size: invalid size '0'");
}

// prefetch in [main]: the default of the on-demand jobs; an immediate job inheriting it runs as
// ever instead of failing.
TEST_F(JobsConfigTest, PrefetchInMainLeavesOtherPoliciesAlone) {
    auto config = load(
        "[main]\ndestination = /srv/mirror\ndownload-metadata = 1\nprefetch = newest\n"
        "[a]\nbaseurl = http://example.com/a/\ndownload-policy = on-demand\n"
        "[b]\nbaseurl = http://example.com/b/\n");
    ASSERT_TRUE(config) << config.error().to_string();
    const JobConfig& a = job_named(config->jobs, "a");
    EXPECT_TRUE(a.errors.empty());
    EXPECT_TRUE(a.options.prefetch.newest);
    const JobConfig& b = job_named(config->jobs, "b");
    EXPECT_TRUE(b.errors.empty()) << b.errors[0];
    EXPECT_FALSE(b.options.prefetch.active());
}

}  // namespace
}  // namespace rpmirror
