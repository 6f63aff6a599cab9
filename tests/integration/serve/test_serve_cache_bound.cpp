// `rpmirror serve`'s cache-max-size end to end: an on-demand mirror of the sample repository
// (the real sync, an upstream nginx, the real server, curl) kept under its bound by removing the
// least recently served packages, never one a kept snapshot holds; a removed package fetched
// again on demand; bad values refused naming the file, line and value.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "integration/serve/serve_fixture.hpp"
#include "support/http_server.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

class ServeCacheBoundTest : public ServeFixture {
  protected:
    // The client's copy of `href` through the server; fails the test unless it is upstream's.
    void download(const std::string& href) {
        const HttpReply reply = get("/sample/" + href);
        ASSERT_EQ(reply.status, 200) << href << "\n" << server_log();
        EXPECT_EQ(reply.body, read_file(upstream_ / href)) << href;
    }

    // The sample of `family` for the job "sample" in the server's /metrics; -1 iff none.
    long long metric(const std::string& family) {
        const std::string text = get("/metrics").body;
        const std::string prefix = family + "{job=\"sample\"} ";
        const std::size_t at = text.find(prefix);
        return at == std::string::npos ? -1 : std::stoll(text.substr(at + prefix.size()));
    }

    bool held(const std::string& href) const { return fs::is_regular_file(mirror() / href); }

    std::uint64_t size_of(const std::string& href) const { return fs::file_size(upstream_ / href); }

    // `rpmirror verify` of the mirror; fails the test unless it passes, counting `not_held`
    // packages as not held, not as missing.
    void expect_verified(std::size_t not_held) {
        const CommandResult verified = run_to_end(
            {rpmirror_binary(), "verify", "-p", mirror_root().string(), "--repo", "sample"},
            tmp_ / "logs");
        EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;
        const std::string told = verified.out + verified.err;
        EXPECT_NE(told.find(std::to_string(not_held) + " packages not held (on demand"),
                  std::string::npos)
            << told;
    }
};

TEST_F(ServeCacheBoundTest, TheLeastRecentlyServedAreRemovedAndFetchedAgainOnDemand) {
    // Room for the last three packages asked for, not for four.
    const std::vector<std::string> order{kTinyHref, kSmallHref, kMediumHref, kDocsHref, kDataHref};
    const std::uint64_t bound = size_of(kMediumHref) + size_of(kDocsHref) + size_of(kDataHref);
    add_to_job("download-policy = on-demand\ncache-max-size = " + std::to_string(bound) + "\n");
    sync_job();
    start_server();
    for (const std::string& href : order) {
        download(href);
    }
    EXPECT_FALSE(held(kTinyHref)) << "the least recently served is removed\n" << server_log();
    EXPECT_FALSE(held(kSmallHref)) << server_log();
    for (const std::string& href : {kMediumHref, kDocsHref, kDataHref}) {
        ASSERT_TRUE(held(href)) << href << " (the most recently served stay)\n" << server_log();
        EXPECT_EQ(read_file(mirror() / href), read_file(upstream_ / href)) << href;
    }
    EXPECT_TRUE(fs::is_regular_file(mirror() / "repodata" / "repomd.xml")) << "metadata stays";
    EXPECT_EQ(metric("rpmirror_serve_evictions_total"), 2);
    EXPECT_EQ(metric("rpmirror_serve_held_bytes"), static_cast<long long>(bound));
    expect_verified(2);  // a removed package is listed, not held: no damage

    // A removed package is fetched again on demand, intact, and the least recently served of
    // those held makes room for it.
    EXPECT_EQ(upstream_requests(kTinyHref), 1U);
    download(kTinyHref);
    EXPECT_EQ(upstream_requests(kTinyHref), 2U) << "fetched again from upstream";
    EXPECT_TRUE(held(kTinyHref));
    EXPECT_FALSE(held(kMediumHref)) << server_log();
    EXPECT_LE(metric("rpmirror_serve_held_bytes"), static_cast<long long>(bound));
    EXPECT_GE(metric("rpmirror_serve_evictions_total"), 3);

    // Served from the mirror (a hit) makes a package the most recently served: asking for docs
    // then medium removes data, not docs.
    download(kDocsHref);
    EXPECT_EQ(upstream_requests(kDocsHref), 1U) << "a hit: upstream not asked";
    download(kMediumHref);
    EXPECT_TRUE(held(kDocsHref)) << server_log();
    EXPECT_TRUE(held(kMediumHref)) << server_log();
    EXPECT_FALSE(held(kDataHref)) << server_log();
    expect_verified(2);  // small and data
}

