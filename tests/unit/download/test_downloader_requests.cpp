// The download engine's requests without a digest, its refusals before anything is written,
// and the mirror list's order (DownloaderTest is instantiated in test_downloader.cpp).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "checksum/hasher.hpp"
#include "downloader_fixture.hpp"

namespace rpmirror {
namespace {

using nlohmann::json;
using test::content_bytes;
using test::DownloaderTest;
using test::make_request;
using test::read_all;

// A request without a digest (and of unknown size: an image .treeinfo names without a checksum)
// takes the file as the server sends it whole, and reports the digest it arrived with; a
// connection closed early is no whole file: fetched on, never published short.
TEST_P(DownloaderTest, ARequestWithoutADigestTakesTheWholeFileAndReportsItsDigest) {
    const auto& body = serve("m1/boot.iso", content_bytes(200'000, 9));
    start_server({{"paths", {{"/m1/boot.iso", {{{"close_after", 50'000}}, json::object()}}}}});
    auto request = make_request(mirrors({"/m1/"}), "boot.iso", body);
    request.expected_digest.clear();
    request.expected_size = kUnknownSize;
    auto report = run({request}, options());
    ASSERT_TRUE(report.ok());
    EXPECT_EQ(read_all(dest() / "boot.iso"), body);
    EXPECT_EQ(report.files.at(0).digest, hash_bytes(ChecksumType::Sha256, body));
    EXPECT_EQ(report.retries, 1U);
    EXPECT_EQ(server_->requests().size(), 2U);

    // Without a digest, a size is no check of its own: refused.
    request.expected_size = body.size();
    Downloader downloader(options());
    auto refused = downloader.run(dest(), std::vector<DownloadRequest>{request});
    ASSERT_FALSE(refused.has_value());
    EXPECT_EQ(refused.error().code, ErrorCode::BadInput);
}

// Without a digest, only the protocol can say a body is whole: a body that ends when the
// connection closes (no Content-Length, not chunked) is refused, and a body labelled with a
// Content-Encoding is stored as sent, never decoded (a .gz served with "Content-Encoding: gzip").
TEST_P(DownloaderTest, ARequestWithoutADigestRefusesAnUnframedBodyAndNeverDecodes) {
    const auto& body = serve("m1/images/pxe.img.gz", content_bytes(300'000, 17));
    serve("m2/images/pxe.img.gz", body);
    start_server({{"paths",
                   {{"/m1/images/pxe.img.gz", {{{"no_length", true}, {"close_after", 1'000}}}},
                    {"/m1/images/other.img", {{{"no_length", true}}}},
                    {"/m2/images/pxe.img.gz", {{{"gzip", true}}}}}}});
    auto request = make_request(mirrors({"/m1/", "/m2/"}), "images/pxe.img.gz", body);
    request.expected_digest.clear();
    request.expected_size = kUnknownSize;
    auto report = run({request}, options());
    ASSERT_TRUE(report.ok());
    EXPECT_EQ(read_all(dest() / "images/pxe.img.gz"), body);  // not cut, not decoded
    const FileResult& file = report.files.at(0);
    EXPECT_EQ(file.digest, hash_bytes(ChecksumType::Sha256, body));
    ASSERT_EQ(file.attempts.size(), 2U);
    EXPECT_NE(file.attempts[0].outcome.find("no Content-Length and no chunked encoding"),
              std::string::npos)
        << file.attempts[0].outcome;
    for (const auto& logged : server_->requests()) {
        EXPECT_EQ(logged.headers.value("accept-encoding", ""), "");  // asked for no encoding
    }

    // The only mirror sends it unframed (whole, this time: nothing could tell): the file fails,
    // nothing is published.
    auto only = make_request(mirrors({"/m1/"}), "images/other.img", body);
    only.expected_digest.clear();
    only.expected_size = kUnknownSize;
    serve("m1/images/other.img", body);
    auto failed = run({only}, options());
    EXPECT_FALSE(failed.ok());
    EXPECT_FALSE(std::filesystem::exists(dest() / "images/other.img"));
}

TEST_P(DownloaderTest, InvalidRequestsAreRejectedBeforeAnythingIsWritten) {
    start_server();
    auto list = mirrors({"/m1/"});
    Downloader downloader(options());
    auto bad_digest = make_request(list, "x.rpm", "abc");
    bad_digest.expected_digest = "1234";
    auto result = downloader.run(dest(), std::vector<DownloadRequest>{bad_digest});
    ASSERT_FALSE(result.has_value());
    EXPECT_EQ(result.error().code, ErrorCode::BadInput);
    auto escaping = make_request(list, "x.rpm", "abc", "../x.rpm");
    result = downloader.run(dest(), std::vector<DownloadRequest>{escaping});
    ASSERT_FALSE(result.has_value());
    EXPECT_EQ(result.error().code, ErrorCode::Unsafe);
    EXPECT_TRUE(server_->requests().empty());
}

TEST(MirrorList, KeepsOrderUntilAMirrorFailsRepeatedly) {
    MirrorList list({"a", "b", "c"}, 2);
    list.record_failure("a");
    list.record_success("a");
    list.record_failure("a");
    EXPECT_EQ(list.order(), (std::vector<std::string>{"a", "b", "c"}));  // success reset it
    list.record_failure("a");
    EXPECT_EQ(list.order(), (std::vector<std::string>{"b", "c", "a"}));
    list.record_failure("unknown");
    EXPECT_EQ(list.size(), 3U);
}

TEST(Download, PartFileNameIsHiddenBesideTheFile) {
    EXPECT_EQ(part_file_name("foo-1.0.rpm"), ".foo-1.0.rpm.part");
    EXPECT_EQ(file_status_name(FileStatus::AlreadyPresent), "already-present");
}

}  // namespace
}  // namespace rpmirror
