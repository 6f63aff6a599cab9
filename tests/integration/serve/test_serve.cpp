// `rpmirror serve` end to end: a mirror made by the real sync, served by the real binary, read by
// dnf and curl; ranges and conditional requests; hostile paths; a new publication picked up with
// the old revision's records still served.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "integration/serve/serve_fixture.hpp"
#include "rpmirror/checksum/checksum.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

class ServeTest : public ServeFixture {};

TEST_F(ServeTest, DnfReadsAndDownloadsTheMirrorThroughServe) {
    sync_job();
    start_server();
    const std::vector<std::string> dnf = isolated_dnf(tmp_ / "dnf");
    std::vector<std::string> query = dnf;
    query.insert(query.end(), {"--repofrompath=m," + url("/sample/"), "--repo=m", "repoquery", "-a",
                               "--qf", "%{name}"});
    const CommandResult listed = run_to_end(query, tmp_ / "logs");
    ASSERT_EQ(listed.exit_code, 0) << listed.err << server_log();
    EXPECT_EQ(lines_of(listed.out).size(), 5U) << listed.out;
    EXPECT_NE(listed.out.find("rpmirror-sample-tiny"), std::string::npos) << listed.out;

    std::vector<std::string> download = dnf;
    download.insert(download.end(),
                    {"--repofrompath=m," + url("/sample/"), "--repo=m", "download", "--destdir",
                     (tmp_ / "got").string(), "rpmirror-sample-medium"});
    const CommandResult got = run_to_end(download, tmp_ / "logs");
    ASSERT_EQ(got.exit_code, 0) << got.err << server_log();
    EXPECT_EQ(read_file(tmp_ / "got" / kMedium), read_file(mirror() / kMediumHref));
    // One access log line per request.
    EXPECT_NE(server_log().find("\"GET /sample/repodata/repomd.xml\" 200"), std::string::npos)
        << server_log();
    EXPECT_NE(server_log().find("\"GET /sample/" + kMediumHref + "\" 200"), std::string::npos)
        << server_log();
}

TEST_F(ServeTest, RangesHeadAndConditionalRequests) {
    sync_job();
    start_server();
    const std::string path = "/sample/" + kSmallHref;
    const std::string file = read_file(mirror() / kSmallHref);
    const std::string etag = "\"" + hash_bytes(ChecksumType::Sha256, file) + "\"";

    const HttpReply whole = get(path);
    ASSERT_EQ(whole.status, 200) << server_log();
    EXPECT_EQ(whole.body, file);
    EXPECT_EQ(whole.headers.at("content-length"), std::to_string(file.size()));
    EXPECT_EQ(whole.headers.at("etag"), etag) << "the metadata's checksum is the entity tag";
    EXPECT_EQ(whole.headers.at("accept-ranges"), "bytes");
    ASSERT_TRUE(whole.headers.contains("last-modified"));

    // One connection for several requests (keep-alive): the second transfer connects no more.
    const CommandResult two = run_to_end({"curl", "-sS", "-o", "/dev/null", "-o", "/dev/null", "-w",
                                          "%{num_connects}\n", url(path), url(path)},
                                         tmp_ / "logs");
    EXPECT_EQ(two.out, "1\n0\n") << two.err;

    const HttpReply head = get(path, {}, true);
    EXPECT_EQ(head.status, 200);
    EXPECT_EQ(head.headers.at("content-length"), std::to_string(file.size()));
    EXPECT_EQ(head.downloaded, 0) << "no body";

    const HttpReply first = get(path, {"Range: bytes=0-9"});
    EXPECT_EQ(first.status, 206);
    EXPECT_EQ(first.body, file.substr(0, 10));
    EXPECT_EQ(first.headers.at("content-range"), "bytes 0-9/" + std::to_string(file.size()));

    const HttpReply tail = get(path, {"Range: bytes=-7"});
    EXPECT_EQ(tail.status, 206);
    EXPECT_EQ(tail.body, file.substr(file.size() - 7));

    const HttpReply middle = get(path, {"Range: bytes=100-"});
    EXPECT_EQ(middle.status, 206);
    EXPECT_EQ(middle.body, file.substr(100));

    const HttpReply past = get(path, {"Range: bytes=" + std::to_string(file.size()) + "-"});
    EXPECT_EQ(past.status, 416);
    EXPECT_EQ(past.headers.at("content-range"), "bytes */" + std::to_string(file.size()));

    const HttpReply stale_if_range = get(path, {"Range: bytes=0-9", "If-Range: \"other\""});
    EXPECT_EQ(stale_if_range.status, 200);
    EXPECT_EQ(stale_if_range.body, file);

    const HttpReply cached = get(path, {"If-None-Match: " + etag});
    EXPECT_EQ(cached.status, 304);
    EXPECT_TRUE(cached.body.empty());
    EXPECT_EQ(get(path, {"If-None-Match: \"other\""}).status, 200);
    const HttpReply since = get(path, {"If-Modified-Since: " + whole.headers.at("last-modified")});
    EXPECT_EQ(since.status, 304);

    const HttpReply repomd = get("/sample/repodata/repomd.xml");
    EXPECT_EQ(repomd.status, 200);
    EXPECT_EQ(repomd.body, read_file(mirror() / "repodata" / "repomd.xml"));
    EXPECT_EQ(
        get("/sample/repodata/repomd.xml", {"If-None-Match: " + repomd.headers.at("etag")}).status,
        304);
}

