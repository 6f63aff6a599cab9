// `rpmirror serve` of jobs whose destination is a bucket of the real Ceph RADOS Gateway, end to
// end: the real `rpmirror sync --config-file` mirrors an upstream nginx into s3://BUCKET/PREFIX,
// the real server reads it through the store, and dnf and curl are its clients. An immediate job
// is served whole (GET, HEAD, a Range); an on-demand job's package is fetched at its first
// request, checked, kept in the bucket, and served from there once upstream is gone.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "integration/s3/s3_sync_fixture.hpp"
#include "integration/serve/serve_client.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

class S3Serve : public S3SyncTest {
  protected:
    void SetUp() override {
        S3SyncTest::SetUp();
        const std::string job = "baseurl = " + repo_url_ + "\ndownload-metadata = 1\n";
        config_ = TempDir::write_at(tmp_ / "etc" / "rpmirror.conf",
                                    "[main]\ndestination = " + destination() + "\n\n[sample]\n" +
                                        job + "\n[lazy]\n" + job +
                                        "download-policy = on-demand\nretries = 1\n");
        const CommandResult synced =
            run_to_end(rpmirror_sync_argv({"--config-file", config_.string()}), tmp_ / "logs");
        ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
        start_serve({rpmirror_binary(), "serve", "--config-file", config_.string(), "--listen",
                     "127.0.0.1:0"},
                    tmp_ / "serve-logs", serving_, base_);
    }

    HttpReply get(const std::string& path, const std::vector<std::string>& headers = {},
                  bool head = false) {
        return http_request(base_ + path, tmp_ / ("curl-" + std::to_string(++requests_)), headers,
                            head);
    }

    std::string server_log() const { return serving_ ? serving_->err() : std::string(); }

    // The key of `relative` in the job `job`'s repository.
    std::string job_key(const std::string& job, const std::string& relative) const {
        return prefix_ + "/" + job + "/" + relative;
    }

    fs::path config_;
    std::unique_ptr<RunningCommand> serving_;
    std::string base_;
    int requests_ = 0;
};

TEST_F(S3Serve, AnImmediateJobInABucketIsServedWholeWithHeadAndRanges) {
    const std::string repomd = read_file(upstream_ / "repodata" / "repomd.xml");
    const HttpReply index = get("/sample/repodata/repomd.xml");
    ASSERT_EQ(index.status, 200) << server_log();
    EXPECT_EQ(index.body, repomd);

    const std::string file = read_file(upstream_ / kSmallHref);
    const std::string path = "/sample/" + kSmallHref;
    const HttpReply whole = get(path);
    ASSERT_EQ(whole.status, 200) << server_log();
    EXPECT_EQ(whole.body, file);
    EXPECT_EQ(whole.headers.at("content-length"), std::to_string(file.size()));

    const HttpReply head = get(path, {}, true);
    EXPECT_EQ(head.status, 200) << server_log();
    EXPECT_EQ(head.headers.at("content-length"), std::to_string(file.size()));
    EXPECT_EQ(head.downloaded, 0) << "no body";

    const HttpReply range = get(path, {"Range: bytes=100-199"});
    EXPECT_EQ(range.status, 206) << server_log();
    EXPECT_EQ(range.body, file.substr(100, 100));
    EXPECT_EQ(range.headers.at("content-range"), "bytes 100-199/" + std::to_string(file.size()));

    EXPECT_EQ(get("/sample/Packages/not-listed.rpm").status, 404);

    // dnf reads the repository and downloads a package through the server.
    std::vector<std::string> download = isolated_dnf(tmp_ / "dnf");
    download.insert(download.end(),
                    {"--repofrompath=m," + base_ + "/sample/", "--repo=m", "download", "--destdir",
                     (tmp_ / "got").string(), "rpmirror-sample-medium"});
    const CommandResult got = run_to_end(download, tmp_ / "logs");
    ASSERT_EQ(got.exit_code, 0) << got.err << server_log();
    EXPECT_EQ(read_file(tmp_ / "got" / kMedium), read_file(upstream_ / kMediumHref));
}

TEST_F(S3Serve, AnOnDemandJobInABucketKeepsAFetchedPackageThereAndServesItFromThere) {
    // The sync published metadata only.
    ASSERT_TRUE(client().head_object(bucket(), job_key("lazy", "repodata/repomd.xml")));
    const auto before = client().head_object(bucket(), job_key("lazy", kMediumHref));
    ASSERT_FALSE(before);
    EXPECT_EQ(before.error().code, ErrorCode::NotFound) << before.error().to_string();

    const std::string file = read_file(upstream_ / kMediumHref);
    const std::string path = "/lazy/" + kMediumHref;
    const HttpReply miss = get(path);
    ASSERT_EQ(miss.status, 200) << server_log();
    EXPECT_EQ(miss.body, file);
    EXPECT_EQ(miss.headers.at("content-length"), std::to_string(file.size()));

    // Checked and kept in the bucket under its final key.
    auto kept = client().get_object(bucket(), job_key("lazy", kMediumHref));
    ASSERT_TRUE(kept) << kept.error().to_string() << "\n" << server_log();
    EXPECT_EQ(*kept, file);

    // Upstream gone: the package is served from the bucket (a HEAD and a Range too).
    server_.reset();
    const HttpReply hit = get(path);
    ASSERT_EQ(hit.status, 200) << server_log();
    EXPECT_EQ(hit.body, file);
    const HttpReply head = get(path, {}, true);
    EXPECT_EQ(head.status, 200) << server_log();
    EXPECT_EQ(head.headers.at("content-length"), std::to_string(file.size()));
    const HttpReply range = get(path, {"Range: bytes=10-19"});
    EXPECT_EQ(range.status, 206) << server_log();
    EXPECT_EQ(range.body, file.substr(10, 10));

    // A package not fetched yet cannot be now: an error, and nothing kept.
    const HttpReply unreachable = get("/lazy/" + kTinyHref);
    EXPECT_EQ(unreachable.status, 502) << server_log();
    EXPECT_FALSE(client().head_object(bucket(), job_key("lazy", kTinyHref)));
}

}  // namespace
}  // namespace rpmirror::test
