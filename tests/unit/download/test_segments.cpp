// One large file fetched as several byte ranges at once (DownloadOptions::connections_per_file)
// from a real nginx: the ranges cover the file exactly, are spread over the mirrors, a failed
// range is retried alone on another mirror, the whole file is verified once, and a server that
// answers a range with the whole file makes the download fall back to one connection.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <span>
#include <stop_token>
#include <utility>
#include <vector>

#include "checksum/hasher.hpp"
#include "download_test_support.hpp"
#include "support/nginx.hpp"

namespace rpmirror {
namespace {

using test::content_bytes;
using test::make_request;
using test::read_all;

// 4 MiB: 4 ranges of 1 MiB, the smallest range the downloader makes (kMinRangeBytes). Not
// larger: under ThreadSanitizer every byte written, hashed and compared costs.
constexpr std::size_t kFileSize = 4U << 20;
const std::string kHref = "images/big.img";

// Returns the [first, last] byte ranges of the ranged requests in `log` with `status`, sorted.
std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges_in(
    const std::vector<nlohmann::json>& log, int status) {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
    for (const auto& entry : log) {
        const std::string range = entry["range"].get<std::string>();
        if (range.empty() || entry["status"].get<int>() != status) {
            continue;
        }
        EXPECT_EQ(range.rfind("bytes=", 0), 0U) << range;
        const auto dash = range.find('-');
        ranges.emplace_back(std::stoull(range.substr(6, dash - 6)),
                            std::stoull(range.substr(dash + 1)));
    }
    std::sort(ranges.begin(), ranges.end());
    return ranges;
}

// Asserts that `ranges` cover [0, size) exactly: no gap, no overlap.
void expect_exact_cover(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& ranges,
                        std::uint64_t size) {
    std::uint64_t next = 0;
    for (const auto& [first, last] : ranges) {
        EXPECT_EQ(first, next);
        EXPECT_GE(last, first);
        next = last + 1;
    }
    EXPECT_EQ(next, size);
}

std::string describe(const FileResult& file) {
    std::string all = std::string(file_status_name(file.status)) + ":";
    for (const auto& attempt : file.attempts) {
        all += " [" + attempt.url + " @" + std::to_string(attempt.range_start) + " " +
               attempt.outcome + "]";
    }
    if (file.error) {
        all += " error: " + file.error->to_string();
    }
    return all;
}

class SegmentedDownloadTest : public ::testing::TestWithParam<unsigned> {
  protected:
    void SetUp() override {
        if (!test::nginx_available()) {
            GTEST_FAIL() << test::kNginxMissing;
        }
        body_ = content_bytes(kFileSize, 42);
        const auto path = dir_.path() / "srv" / kHref;
        std::filesystem::create_directories(path.parent_path());
        std::ofstream(path, std::ios::binary) << body_;
    }

    // Options for 4 connections per file from 1 MiB on; io_threads from the test's parameter.
    DownloadOptions options() const {
        DownloadOptions options = test::fast_options(GetParam());
        options.connections_per_file = 4;
        options.segment_min_size = 1U << 20;
        return options;
    }

