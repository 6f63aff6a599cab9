// The download engine against tests/integration/fault_server.py: each test scripts the server's
// behaviour per path and asserts both the outcome (files, report) and the exact requests the
// server saw. Every test runs with hashing in the write callback (io_threads 0) and on worker
// threads (io_threads 2).
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <stop_token>

#include "checksum/hasher.hpp"
#include "download_test_support.hpp"
#include "downloader_fixture.hpp"
#include "support/http_server.hpp"

namespace rpmirror {
namespace {

using nlohmann::json;
using test::content_bytes;
using test::fast_options;
using test::make_request;
using test::read_all;

using test::DownloaderTest;

TEST_P(DownloaderTest, DownloadsVerifiesAndLeavesNoPartFile) {
    const auto& a = serve("m1/Packages/a/a-1.rpm", content_bytes(300'000, 1));
    const auto& b = serve("m1/Packages/b/b-1.rpm", content_bytes(1, 2));
    const auto& c = serve("m1/c.rpm", content_bytes(1'500'000, 3));
    start_server();
    auto list = mirrors({"/m1/"});
    auto report = run({make_request(list, "Packages/a/a-1.rpm", a),
                       make_request(list, "Packages/b/b-1.rpm", b), make_request(list, "c.rpm", c)},
                      options());
    ASSERT_TRUE(report.ok());
    EXPECT_EQ(report.downloaded, 3U);
    EXPECT_EQ(report.retries, 0U);
    EXPECT_EQ(report.bytes_received, a.size() + b.size() + c.size());
    EXPECT_EQ(read_all(dest() / "Packages/a/a-1.rpm"), a);
    EXPECT_EQ(read_all(dest() / "Packages/b/b-1.rpm"), b);
    EXPECT_EQ(read_all(dest() / "c.rpm"), c);
    EXPECT_FALSE(exists("Packages/a/.a-1.rpm.part"));
    EXPECT_FALSE(exists(".c.rpm.part"));
    // The checksum cache is set, so the next verification does not re-hash.
    char value[512];
    const ssize_t length = ::getxattr((dest() / "c.rpm").c_str(), "user.rpmirror.checksum.sha256",
                                      value, sizeof(value));
    ASSERT_GT(length, 0);
    EXPECT_NE(std::string(value, static_cast<std::size_t>(length))
                  .find(hash_bytes(ChecksumType::Sha256, c)),
              std::string::npos);
    const auto requests = server_->requests();
    ASSERT_EQ(requests.size(), 3U);
    for (const auto& request : requests) {
        EXPECT_EQ(request.method, "GET");
        EXPECT_EQ(request.range, "");
        EXPECT_EQ(request.headers.value("user-agent", ""),
                  std::string("rpmirror/") + RPMIRROR_VERSION);
        EXPECT_FALSE(request.headers.contains("accept-encoding"));
    }
}

TEST_P(DownloaderTest, ChecksumMismatchOnFirstMirrorFallsBackToSecond) {
    const auto& body = serve("m1/x.rpm", content_bytes(200'000, 4));
    serve("m2/x.rpm", body);
    start_server({{"paths", {{"/m1/x.rpm", {{{"corrupt", true}}}}}}});
    auto report = run({make_request(mirrors({"/m1/", "/m2/"}), "x.rpm", body)}, options());
    ASSERT_TRUE(report.ok());
    EXPECT_EQ(read_all(dest() / "x.rpm"), body);
    const auto requests = server_->requests();
    ASSERT_EQ(requests.size(), 2U);
    EXPECT_EQ(requests[0].path, "/m1/x.rpm");
    EXPECT_EQ(requests[1].path, "/m2/x.rpm");
    EXPECT_EQ(requests[1].range, "");  // the corrupt bytes were thrown away, not resumed
    const auto& attempts = report.files[0].attempts;
    ASSERT_EQ(attempts.size(), 2U);
    EXPECT_NE(attempts[0].outcome.find("sha256 mismatch"), std::string::npos)
        << attempts[0].outcome;
    EXPECT_TRUE(attempts[0].permanent);
    EXPECT_EQ(attempts[1].outcome, "ok");
}

TEST_P(DownloaderTest, NotFoundOnEveryMirrorListsEachUrlTried) {
    start_server();
    const std::string body = content_bytes(1000, 5);
    auto report =
        run({make_request(mirrors({"/m1/", "/m2/"}), "Packages/gone.rpm", body)}, options());
    ASSERT_EQ(report.failed, 1U);
    const FileResult& file = report.files[0];
    EXPECT_EQ(file.status, FileStatus::Failed);
    ASSERT_TRUE(file.error.has_value());
    const std::string message = file.error->to_string();
    EXPECT_NE(message.find("all 2 mirrors failed"), std::string::npos) << message;
    EXPECT_NE(message.find(server_->url("/m1/Packages/gone.rpm") + ": HTTP 404"), std::string::npos)
        << message;
    EXPECT_NE(message.find(server_->url("/m2/Packages/gone.rpm") + ": HTTP 404"), std::string::npos)
        << message;
    EXPECT_EQ(server_->requests().size(), 2U);  // a 404 is not retried on the same mirror
    EXPECT_FALSE(exists("Packages/gone.rpm"));
    EXPECT_FALSE(exists("Packages/.gone.rpm.part"));
}

TEST_P(DownloaderTest, ServiceUnavailableWithRetryAfterIsRetried) {
    const auto& body = serve("m1/x.rpm", content_bytes(50'000, 6));
    const json busy = {{"status", 503}, {"retry_after", "1"}};
    start_server({{"paths", {{"/m1/x.rpm", {busy, busy, json::object()}}}}});
    auto report = run({make_request(mirrors({"/m1/"}), "x.rpm", body)}, options());
    ASSERT_TRUE(report.ok());
    EXPECT_EQ(report.retries, 2U);
    EXPECT_EQ(server_->requests_for("/m1/x.rpm").size(), 3U);
    const auto& attempts = report.files[0].attempts;
    ASSERT_EQ(attempts.size(), 3U);
    EXPECT_EQ(attempts[0].http_status, 503);
    EXPECT_FALSE(attempts[0].permanent);
    ASSERT_TRUE(attempts[0].retry_after.has_value());
    EXPECT_EQ(attempts[0].retry_after->count(), 1);
    EXPECT_EQ(read_all(dest() / "x.rpm"), body);
}

TEST_P(DownloaderTest, TransientFailuresStopAfterTheRetryBudget) {
    const auto& body = serve("m1/x.rpm", content_bytes(1000, 7));
    start_server({{"paths", {{"/m1/x.rpm", {{{"status", 500}}}}}}});
    auto opts = options();
    opts.retries = 2;
    auto report = run({make_request(mirrors({"/m1/"}), "x.rpm", body)}, opts);
    ASSERT_EQ(report.failed, 1U);
    EXPECT_EQ(server_->requests().size(), 3U);  // the first attempt + 2 retries
    EXPECT_NE(report.files[0].error->message.find("gave up after 3 attempts"), std::string::npos)
        << report.files[0].error->message;
}

TEST_P(DownloaderTest, ConnectionClosedMidBodyIsResumedWithRange) {
    const auto& body = serve("m1/x.rpm", content_bytes(400'000, 8));
    start_server({{"paths", {{"/m1/x.rpm", {{{"close_after", 150'000}}, json::object()}}}}});
    auto report = run({make_request(mirrors({"/m1/"}), "x.rpm", body)}, options());
    ASSERT_TRUE(report.ok());
    EXPECT_EQ(read_all(dest() / "x.rpm"), body);
    const auto requests = server_->requests();
    ASSERT_EQ(requests.size(), 2U);
    EXPECT_EQ(requests[0].range, "");
    const auto& attempts = report.files[0].attempts;
    ASSERT_EQ(attempts.size(), 2U);
    EXPECT_EQ(attempts[0].bytes_received, 150'000U);
    EXPECT_EQ(requests[1].range, "bytes=150000-");
    EXPECT_EQ(attempts[1].bytes_received, body.size() - 150'000);
    EXPECT_TRUE(report.files[0].resumed);
    EXPECT_EQ(report.resumed, 1U);
}

TEST_P(DownloaderTest, LeftoverPartIsResumedWithRange) {
    const auto& body = serve("m1/x.rpm", content_bytes(300'000, 9));
    std::filesystem::create_directories(dest());
    std::ofstream(dest() / ".x.rpm.part", std::ios::binary) << body.substr(0, 123'456);
    start_server();
    auto report = run({make_request(mirrors({"/m1/"}), "x.rpm", body)}, options());
    ASSERT_TRUE(report.ok());
    EXPECT_EQ(read_all(dest() / "x.rpm"), body);
    EXPECT_FALSE(exists(".x.rpm.part"));
    const auto requests = server_->requests();
    ASSERT_EQ(requests.size(), 1U);
    EXPECT_EQ(requests[0].range, "bytes=123456-");
    EXPECT_EQ(report.bytes_received, body.size() - 123'456);
    EXPECT_TRUE(report.files[0].resumed);
}

TEST_P(DownloaderTest, CompleteLeftoverPartIsVerifiedWithoutAnyRequest) {
    const auto& body = serve("m1/x.rpm", content_bytes(70'000, 10));
    std::filesystem::create_directories(dest());
    std::ofstream(dest() / ".x.rpm.part", std::ios::binary) << body;
    start_server();
    auto report = run({make_request(mirrors({"/m1/"}), "x.rpm", body)}, options());
    ASSERT_TRUE(report.ok());
    EXPECT_EQ(report.files[0].status, FileStatus::AlreadyPresent);
    EXPECT_EQ(report.already_present, 1U);
    EXPECT_EQ(read_all(dest() / "x.rpm"), body);
    EXPECT_TRUE(server_->requests().empty());
}

TEST_P(DownloaderTest, ServerIgnoringRangeMakesTheDownloadStartOver) {
    const auto& body = serve("m1/x.rpm", content_bytes(200'000, 11));
    std::filesystem::create_directories(dest());
    // A wrong prefix: if it were kept, the file could never verify.
    std::ofstream(dest() / ".x.rpm.part", std::ios::binary) << std::string(50'000, 'z');
    start_server({{"paths", {{"/m1/x.rpm", {{{"range", false}}}}}}});
    auto report = run({make_request(mirrors({"/m1/"}), "x.rpm", body)}, options());
    ASSERT_TRUE(report.ok());
    EXPECT_EQ(read_all(dest() / "x.rpm"), body);
    const auto requests = server_->requests();
    ASSERT_EQ(requests.size(), 1U);
    EXPECT_EQ(requests[0].range, "bytes=50000-");
    EXPECT_EQ(report.bytes_received, body.size());
    EXPECT_NE(report.files[0].attempts[0].outcome.find("ignored Range"), std::string::npos);
    EXPECT_FALSE(report.files[0].resumed);
}

TEST_P(DownloaderTest, RangeNotSatisfiableDiscardsThePartAndStartsOver) {
    const auto& body = serve("m1/x.rpm", content_bytes(100'000, 12));
    std::filesystem::create_directories(dest());
    std::ofstream(dest() / ".x.rpm.part", std::ios::binary) << body.substr(0, 60'000);
    start_server({{"paths", {{"/m1/x.rpm", {{{"range_status", 416}}, json::object()}}}}});
    auto report = run({make_request(mirrors({"/m1/"}), "x.rpm", body)}, options());
    ASSERT_TRUE(report.ok());
    EXPECT_EQ(read_all(dest() / "x.rpm"), body);
    const auto requests = server_->requests();
    ASSERT_EQ(requests.size(), 2U);
    EXPECT_EQ(requests[0].range, "bytes=60000-");
    EXPECT_EQ(requests[1].range, "");
}

TEST_P(DownloaderTest, MismatchAfterResumingDownloadsFromScratch) {
    const auto& body = serve("m1/x.rpm", content_bytes(100'000, 13));
    std::filesystem::create_directories(dest());
    std::string prefix = body.substr(0, 40'000);
    prefix[100] = static_cast<char>(prefix[100] ^ 0x55);  // a leftover with one bad byte
    std::ofstream(dest() / ".x.rpm.part", std::ios::binary) << prefix;
    start_server();
    auto report = run({make_request(mirrors({"/m1/"}), "x.rpm", body)}, options());
    ASSERT_TRUE(report.ok());
    EXPECT_EQ(read_all(dest() / "x.rpm"), body);
    const auto requests = server_->requests();
    ASSERT_EQ(requests.size(), 2U);
    EXPECT_EQ(requests[0].range, "bytes=40000-");
    EXPECT_EQ(requests[1].range, "");  // same mirror, from scratch
    EXPECT_NE(report.files[0].attempts[0].outcome.find("after resuming"), std::string::npos);
}

TEST_P(DownloaderTest, WrongContentRangeStartIsDiscarded) {
    const auto& body = serve("m1/x.rpm", content_bytes(100'000, 14));
    std::filesystem::create_directories(dest());
    std::ofstream(dest() / ".x.rpm.part", std::ios::binary) << body.substr(0, 30'000);
    start_server({{"paths", {{"/m1/x.rpm", {{{"wrong_range", true}}, json::object()}}}}});
    auto report = run({make_request(mirrors({"/m1/"}), "x.rpm", body)}, options());
    ASSERT_TRUE(report.ok());
    EXPECT_EQ(read_all(dest() / "x.rpm"), body);
    const auto requests = server_->requests();
    ASSERT_EQ(requests.size(), 2U);
    EXPECT_EQ(requests[0].range, "bytes=30000-");
    EXPECT_EQ(requests[1].range, "");
}

TEST_P(DownloaderTest, ContentLengthLargerThanExpectedAbortsBeforeTheBody) {
    const auto& body = serve("m1/x.rpm", content_bytes(100'000, 15));
    serve("m2/x.rpm", body);
    start_server({{"paths", {{"/m1/x.rpm", {{{"content_length", 50'000'000}}}}}}});
    auto report = run({make_request(mirrors({"/m1/", "/m2/"}), "x.rpm", body)}, options());
    ASSERT_TRUE(report.ok());
    EXPECT_EQ(read_all(dest() / "x.rpm"), body);
    const auto& attempts = report.files[0].attempts;
    ASSERT_EQ(attempts.size(), 2U);
    EXPECT_NE(attempts[0].outcome.find("Content-Length 50000000"), std::string::npos)
        << attempts[0].outcome;
    EXPECT_EQ(attempts[0].bytes_received, 0U);
    EXPECT_TRUE(attempts[0].permanent);
    const auto requests = server_->requests();
    ASSERT_EQ(requests.size(), 2U);
    EXPECT_EQ(requests[1].path, "/m2/x.rpm");
}

TEST_P(DownloaderTest, ContentLengthSmallerThanExpectedIsASizeMismatch) {
    const auto& body = serve("m1/x.rpm", content_bytes(100'000, 16));
    start_server({{"paths", {{"/m1/x.rpm", {{{"content_length", 1000}}}}}}});
    auto report = run({make_request(mirrors({"/m1/"}), "x.rpm", body)}, options());
    ASSERT_EQ(report.failed, 1U);
    EXPECT_EQ(report.files[0].error->code, ErrorCode::Corrupt);
    EXPECT_NE(report.files[0].error->message.find("size mismatch"), std::string::npos);
    EXPECT_EQ(server_->requests().size(), 1U);
    EXPECT_FALSE(exists("x.rpm"));
}

// `count` lines of text: compresses well, so an encoded body is much shorter than the file.
std::string compressible_text(std::size_t count) {
    std::string text;
    for (std::size_t line = 0; line < count; ++line) {
        text += "<package name=\"p" + std::to_string(line) + "\" arch=\"noarch\"/>\n";
    }
    return text;
}

TEST_P(DownloaderTest, GzipEncodedBodyIsDecodedAndJudgedOnTheDecodedBytes) {
    // A server that gzips a body nobody asked to be encoded: its Content-Length (the encoded
    // size) is not the file's size, and must not abort the transfer.
    const auto& body = serve("m1/x.xml", compressible_text(5000));
    start_server({{"paths", {{"/m1/x.xml", {{{"encode", "gzip"}}}}}}});
    auto report = run({make_request(mirrors({"/m1/"}), "x.xml", body)}, options());
    ASSERT_TRUE(report.ok()) << (report.files[0].error ? report.files[0].error->to_string() : "");
    EXPECT_EQ(read_all(dest() / "x.xml"), body);
    ASSERT_EQ(report.files[0].attempts.size(), 1U);
    EXPECT_EQ(report.files[0].attempts[0].outcome, "ok");
    EXPECT_EQ(report.bytes_received, body.size());
    const auto requests = server_->requests();
    ASSERT_EQ(requests.size(), 1U);
    EXPECT_FALSE(requests[0].headers.contains("accept-encoding")) << "never asked for";
}

TEST_P(DownloaderTest, DeflateEncodedBodyIsDecoded) {
    const auto& body = serve("m1/x.xml", compressible_text(3000));
    start_server({{"paths", {{"/m1/x.xml", {{{"encode", "deflate"}}}}}}});
    auto report = run({make_request(mirrors({"/m1/"}), "x.xml", body)}, options());
    ASSERT_TRUE(report.ok()) << (report.files[0].error ? report.files[0].error->to_string() : "");
    EXPECT_EQ(read_all(dest() / "x.xml"), body);
    EXPECT_EQ(server_->requests().size(), 1U);
}

TEST_P(DownloaderTest, EncodedPartialResponseStartsOverFromByteZero) {
    // The server answers Range with a range of its gzip stream (as one serving precompressed
    // files does): those bytes can neither be decoded alone nor appended to the file's prefix.
    const auto& body = serve("m1/x.rpm", content_bytes(300'000, 41));
    std::filesystem::create_directories(dest());
    std::ofstream(dest() / ".x.rpm.part", std::ios::binary) << body.substr(0, 100'000);
    start_server({{"all", {{{"encode", "gzip"}}}}});
    auto report = run({make_request(mirrors({"/m1/"}), "x.rpm", body)}, options());
    ASSERT_TRUE(report.ok()) << (report.files[0].error ? report.files[0].error->to_string() : "");
    EXPECT_EQ(read_all(dest() / "x.rpm"), body);
    const auto requests = server_->requests();
    ASSERT_EQ(requests.size(), 2U);
    EXPECT_EQ(requests[0].range, "bytes=100000-");
    EXPECT_EQ(requests[1].range, "");  // same mirror, from scratch
    const auto& attempts = report.files[0].attempts;
    ASSERT_EQ(attempts.size(), 2U);
    EXPECT_NE(attempts[0].outcome.find("206 with Content-Encoding: gzip for Range from 100000"),
              std::string::npos)
        << attempts[0].outcome;
    EXPECT_EQ(attempts[0].bytes_received, 0U);
    EXPECT_EQ(attempts[1].outcome, "ok");
    EXPECT_FALSE(report.files[0].resumed);
}

TEST_P(DownloaderTest, BytesLabelledGzipThatAreTheFileAreStoredAsSent) {
    // A .gz file served with "Content-Encoding: gzip" (a common misconfiguration): decoded, it
    // fails its check; the same mirror is asked again and the bytes are stored as sent.
    const auto& body = serve("m1/repodata/primary.xml.gz", content_bytes(80'000, 17));
    start_server({{"paths", {{"/m1/repodata/primary.xml.gz", {{{"gzip", true}}}}}}});
    auto report =
        run({make_request(mirrors({"/m1/"}), "repodata/primary.xml.gz", body)}, options());
    ASSERT_TRUE(report.ok()) << (report.files[0].error ? report.files[0].error->to_string() : "");
    EXPECT_EQ(read_all(dest() / "repodata/primary.xml.gz"), body);
    const auto& attempts = report.files[0].attempts;
    ASSERT_EQ(attempts.size(), 2U);
    EXPECT_NE(attempts[0].outcome.find(
                  "(decoded from Content-Encoding: gzip); fetching it again, stored as sent"),
              std::string::npos)
        << attempts[0].outcome;
    EXPECT_FALSE(attempts[0].permanent);
    EXPECT_EQ(attempts[1].outcome, "ok");
    const auto requests = server_->requests();
    ASSERT_EQ(requests.size(), 2U);
    for (const auto& request : requests) {
        EXPECT_EQ(request.path, "/m1/repodata/primary.xml.gz");
        EXPECT_FALSE(request.headers.contains("accept-encoding"));
    }
}

TEST_P(DownloaderTest, RedirectToFileUrlIsRefused) {
    const std::string secret = content_bytes(5000, 18);
    const auto secret_path = dir_.write("secret.bin", secret);
    serve("m2/x.rpm", secret);
    start_server({{"paths", {{"/m1/x.rpm", {{{"redirect", "file://" + secret_path.string()}}}}}}});
    auto report = run({make_request(mirrors({"/m1/", "/m2/"}), "x.rpm", secret)}, options());
    ASSERT_TRUE(report.ok());
    const auto& attempts = report.files[0].attempts;
    ASSERT_EQ(attempts.size(), 2U);
    EXPECT_TRUE(attempts[0].permanent);
    EXPECT_NE(attempts[0].outcome, "ok");
    EXPECT_EQ(attempts[1].url, server_->url("/m2/x.rpm"));
    const auto requests = server_->requests();
    ASSERT_EQ(requests.size(), 2U);  // the redirect was not followed to anything
    EXPECT_EQ(requests[1].path, "/m2/x.rpm");
}

TEST_P(DownloaderTest, SymlinkLeadingOutsideTheRootIsRefused) {
    const auto& body = serve("m1/Packages/x.rpm", content_bytes(1000, 19));
    const auto outside = dir_.path() / "outside";
    std::filesystem::create_directories(outside);
    std::filesystem::create_directories(dest());
    std::filesystem::create_symlink(outside, dest() / "Packages");
    start_server();
    auto report = run({make_request(mirrors({"/m1/"}), "Packages/x.rpm", body)}, options());
    ASSERT_EQ(report.failed, 1U);
    EXPECT_EQ(report.files[0].error->code, ErrorCode::Unsafe);
    EXPECT_TRUE(std::filesystem::is_empty(outside));
    EXPECT_TRUE(server_->requests().empty());
}

TEST_P(DownloaderTest, SymlinkedPartFileIsRefused) {
    const auto& body = serve("m1/x.rpm", content_bytes(1000, 20));
    const auto target = dir_.write("target.txt", "keep me");
    std::filesystem::create_directories(dest());
    std::filesystem::create_symlink(target, dest() / ".x.rpm.part");
    start_server();
    auto report = run({make_request(mirrors({"/m1/"}), "x.rpm", body)}, options());
    ASSERT_EQ(report.failed, 1U);
    EXPECT_EQ(report.files[0].error->code, ErrorCode::Unsafe);
    EXPECT_EQ(read_all(target), "keep me");
    EXPECT_FALSE(exists("x.rpm"));
}

TEST_P(DownloaderTest, SymlinkInsideTheRootIsFollowed) {
    const auto& body = serve("m1/Packages/x.rpm", content_bytes(1000, 21));
    std::filesystem::create_directories(dest() / "store");
    std::filesystem::create_directory_symlink("store", dest() / "Packages");
    start_server();
    auto report = run({make_request(mirrors({"/m1/"}), "Packages/x.rpm", body)}, options());
    ASSERT_TRUE(report.ok());
    EXPECT_EQ(read_all(dest() / "store/x.rpm"), body);
}

TEST_P(DownloaderTest, FileUrlsAreCopiedAndVerified) {
    const auto& good = serve("m1/good.rpm", content_bytes(600'000, 22));
    serve("m1/bad.rpm", content_bytes(600'000, 23));
    auto list = std::make_shared<MirrorList>(
        std::vector<std::string>{"file://" + (served() / "m1").string()});
    auto bad_request = make_request(list, "bad.rpm", content_bytes(600'000, 24));
    auto report = run({make_request(list, "good.rpm", good), bad_request}, options());
    EXPECT_EQ(report.files[0].status, FileStatus::Downloaded);
    EXPECT_EQ(read_all(dest() / "good.rpm"), good);
    EXPECT_EQ(report.files[1].status, FileStatus::Failed);
    EXPECT_NE(report.files[1].error->message.find("sha256 mismatch"), std::string::npos)
        << report.files[1].error->message;
    EXPECT_FALSE(exists("bad.rpm"));
    EXPECT_FALSE(exists(".bad.rpm.part"));
}

TEST_P(DownloaderTest, AbsoluteFileHrefIsRefusedWithoutReadingIt) {
    // An absolute href comes from upstream's xml:base: file:// is only accepted as a mirror.
    const std::string secret = content_bytes(5000, 40);
    const auto secret_path = dir_.write("secret.bin", secret);
    DownloadRequest request =
        make_request(nullptr, "file://" + secret_path.string(), secret, "x.rpm");
    auto report = run({request}, options());
    ASSERT_EQ(report.failed, 1U);
    const auto& attempts = report.files[0].attempts;
    ASSERT_EQ(attempts.size(), 1U);
    EXPECT_NE(attempts[0].outcome.find("an absolute href must be an http or https URL"),
              std::string::npos)
        << attempts[0].outcome;
    EXPECT_EQ(attempts[0].bytes_received, 0U);
    EXPECT_EQ(report.bytes_received, 0U);
    EXPECT_FALSE(exists("x.rpm"));
    EXPECT_FALSE(exists(".x.rpm.part"));
}

// Requests a stop once some bytes of the download have arrived.
class StopAfterFirstBytes : public ProgressSink {
  public:
    explicit StopAfterFirstBytes(std::stop_source& source) : source_(source) {}
    void progress(std::uint64_t bytes_done, std::uint64_t) override {
        if (bytes_done > 0) {
            source_.request_stop();
        }
    }

  private:
    std::stop_source& source_;
};

TEST_P(DownloaderTest, StopKeepsThePartFileForTheNextRun) {
    const auto& body = serve("m1/slow.rpm", content_bytes(400'000, 25));
    const auto& other = serve("m1/other.rpm", content_bytes(1000, 26));
    start_server({{"paths", {{"/m1/slow.rpm", {{{"trickle", {8192, 0.02}}}, json::object()}}}}});
    auto list = mirrors({"/m1/"});
    auto opts = options();
    opts.max_parallel = 1;
    std::stop_source source;
    StopAfterFirstBytes stopper(source);
    std::vector<DownloadRequest> requests = {make_request(list, "slow.rpm", body),
                                             make_request(list, "other.rpm", other)};
    auto report = run(requests, opts, &stopper, source.get_token());
    EXPECT_TRUE(report.interrupted);
    EXPECT_EQ(report.files[0].status, FileStatus::Interrupted);
    EXPECT_EQ(report.files[1].status, FileStatus::NotStarted);
    EXPECT_EQ(report.not_finished, 2U);
    EXPECT_FALSE(exists("slow.rpm"));
    ASSERT_TRUE(exists(".slow.rpm.part"));
    const auto kept = std::filesystem::file_size(dest() / ".slow.rpm.part");
    EXPECT_GT(kept, 0U);
    EXPECT_LT(kept, body.size());
    EXPECT_EQ(server_->requests_for("/m1/other.rpm").size(), 0U);

    // The next run continues where the first stopped.
    auto second = run(requests, opts);
    ASSERT_TRUE(second.ok());
    EXPECT_EQ(read_all(dest() / "slow.rpm"), body);
    const auto slow_requests = server_->requests_for("/m1/slow.rpm");
    ASSERT_EQ(slow_requests.size(), 2U);
    EXPECT_EQ(slow_requests[1].range, "bytes=" + std::to_string(kept) + "-");
}

TEST_P(DownloaderTest, ServerSlowerThanMinrateIsAborted) {
    const auto& body = serve("m1/x.rpm", content_bytes(100'000, 27));
    start_server({{"paths", {{"/m1/x.rpm", {{{"trickle", {100, 0.2}}}}}}}});
    auto opts = options();
    opts.minrate = 10'000;
    opts.low_speed_time = std::chrono::seconds(1);
    opts.retries = 0;
    auto report = run({make_request(mirrors({"/m1/"}), "x.rpm", body)}, opts);
    ASSERT_EQ(report.failed, 1U);
    const auto& attempts = report.files[0].attempts;
    ASSERT_EQ(attempts.size(), 1U);
    EXPECT_NE(attempts[0].outcome.find("minrate 10000 B/s"), std::string::npos)
        << attempts[0].outcome;
    EXPECT_FALSE(attempts[0].permanent);
    EXPECT_FALSE(exists("x.rpm"));
}

TEST_P(DownloaderTest, FailFastStopsStartingOtherFiles) {
    const auto& b = serve("m1/b.rpm", content_bytes(1000, 28));
    const auto& c = serve("m1/c.rpm", content_bytes(1000, 29));
    start_server();
    auto list = mirrors({"/m1/"});
    auto opts = options();
    opts.fail_fast = true;
    opts.max_parallel = 1;
    auto report = run({make_request(list, "missing.rpm", content_bytes(10, 30)),
                       make_request(list, "b.rpm", b), make_request(list, "c.rpm", c)},
                      opts);
    EXPECT_EQ(report.failed, 1U);
    EXPECT_EQ(report.not_finished, 2U);
    EXPECT_FALSE(report.interrupted);
    EXPECT_EQ(server_->requests().size(), 1U);
}

TEST_P(DownloaderTest, OtherFilesGoOnAfterAFailure) {
    const auto& b = serve("m1/b.rpm", content_bytes(1000, 31));
    start_server();
    auto list = mirrors({"/m1/"});
    auto opts = options();
    opts.max_parallel = 1;
    auto report = run(
        {make_request(list, "missing.rpm", content_bytes(10, 32)), make_request(list, "b.rpm", b)},
        opts);
    EXPECT_EQ(report.failed, 1U);
    EXPECT_EQ(report.downloaded, 1U);
    EXPECT_EQ(read_all(dest() / "b.rpm"), b);
}

TEST_P(DownloaderTest, MirrorThatKeepsFailingMovesToTheBack) {
    std::vector<std::string> bodies;
    for (int index = 0; index < 4; ++index) {
        bodies.push_back(
            serve("m2/f" + std::to_string(index) + ".rpm", content_bytes(500, 40 + index)));
    }
    start_server();
    auto list = std::make_shared<MirrorList>(
        std::vector<std::string>{server_->url("/m1/"), server_->url("/m2/")}, /*demote_after=*/2);
    auto opts = options();
    opts.max_parallel = 1;
    std::vector<DownloadRequest> requests;
    for (int index = 0; index < 4; ++index) {
        // Appended, not "f" + std::to_string(index): GCC 12 at -O3 warns (-Wrestrict, a known false
        // positive) about operator+(const char*, std::string&&).
        std::string name = "f";
        name.append(std::to_string(index)).append(".rpm");
        requests.push_back(make_request(list, name, bodies[index]));
    }
    auto report = run(requests, opts);
    ASSERT_TRUE(report.ok());
    std::vector<std::string> paths;
    for (const auto& request : server_->requests()) {
        paths.push_back(request.path);
    }
    // Two 404s on m1 in a row move it behind m2; the last two files go straight to m2.
    EXPECT_EQ(paths, (std::vector<std::string>{"/m1/f0.rpm", "/m2/f0.rpm", "/m1/f1.rpm",
                                               "/m2/f1.rpm", "/m2/f2.rpm", "/m2/f3.rpm"}));
    EXPECT_EQ(list->order(),
              (std::vector<std::string>{server_->url("/m2/"), server_->url("/m1/")}));
}

TEST_P(DownloaderTest, BandwidthLimitPausesTransfersAndStillCompletes) {
    const auto& a = serve("m1/a.rpm", content_bytes(300'000, 50));
    const auto& b = serve("m1/b.rpm", content_bytes(300'000, 51));
    start_server();
    auto list = mirrors({"/m1/"});
    auto opts = options();
    opts.throttle = 2'000'000;
    auto report = run({make_request(list, "a.rpm", a), make_request(list, "b.rpm", b)}, opts);
    ASSERT_TRUE(report.ok());
    EXPECT_GT(report.throttle_pauses, 0U);
    EXPECT_EQ(read_all(dest() / "a.rpm"), a);
    EXPECT_EQ(read_all(dest() / "b.rpm"), b);
}

TEST_P(DownloaderTest, SendsConfiguredHeadersAuthAndUserAgent) {
    const auto& body = serve("m1/x.rpm", content_bytes(100, 52));
    start_server();
    auto opts = options();
    opts.headers = {"X-Mirror-Test: yes"};
    opts.username = "user";
    opts.password = "secret";
    opts.user_agent = "custom-agent/1";
    auto report = run({make_request(mirrors({"/m1/"}), "x.rpm", body)}, opts);
    ASSERT_TRUE(report.ok());
    const auto requests = server_->requests();
    ASSERT_EQ(requests.size(), 1U);
    EXPECT_EQ(requests[0].headers.value("x-mirror-test", ""), "yes");
    EXPECT_EQ(requests[0].headers.value("authorization", ""), "Basic dXNlcjpzZWNyZXQ=");
    EXPECT_EQ(requests[0].headers.value("user-agent", ""), "custom-agent/1");
}

TEST_P(DownloaderTest, ProgressReportsEveryFileAndTheTotal) {
    const auto& a = serve("m1/a.rpm", content_bytes(10'000, 53));
    start_server();
    struct Recorder : ProgressSink {
        std::vector<std::string> started;
        std::vector<FileStatus> finished;
        std::uint64_t last_done = 0;
        std::uint64_t last_total = 0;
        std::vector<std::pair<std::size_t, std::uint64_t>> runs;  // run_started's totals
        void run_started(std::size_t files, std::uint64_t bytes) override {
            EXPECT_TRUE(started.empty()) << "announced before its first file";
            runs.emplace_back(files, bytes);
        }
        void file_started(std::size_t, std::string_view url) override { started.emplace_back(url); }
        void progress(std::uint64_t done, std::uint64_t total) override {
            last_done = done;
            last_total = total;
        }
        void file_finished(std::size_t, const FileResult& result) override {
            finished.push_back(result.status);
        }
    } recorder;
    auto list = mirrors({"/m1/"});
    auto report = run({make_request(list, "a.rpm", a), make_request(list, "none.rpm", "x")},
                      options(), &recorder);
    EXPECT_EQ(recorder.started.size(), 2U);
    ASSERT_EQ(recorder.finished.size(), 2U);
    // The run's totals are announced once, before any file starts (a progress bar's "of N").
    EXPECT_EQ(recorder.runs,
              (std::vector<std::pair<std::size_t, std::uint64_t>>{{2U, a.size() + 1}}));
    EXPECT_EQ(recorder.last_total, a.size() + 1);
    EXPECT_EQ(recorder.last_done, a.size());
    EXPECT_EQ(report.downloaded, 1U);
}

INSTANTIATE_TEST_SUITE_P(IoThreads, DownloaderTest, ::testing::Values(0U, 2U),
                         [](const ::testing::TestParamInfo<unsigned>& info) {
                             return info.param == 0 ? std::string("InCallback")
                                                    : "Workers" + std::to_string(info.param);
                         });

}  // namespace
}  // namespace rpmirror
