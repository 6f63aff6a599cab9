// Several Downloaders, each on its own thread, sharing one ConnectionBudget (as the jobs of
// `rpmirror sync --config-file` do): against real nginx and against the counting test server
// (tests/integration/fault_server.py logs how many requests it was answering at once), the
// budget's and the server's peaks stay within the limits, and every file verifies.
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "download_test_support.hpp"
#include "support/http_server.hpp"
#include "support/nginx.hpp"

namespace rpmirror {
namespace {

using test::content_bytes;
using test::make_request;
using test::read_all;

struct Job {
    std::vector<std::pair<std::string, std::string>> files;  // href, body
    std::vector<DownloadRequest> requests;
    std::filesystem::path destination;
    std::optional<Result<DownloadReport>> report;
};

class SharedBudgetDownloadTest : public ::testing::Test {
  protected:
    // Writes `count` files of varied sizes to srv/<name>/ and returns them as a job for
    // `mirrors` (base URLs ending in "/").
    Job make_job(const std::string& name, int count, std::vector<std::string> mirrors) {
        Job job;
        auto list = std::make_shared<MirrorList>(std::move(mirrors));
        for (int index = 0; index < count; ++index) {
            const std::string href = name + "/pkg-" + std::to_string(index) + ".rpm";
            const std::size_t size = 2000 + (static_cast<std::size_t>(index) * 7'919) % 200'000;
            std::string body = content_bytes(size, std::hash<std::string>{}(href));
            const auto path = dir_.path() / "srv" / href;
            std::filesystem::create_directories(path.parent_path());
            std::ofstream(path, std::ios::binary) << body;
            job.requests.push_back(make_request(list, href, body));
            job.files.emplace_back(href, std::move(body));
        }
        job.destination = dir_.path() / "dest" / name;
        return job;
    }

    // Returns three jobs of `count` files each: the first and the third from `first_base`, the
    // second from `second_base`.
    std::vector<Job> three_jobs(int count, const std::string& first_base,
                                const std::string& second_base) {
        std::vector<Job> jobs;
        jobs.push_back(make_job("one", count, {first_base}));
        jobs.push_back(make_job("two", count, {second_base}));
        jobs.push_back(make_job("three", count, {first_base}));
        return jobs;
    }

    // Runs every job on its own thread with its own Downloader, all sharing `budget`.
    static void run_concurrently(std::vector<Job>& jobs,
                                 const std::shared_ptr<ConnectionBudget>& budget,
                                 unsigned max_parallel) {
        std::vector<std::thread> threads;
        for (auto& job : jobs) {
            threads.emplace_back([&job, &budget, max_parallel] {
                DownloadOptions options = test::fast_options(1);
                options.max_parallel = max_parallel;
                options.budget = budget;
                Downloader downloader(options);
                job.report = downloader.run(job.destination, job.requests);
            });
        }
        for (auto& thread : threads) {
            thread.join();
        }
    }

    static void expect_all_verified(const std::vector<Job>& jobs) {
        for (const auto& job : jobs) {
            ASSERT_TRUE(job.report.has_value());
            ASSERT_TRUE(job.report->has_value()) << job.report->error().to_string();
            const DownloadReport& report = **job.report;
            EXPECT_TRUE(report.ok());
            EXPECT_EQ(report.downloaded, job.files.size());
            for (const auto& [href, body] : job.files) {
                EXPECT_EQ(read_all(job.destination / href), body) << href;
            }
        }
    }

    // Returns the most requests the server was answering at once.
    static int peak_in_flight(const test::FaultServer& server) {
        int peak = 0;
        for (const auto& request : server.requests()) {
            peak = std::max(peak, request.in_flight);
        }
        return peak;
    }

    test::TempDir dir_;
};

TEST_F(SharedBudgetDownloadTest, ThreeDownloadersOnTwoNginxHostsStayWithinTheBudget) {
    if (!test::nginx_available()) {
        GTEST_FAIL() << test::kNginxMissing;
    }
    std::filesystem::create_directories(dir_.path() / "srv");
    test::NginxServer first(dir_.path() / "srv", dir_.path() / "nginx-1");
    test::NginxServer second(dir_.path() / "srv", dir_.path() / "nginx-2");
    std::vector<Job> jobs = three_jobs(40, first.url("/"), second.url("/"));
    auto budget = std::make_shared<ConnectionBudget>(5, 3);
    run_concurrently(jobs, budget, 8);
    expect_all_verified(jobs);
    const auto stats = budget->stats();
    EXPECT_LE(stats.peak_in_use, 5U);
    EXPECT_LE(stats.peak_per_host, 3U);
    EXPECT_EQ(stats.in_use, 0U);
    EXPECT_EQ(stats.clients, 0U);
    EXPECT_EQ(stats.granted, 120U);  // one token per attempt, each file fetched once
    EXPECT_EQ(first.access_log(80).size(), 80U);
    EXPECT_EQ(second.access_log(40).size(), 40U);
}

TEST_F(SharedBudgetDownloadTest, TheServerNeverAnswersMoreRequestsThanTheBudget) {
    std::filesystem::create_directories(dir_.path() / "srv");
    std::vector<Job> jobs;
    test::FaultServer server(dir_.path() / "srv", nlohmann::json::object(), dir_.path());
    for (const char* name : {"a", "b", "c"}) {
        jobs.push_back(make_job(name, 30, {server.url("/")}));
    }
    auto budget = std::make_shared<ConnectionBudget>(4);
    run_concurrently(jobs, budget, 6);  // each alone would run 6 at once
    expect_all_verified(jobs);
    EXPECT_LE(budget->stats().peak_in_use, 4U);
    EXPECT_LE(peak_in_flight(server), 4);
    EXPECT_EQ(server.requests().size(), 90U);
}

TEST_F(SharedBudgetDownloadTest, PerHostLimitHoldsAcrossDownloaders) {
    std::filesystem::create_directories(dir_.path() / "srv");
    std::filesystem::create_directories(dir_.path() / "log-1");
    std::filesystem::create_directories(dir_.path() / "log-2");
    test::FaultServer first(dir_.path() / "srv", nlohmann::json::object(), dir_.path() / "log-1");
    test::FaultServer second(dir_.path() / "srv", nlohmann::json::object(), dir_.path() / "log-2");
    std::vector<Job> jobs = three_jobs(25, first.url("/"), second.url("/"));
    auto budget = std::make_shared<ConnectionBudget>(16, 2);
    run_concurrently(jobs, budget, 8);
    expect_all_verified(jobs);
    EXPECT_LE(budget->stats().peak_per_host, 2U);
    EXPECT_LE(peak_in_flight(first), 2);
    EXPECT_LE(peak_in_flight(second), 2);
}

TEST_F(SharedBudgetDownloadTest, EveryAttemptTakesAndReturnsItsToken) {
    // Failures, retries and a failover to another mirror each take a token for their attempt and
    // give it back: nothing stays held, and the grants count the attempts.
    std::filesystem::create_directories(dir_.path() / "srv");
    const nlohmann::json script = {
        {"paths",
         {{"/r/pkg-0.rpm", {{{"status", 503}}, {{"status", 503}}, nlohmann::json::object()}},
          {"/r/pkg-1.rpm", {{{"status", 404}}}},
          {"/r/pkg-2.rpm", {{{"corrupt", true}}, nlohmann::json::object()}}}}};
    test::FaultServer server(dir_.path() / "srv", script, dir_.path());
    std::vector<Job> jobs;
    jobs.push_back(make_job("r", 6, {server.url("/")}));
    auto budget = std::make_shared<ConnectionBudget>(2);
    DownloadOptions options = test::fast_options(1);
    options.budget = budget;
    Downloader downloader(options);
    auto report = downloader.run(jobs[0].destination, jobs[0].requests);
    ASSERT_TRUE(report.has_value());
    EXPECT_EQ(report->failed, 2U);  // 404, and the corrupt copy on the only mirror
    EXPECT_EQ(report->downloaded, 4U);
    std::size_t attempts = 0;
    for (const auto& file : report->files) {
        attempts += file.attempts.size();
    }
    const auto stats = budget->stats();
    EXPECT_EQ(stats.granted, attempts);
    EXPECT_EQ(stats.granted, server.requests().size());
    EXPECT_EQ(stats.in_use, 0U);
    EXPECT_LE(stats.peak_in_use, 2U);
}

}  // namespace
}  // namespace rpmirror