TEST_F(ServeTest, OnlyListedFilesAndNoHostilePath) {
    sync_job();
    const std::string secret = "secret bytes that must never be served\n";
    TempDir::write_at(mirror() / "secret.txt", secret);
    TempDir::write_at(mirror_root() / "outside.txt", secret);
    TempDir::write_at(tmp_ / "outside.rpm", secret);
    // A listed package replaced by a symlink to a file outside the mirror.
    fs::remove(mirror() / kDataHref);
    fs::create_symlink(tmp_ / "outside.rpm", mirror() / kDataHref);
    fs::create_symlink(tmp_.path(), mirror() / "escape");
    start_server();
    const std::vector<std::string> refused{
        "/sample/secret.txt",
        "/sample/../outside.txt",
        "/sample/%2e%2e/outside.txt",
        "/sample/%2E%2E/outside.txt",
        "/sample/Packages/..%2f..%2fsecret.txt",
        "/sample/Packages/%2e%2e/secret.txt",
        "/sample/Packages\\..\\secret.txt",
        "/sample/./secret.txt",
        "/sample//secret.txt",
        "/sample/escape/outside.rpm",
        "/sample/" + kDataHref,
        "/sample/repodata/",
        "/sample/",
        "/",
        "/other/repodata/repomd.xml",
        "/sample/%00/secret.txt",
        "/sample/.rpmirror/treeinfo.json",
        "/%2e%2e/etc/passwd",
        "/sample/../../../../../../etc/passwd",
    };
    for (const std::string& path : refused) {
        const HttpReply reply = get(path);
        EXPECT_EQ(reply.status, 404) << path << "\n" << server_log();
        EXPECT_EQ(reply.body.find("secret bytes"), std::string::npos) << path;
        EXPECT_EQ(reply.body.find("root:"), std::string::npos) << path;
    }
    EXPECT_EQ(get("/sample/" + kTinyHref).status, 200) << "listed files are still served";
}

TEST_F(ServeTest, ANewPublicationIsServedAndTheOldRecordsStayForTheGracePeriod) {
    sync_job();
    start_server();
    const HttpReply old_index = get("/sample/repodata/repomd.xml");
    ASSERT_EQ(old_index.status, 200);
    const fs::path old_primary = only_file_ending(mirror() / "repodata", "-primary.xml.gz");
    const std::string old_primary_bytes = read_file(old_primary);
    const std::string old_primary_path = "/sample/repodata/" + old_primary.filename().string();

    fs::remove(upstream_ / kDocsHref);
    recreate_repo(upstream_, "2", tmp_ / "logs");
    sync_job();
    ASSERT_FALSE(fs::exists(old_primary)) << "the sync removed the old revision's records";

    const HttpReply new_index = get("/sample/repodata/repomd.xml");
    ASSERT_EQ(new_index.status, 200);
    EXPECT_EQ(new_index.body, read_file(mirror() / "repodata" / "repomd.xml"));
    EXPECT_NE(new_index.headers.at("etag"), old_index.headers.at("etag"));
    const fs::path new_primary = only_file_ending(mirror() / "repodata", "-primary.xml.gz");
    EXPECT_EQ(get("/sample/repodata/" + new_primary.filename().string()).body,
              read_file(new_primary));
    const HttpReply old = get(old_primary_path);
    EXPECT_EQ(old.status, 200) << "a client that read the old repomd.xml still gets its primary";
    EXPECT_EQ(old.body, old_primary_bytes);
    EXPECT_EQ(get("/sample/" + kDocsHref).status, 200)
        << "the old revision lists it, and it is held";

    // Without a grace period only the current revision is served.
    start_server({"--grace", "0"});
    EXPECT_EQ(get(old_primary_path).status, 404);
    EXPECT_EQ(get("/sample/" + kDocsHref).status, 404) << "no longer listed";
    EXPECT_EQ(get("/sample/" + kTinyHref).status, 200);
}