    test::TempDir dir_;
    std::string body_;
};

TEST_P(SegmentedDownloadTest, RangesCoverTheFileExactlyAndItIsVerifiedAsOne) {
    test::NginxServer nginx(dir_.path() / "srv", dir_.path() / "nginx");
    auto mirrors = std::make_shared<MirrorList>(std::vector<std::string>{nginx.url("/")});
    const std::vector<DownloadRequest> requests{make_request(mirrors, kHref, body_)};
    auto report = Downloader(options()).run(dir_.path() / "dest", requests);
    ASSERT_TRUE(report.has_value());
    ASSERT_TRUE(report->ok()) << describe(report->files[0]);
    EXPECT_EQ(report->files[0].status, FileStatus::Downloaded);
    EXPECT_EQ(report->files[0].segments, 4U);
    EXPECT_EQ(report->bytes_received, kFileSize);
    EXPECT_EQ(read_all(dir_.path() / "dest" / kHref), body_);
    EXPECT_FALSE(std::filesystem::exists(dir_.path() / "dest/images" / part_file_name("big.img")));

    const auto log = nginx.access_log(4);
    ASSERT_EQ(log.size(), 4U);
    const auto ranges = ranges_in(log, 206);
    ASSERT_EQ(ranges.size(), 4U);
    expect_exact_cover(ranges, kFileSize);
    // The checksum cache was written for the published file, as for one-connection downloads
    // (believed once a record vouches for the file: CacheTrust).
    struct stat st {};
    ASSERT_EQ(::stat((dir_.path() / "dest" / kHref).c_str(), &st), 0);
    auto trust = std::make_shared<CacheTrust>();
    trust->vouch(st.st_ino, static_cast<std::uint64_t>(st.st_size),
                 std::int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec,
                 std::int64_t{st.st_ctim.tv_sec} * 1'000'000'000 + st.st_ctim.tv_nsec);
    HashOptions vouched;
    vouched.trust = std::move(trust);
    auto cached = hash_file(dir_.path() / "dest" / kHref, ChecksumType::Sha256, vouched);
    ASSERT_TRUE(cached.has_value());
    EXPECT_TRUE(cached->from_cache);
    EXPECT_EQ(cached->hex, requests[0].expected_digest);
}

TEST_P(SegmentedDownloadTest, SmallerFilesUseOneConnection) {
    test::NginxServer nginx(dir_.path() / "srv", dir_.path() / "nginx");
    auto mirrors = std::make_shared<MirrorList>(std::vector<std::string>{nginx.url("/")});
    const std::vector<DownloadRequest> requests{make_request(mirrors, kHref, body_)};
    DownloadOptions below = options();
    below.segment_min_size = kFileSize + 1;
    auto report = Downloader(below).run(dir_.path() / "dest", requests);
    ASSERT_TRUE(report.has_value());
    ASSERT_TRUE(report->ok()) << describe(report->files[0]);
    EXPECT_EQ(report->files[0].segments, 0U);
    const auto log = nginx.access_log(1);
    ASSERT_EQ(log.size(), 1U);
    EXPECT_EQ(log[0]["range"], "");
    EXPECT_EQ(log[0]["status"], 200);
}

TEST_P(SegmentedDownloadTest, AMismatchingDigestFailsTheFileAndLeavesNothing) {
    test::NginxServer nginx(dir_.path() / "srv", dir_.path() / "nginx");
    auto mirrors = std::make_shared<MirrorList>(std::vector<std::string>{nginx.url("/")});
    std::vector<DownloadRequest> requests{make_request(mirrors, kHref, body_)};
    requests[0].expected_digest = hash_bytes(ChecksumType::Sha256, std::string_view("other"));
    auto report = Downloader(options()).run(dir_.path() / "dest", requests);
    ASSERT_TRUE(report.has_value());
    const FileResult& file = report->files[0];
    ASSERT_EQ(file.status, FileStatus::Failed) << describe(file);
    ASSERT_TRUE(file.error.has_value());
    EXPECT_EQ(file.error->code, ErrorCode::Corrupt);
    EXPECT_NE(file.error->message.find("sha256 mismatch"), std::string::npos)
        << file.error->message;
    EXPECT_NE(file.error->subject.find(kHref), std::string::npos) << file.error->subject;
    EXPECT_FALSE(std::filesystem::exists(dir_.path() / "dest" / kHref));
    EXPECT_FALSE(std::filesystem::exists(dir_.path() / "dest/images" / part_file_name("big.img")));
    // The only mirror is ruled out after the whole file failed: its 4 ranges, nothing more.
    const auto log = nginx.access_log(4);
    ASSERT_EQ(log.size(), 4U);
    expect_exact_cover(ranges_in(log, 206), kFileSize);
}

TEST_P(SegmentedDownloadTest, TwoMirrorsShareTheRanges) {
    test::NginxServer first(dir_.path() / "srv", dir_.path() / "nginx1");
    test::NginxServer second(dir_.path() / "srv", dir_.path() / "nginx2");
    auto mirrors =
        std::make_shared<MirrorList>(std::vector<std::string>{first.url("/"), second.url("/")});
    const std::vector<DownloadRequest> requests{make_request(mirrors, kHref, body_)};
    auto report = Downloader(options()).run(dir_.path() / "dest", requests);
    ASSERT_TRUE(report.has_value());
    ASSERT_TRUE(report->ok()) << describe(report->files[0]);
    EXPECT_EQ(read_all(dir_.path() / "dest" / kHref), body_);
    const auto first_log = first.access_log(2);
    const auto second_log = second.access_log(2);
    auto ranges = ranges_in(first_log, 206);
    const auto second_ranges = ranges_in(second_log, 206);
    EXPECT_EQ(ranges.size(), 2U);
    EXPECT_EQ(second_ranges.size(), 2U);
    EXPECT_EQ(first_log.size() + second_log.size(), 4U);
    ranges.insert(ranges.end(), second_ranges.begin(), second_ranges.end());
    std::sort(ranges.begin(), ranges.end());
    expect_exact_cover(ranges, kFileSize);
}

TEST_P(SegmentedDownloadTest, AFailedRangeIsRetriedAloneOnAnotherMirror) {
    test::NginxServer nginx(dir_.path() / "srv", dir_.path() / "nginx");
    // Nothing listens on the first mirror: its ranges are refused and go to the second.
    const std::string dead = "http://127.0.0.1:" + std::to_string(test::pick_free_port()) + "/";
    auto mirrors = std::make_shared<MirrorList>(std::vector<std::string>{dead, nginx.url("/")});
    const std::vector<DownloadRequest> requests{make_request(mirrors, kHref, body_)};
    auto report = Downloader(options()).run(dir_.path() / "dest", requests);
    ASSERT_TRUE(report.has_value());
    ASSERT_TRUE(report->ok()) << describe(report->files[0]);
    EXPECT_EQ(read_all(dir_.path() / "dest" / kHref), body_);
    EXPECT_EQ(report->retries, 2U);  // the two ranges the dead mirror had, once each
    EXPECT_EQ(report->bytes_received, kFileSize);
    const auto log = nginx.access_log(4);
    ASSERT_EQ(log.size(), 4U);
    expect_exact_cover(ranges_in(log, 206), kFileSize);
}

TEST_P(SegmentedDownloadTest, AServerThatIgnoresRangeMakesTheFileFallBackToOneConnection) {
    test::NginxOptions no_ranges;
    no_ranges.extra_server_config = "max_ranges 0;";  // nginx answers 200 to every Range
    test::NginxServer nginx(dir_.path() / "srv", dir_.path() / "nginx", no_ranges);
    auto mirrors = std::make_shared<MirrorList>(std::vector<std::string>{nginx.url("/")});
    const std::vector<DownloadRequest> requests{make_request(mirrors, kHref, body_)};
    auto report = Downloader(options()).run(dir_.path() / "dest", requests);
    ASSERT_TRUE(report.has_value());
    const FileResult& file = report->files[0];
    ASSERT_TRUE(report->ok()) << describe(file);
    EXPECT_EQ(read_all(dir_.path() / "dest" / kHref), body_);
    EXPECT_TRUE(std::any_of(file.attempts.begin(), file.attempts.end(), [](const auto& attempt) {
        return attempt.outcome.find("200 instead of 206") != std::string::npos &&
               attempt.outcome.find("falling back to one connection") != std::string::npos;
    })) << describe(file);
    // One whole-file request delivered the file; no range was answered with 206.
    const auto log = nginx.access_log(2);
    EXPECT_TRUE(ranges_in(log, 206).empty());
    const auto whole = std::count_if(log.begin(), log.end(), [](const nlohmann::json& entry) {
        return entry["range"] == "" && entry["bytes"].get<std::uint64_t>() == kFileSize;
    });
    EXPECT_EQ(whole, 1);
}

// Stops the run once some bytes arrived (the progress callback runs on the loop thread).
class StopOnBytes : public ProgressSink {
  public:
    explicit StopOnBytes(std::stop_source& stop) : stop_(stop) {}
    void progress(std::uint64_t bytes_done, std::uint64_t) override {
        if (bytes_done > 0) {
            stop_.request_stop();
        }
    }

  private:
    std::stop_source& stop_;
};

TEST_P(SegmentedDownloadTest, AStoppedFileKeepsTheBytesBeforeItsFirstGapAndResumes) {
    // /slow/ is capped (each 1 MiB range takes 4 s) so that the stop comes long before the end.
    test::NginxOptions slow;
    slow.extra_server_config =
        "location /slow/ { limit_rate 256k; alias " + (dir_.path() / "srv").string() + "/; }";
    test::NginxServer nginx(dir_.path() / "srv", dir_.path() / "nginx", slow);
    auto slow_mirrors = std::make_shared<MirrorList>(std::vector<std::string>{nginx.url("/slow/")});
    const std::vector<DownloadRequest> first{make_request(slow_mirrors, kHref, body_)};
    std::stop_source stop;
    StopOnBytes stopper(stop);
    auto stopped =
        Downloader(options()).run(dir_.path() / "dest", first, &stopper, stop.get_token());
    ASSERT_TRUE(stopped.has_value());
    ASSERT_EQ(stopped->files[0].status, FileStatus::Interrupted) << describe(stopped->files[0]);
    EXPECT_EQ(stopped->files[0].segments, 4U);
    const auto part = dir_.path() / "dest/images" / part_file_name("big.img");
    const bool kept = std::filesystem::exists(part);
    if (kept) {
        const std::string prefix = read_all(part);
        ASSERT_LT(prefix.size(), kFileSize);
        EXPECT_EQ(prefix, body_.substr(0, prefix.size())) << "the .part is a prefix of the file";
    }

    auto mirrors = std::make_shared<MirrorList>(std::vector<std::string>{nginx.url("/")});
    const std::vector<DownloadRequest> second{make_request(mirrors, kHref, body_)};
    auto resumed = Downloader(options()).run(dir_.path() / "dest", second);
    ASSERT_TRUE(resumed.has_value());
    ASSERT_TRUE(resumed->ok()) << describe(resumed->files[0]);
    EXPECT_EQ(resumed->files[0].resumed, kept);
    EXPECT_EQ(resumed->files[0].segments, 0U) << "a resume is one connection";
    EXPECT_EQ(read_all(dir_.path() / "dest" / kHref), body_);
}

INSTANTIATE_TEST_SUITE_P(IoThreads, SegmentedDownloadTest, ::testing::Values(0U, 1U),
                         [](const ::testing::TestParamInfo<unsigned>& info) {
                             return info.param == 0 ? std::string("Inline") : std::string("Worker");
                         });

}  // namespace
}  // namespace rpmirror