TEST_F(ServeCacheBoundTest, APackageAKeptSnapshotHoldsIsNeverRemoved) {
    // Mirrored whole with two packages, and a snapshot of that taken; then on demand.
    const std::string first = read_file(config_);
    add_to_job("includepkgs = rpmirror-sample-tiny rpmirror-sample-small\nsnapshot = pinned\n");
    sync_job();
    const fs::path snapshot = mirror_root() / "snapshots" / "sample" / "pinned";
    ASSERT_TRUE(fs::is_regular_file(snapshot / kTinyHref));
    ASSERT_TRUE(fs::is_regular_file(snapshot / kSmallHref));
    TempDir::write_at(config_, first + "download-policy = on-demand\ncache-max-size = 1\n");
    sync_job();
    start_server();
    for (const std::string& href : {kMediumHref, kDocsHref, kDataHref}) {
        download(href);
    }
    // Least recently served, but held by the snapshot: kept.
    EXPECT_TRUE(held(kTinyHref)) << server_log();
    EXPECT_TRUE(held(kSmallHref)) << server_log();
    EXPECT_EQ(read_file(mirror() / kTinyHref), read_file(upstream_ / kTinyHref));
    EXPECT_FALSE(held(kMediumHref)) << server_log();
    EXPECT_FALSE(held(kDocsHref)) << server_log();
    EXPECT_TRUE(held(kDataHref)) << "the package just kept stays\n" << server_log();
    EXPECT_EQ(metric("rpmirror_serve_evictions_total"), 2);
    expect_verified(2);  // medium and docs
}

TEST_F(ServeCacheBoundTest, BadValuesAreRefusedNamingFileLineAndValue) {
    const std::string first = read_file(config_);
    const auto refused = [&](const std::string& lines, const std::string& value) {
        TempDir::write_at(config_, first + lines);
        const CommandResult run = run_to_end({rpmirror_binary(), "serve", "--config-file",
                                              config_.string(), "--listen", "127.0.0.1:0"},
                                             tmp_ / "logs");
        EXPECT_NE(run.exit_code, 0) << lines;
        EXPECT_NE(run.err.find(config_.string() + ":7:"), std::string::npos) << run.err;
        EXPECT_NE(run.err.find("cache-max-size"), std::string::npos) << run.err;
        EXPECT_NE(run.err.find("'" + value + "'"), std::string::npos) << run.err;
    };
    refused("cache-max-size = 10X\ndownload-policy = on-demand\n", "10X");
    refused("cache-max-size = 0\ndownload-policy = on-demand\n", "0");
    refused("cache-max-size = 10G\n", "10G");  // immediate
    refused("cache-max-size = 500M\ndownload-policy = streamed\n", "500M");

    // In [main] it bounds the on-demand jobs and leaves an immediate job alone.
    std::string in_main = first;
    in_main.insert(in_main.find('\n') + 1, "cache-max-size = 10G\n");
    TempDir::write_at(config_, in_main);
    sync_job();
    EXPECT_TRUE(held(kTinyHref)) << "an immediate job syncs as before";
    start_server();
    download(kTinyHref);

    const CommandResult option =
        run_to_end({rpmirror_binary(), "serve", "--config-file", config_.string(),
                    "--cache-max-size", "1Q", "--listen", "127.0.0.1:0"},
                   tmp_ / "logs");
    EXPECT_NE(option.exit_code, 0);
    EXPECT_NE(option.err.find("--cache-max-size '1Q'"), std::string::npos) << option.err;
}

}  // namespace
}  // namespace rpmirror::test