TEST_F(ServeTest, MetricsCountRequestsHitsMissesAndBytes) {
    sync_job();
    start_server();
    const std::string file = read_file(mirror() / kTinyHref);
    EXPECT_EQ(get("/sample/" + kTinyHref).status, 200);
    EXPECT_EQ(get("/sample/" + kTinyHref, {"Range: bytes=0-4"}).status, 206);
    EXPECT_EQ(get("/sample/not-listed.rpm").status, 404);
    EXPECT_EQ(get("/sample/%2e%2e/x").status, 404);
    const HttpReply metrics = get("/metrics");
    ASSERT_EQ(metrics.status, 200);
    EXPECT_EQ(metrics.headers.at("content-type"), "text/plain; version=0.0.4");
    const std::vector<std::string> lines = lines_of(metrics.body);
    const auto has = [&](const std::string& line) {
        return std::find(lines.begin(), lines.end(), line) != lines.end();
    };
    EXPECT_TRUE(has("# TYPE rpmirror_serve_requests_total counter")) << metrics.body;
    EXPECT_TRUE(has("rpmirror_serve_requests_total{job=\"sample\"} 3")) << metrics.body;
    EXPECT_TRUE(has("rpmirror_serve_hits_total{job=\"sample\"} 2")) << metrics.body;
    EXPECT_TRUE(has("rpmirror_serve_misses_total{job=\"sample\"} 1")) << metrics.body;
    EXPECT_TRUE(
        has("rpmirror_serve_sent_bytes_total{job=\"sample\"} " + std::to_string(file.size() + 5)))
        << metrics.body;
    EXPECT_TRUE(has("rpmirror_serve_refused_total{job=\"\"} 1")) << metrics.body;
    EXPECT_TRUE(has("rpmirror_serve_errors_total{job=\"sample\"} 0")) << metrics.body;
}

TEST_F(ServeTest, TwentyClientsAtOnceEachGetEveryPackageIntact) {
    sync_job();
    start_server();
    const std::vector<std::string> hrefs{kTinyHref, kSmallHref, kMediumHref, kDocsHref, kDataHref};
    std::vector<std::string> argv{"curl", "-sS", "--fail", "-Z", "--parallel-max", "20"};
    for (int client = 0; client < 20; ++client) {
        for (std::size_t i = 0; i < hrefs.size(); ++i) {
            argv.insert(argv.end(),
                        {"-o", (tmp_ / "got" / std::to_string(client) / hrefs[i]).string(),
                         "--create-dirs", url("/sample/" + hrefs[i])});
        }
    }
    const CommandResult fetched = run_to_end(argv, tmp_ / "logs");
    ASSERT_EQ(fetched.exit_code, 0) << fetched.err << server_log();
    for (int client = 0; client < 20; ++client) {
        for (const std::string& href : hrefs) {
            EXPECT_EQ(read_file(tmp_ / "got" / std::to_string(client) / href),
                      read_file(mirror() / href))
                << client << " " << href;
        }
    }
}

TEST_F(ServeTest, ListenInMainIsTheDefaultAddress) {
    sync_job();
    std::string config = read_file(config_);
    config.insert(config.find("[main]\n") + 7, "listen = 127.0.0.1:0\n");
    TempDir::write_at(config_, config);
    start_server({}, false);
    EXPECT_EQ(get("/sample/repodata/repomd.xml").status, 200) << server_log();
}

TEST_F(ServeTest, BadCommandLinesAndMethods) {
    const CommandResult no_address =
        run_to_end({rpmirror_binary(), "serve", "--config-file", config_.string()}, tmp_ / "logs");
    EXPECT_EQ(no_address.exit_code, 2);
    EXPECT_NE(no_address.err.find("no address to listen on"), std::string::npos) << no_address.err;
    const CommandResult bad_address = run_to_end(
        {rpmirror_binary(), "serve", "--config-file", config_.string(), "--listen", "127.0.0.1"},
        tmp_ / "logs");
    EXPECT_EQ(bad_address.exit_code, 2);
    EXPECT_NE(bad_address.err.find("listen address '127.0.0.1': expected ADDR:PORT"),
              std::string::npos)
        << bad_address.err;
    const CommandResult no_job =
        run_to_end({rpmirror_binary(), "serve", "--config-file", config_.string(), "--job",
                    "nothing", "--listen", "127.0.0.1:0"},
                   tmp_ / "logs");
    EXPECT_EQ(no_job.exit_code, 2);
    EXPECT_NE(no_job.err.find("nothing"), std::string::npos) << no_job.err;

    sync_job();
    start_server();
    const CommandResult post = run_to_end({"curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}",
                                           "-X", "POST", url("/sample/repodata/repomd.xml")},
                                          tmp_ / "logs");
    EXPECT_EQ(post.out, "405");
    server_->signal(SIGTERM);
    EXPECT_EQ(server_->wait(), 0) << "a server stopped by SIGTERM ends well\n" << server_log();
}

}  // namespace
}  // namespace rpmirror::test
