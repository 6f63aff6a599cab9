// `rpmirror serve` of on-demand and streamed mirrors (download-policy), end to end: the real sync
// publishes metadata only, the real server fetches each package from an upstream nginx (or the
// fault server) at its first request, passes it on as it arrives and keeps it only once it
// matches the metadata; dnf installs through it; the upstream's access log counts the fetches.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "integration/serve/serve_fixture.hpp"
#include "support/http_server.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kHrefs{kTinyHref, kSmallHref, kMediumHref, kDocsHref, kDataHref};

class ServeOnDemandTest : public ServeFixture {
  protected:
    // The fixture's job with `lines` added ("download-policy = on-demand\n").
    void add_to_job(const std::string& lines) {
        TempDir::write_at(config_, read_file(config_) + lines);
    }

    // How many times the upstream nginx was asked for `href`, up to now.
    std::size_t upstream_requests(const std::string& href) {
        const std::vector<std::string> uris = uris_since(*servers_.front(), 0);
        return static_cast<std::size_t>(std::count(uris.begin(), uris.end(), "/" + href));
    }

    // The regular files beneath `dir` (none iff it does not exist), as paths relative to it.
    static std::vector<std::string> files_in(const fs::path& dir) {
        std::vector<std::string> files;
        if (!fs::exists(dir)) {
            return files;
        }
        for (const auto& entry : fs::recursive_directory_iterator(dir)) {
            if (entry.is_regular_file()) {
                files.push_back(entry.path().lexically_relative(dir).string());
            }
        }
        std::sort(files.begin(), files.end());
        return files;
    }

    // curl of `path` into `out`, as it is: its exit status and the bytes it received.
    CommandResult curl_to(const std::string& path, const fs::path& out) {
        return run_to_end(
            {"curl", "-sS", "--fail", "-o", out.string(), "-w", "%{size_download}", url(path)},
            tmp_ / "logs");
    }
};

TEST_F(ServeOnDemandTest, SyncPublishesMetadataOnlyAndDnfInstallsThroughServe) {
    add_to_job("download-policy = on-demand\n");
    sync_job();
    EXPECT_TRUE(fs::exists(mirror() / "repodata" / "repomd.xml"));
    EXPECT_TRUE(files_in(mirror() / "Packages").empty()) << "on demand: no package fetched";
    EXPECT_EQ(upstream_requests(kTinyHref), 0U);

    // A snapshot must not be taken of a mirror that lacks packages.
    const CommandResult refused = run_to_end(
        {rpmirror_binary(), "snapshot", "create", "--repo", "sample", "-p", mirror_root().string()},
        tmp_ / "logs");
    EXPECT_NE(refused.exit_code, 0) << refused.out << refused.err;
    EXPECT_NE(refused.err.find("download-policy immediate"), std::string::npos) << refused.err;

    start_server();
    const fs::path root = tmp_ / "root";
    const fs::path work = tmp_ / "dnf";
    std::vector<std::string> install = isolated_dnf(work);
    fs::create_directories(work / "log");
    install.insert(install.end(),
                   {"--disableplugin=*", "--nogpgcheck", "--installroot", root.string(),
                    "--repofrompath=m," + url("/sample/"), "--repo=m", "install",
                    "rpmirror-sample-tiny", "rpmirror-sample-small", "rpmirror-sample-medium",
                    "rpmirror-sample-docs", "rpmirror-sample-data"});
    const CommandResult installed = run_to_end(install, tmp_ / "logs");
    ASSERT_EQ(installed.exit_code, 0) << installed.out << installed.err << server_log();
    const CommandResult query =
        run_to_end({"rpm", "-q", "--root", root.string(), "rpmirror-sample-medium"}, tmp_ / "logs");
    EXPECT_EQ(query.exit_code, 0) << query.out << query.err;
    for (const std::string& href : kHrefs) {
        ASSERT_TRUE(fs::is_regular_file(mirror() / href)) << href << " kept\n" << server_log();
        EXPECT_EQ(read_file(mirror() / href), read_file(upstream_ / href)) << href;
        EXPECT_EQ(upstream_requests(href), 1U) << href;
        EXPECT_NE(server_log().find("\"GET /sample/" + href + "\" 200"), std::string::npos)
            << server_log();
    }
    EXPECT_EQ(files_in(mirror() / "Packages").size(), kHrefs.size())
        << "nothing but the packages (no temporary file left)";

    const CommandResult verified =
        run_to_end({rpmirror_binary(), "verify", "-p", mirror_root().string(), "--repo", "sample"},
                   tmp_ / "logs");
    EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;

    // Held now: served from the mirror, upstream not asked again.
    EXPECT_EQ(get("/sample/" + kMediumHref).body, read_file(upstream_ / kMediumHref));
    EXPECT_EQ(upstream_requests(kMediumHref), 1U);
}

TEST_F(ServeOnDemandTest, ConcurrentClientsShareOneUpstreamFetch) {
    add_to_job("download-policy = on-demand\n");
    sync_job();
    start_server();
    std::vector<std::string> argv{"curl", "-sS", "--fail", "-Z", "--parallel-max", "40"};
    for (int client = 0; client < 20; ++client) {
        for (const std::string& href : kHrefs) {
            argv.insert(argv.end(), {"-o", (tmp_ / "got" / std::to_string(client) / href).string(),
                                     "--create-dirs", url("/sample/" + href)});
        }
    }
    const CommandResult fetched = run_to_end(argv, tmp_ / "logs");
    ASSERT_EQ(fetched.exit_code, 0) << fetched.err << server_log();
    const HttpReply metrics = get("/metrics");
    EXPECT_NE(metrics.body.find("\nrpmirror_serve_upstream_fetches_total{job=\"sample\"} 5\n"),
              std::string::npos)
        << metrics.body;
    EXPECT_NE(metrics.body.find("\nrpmirror_serve_upstream_failures_total{job=\"sample\"} 0\n"),
              std::string::npos)
        << metrics.body;
    for (const std::string& href : kHrefs) {
        EXPECT_EQ(upstream_requests(href), 1U) << href << " fetched from upstream exactly once";
        EXPECT_EQ(read_file(mirror() / href), read_file(upstream_ / href)) << href;
        for (int client = 0; client < 20; ++client) {
            EXPECT_EQ(read_file(tmp_ / "got" / std::to_string(client) / href),
                      read_file(upstream_ / href))
                << client << " " << href;
        }
    }
}

TEST_F(ServeOnDemandTest, ATamperedPackageIsCutShortAndNothingIsKept) {
    FaultServer faulty(
        upstream_,
        nlohmann::json{
            {"paths", {{"/" + kMediumHref, {{{"corrupt", true}, {"trickle", {32768, 0.05}}}}}}}},
        tmp_.path());
    TempDir::write_at(config_, "[main]\ndestination = " + mirror_root().string() +
                                   "\n\n[sample]\nbaseurl = " + faulty.url("/") +
                                   "\ndownload-metadata = 1\ndownload-policy = on-demand\n"
                                   "retries = 1\n");
    sync_job();
    start_server();
    const std::string listed = read_file(upstream_ / kMediumHref);
    const CommandResult first = curl_to("/sample/" + kMediumHref, tmp_ / "first.rpm");
    EXPECT_NE(first.exit_code, 0) << "the client sees the response cut short\n" << server_log();
    EXPECT_LT(std::stoull(first.out), listed.size()) << first.out;
    // The response may be cut at the fetch's second attempt, before the fetch gives up.
    EXPECT_TRUE(wait_until([&] {
        return server_log().find("not fetched from upstream, nothing kept") != std::string::npos;
    })) << server_log();
    EXPECT_FALSE(fs::exists(mirror() / kMediumHref)) << "nothing kept under the final name";
    EXPECT_TRUE(files_in(mirror() / "Packages").empty()) << "nor under any other";
    EXPECT_NE(
        get("/metrics").body.find("\nrpmirror_serve_upstream_failures_total{job=\"sample\"} 1\n"),
        std::string::npos)
        << "counted before the fetch ends";

    // The next request fetches again (and fails again: upstream still serves wrong bytes).
    const std::size_t before = faulty.requests_for("/" + kMediumHref).size();
    EXPECT_GE(before, 1U);
    const CommandResult second = curl_to("/sample/" + kMediumHref, tmp_ / "second.rpm");
    EXPECT_NE(second.exit_code, 0);
    EXPECT_GT(faulty.requests_for("/" + kMediumHref).size(), before);
    EXPECT_FALSE(fs::exists(mirror() / kMediumHref));

    // A good package of the same upstream is fetched, verified and kept.
    const CommandResult good = curl_to("/sample/" + kSmallHref, tmp_ / "small.rpm");
    EXPECT_EQ(good.exit_code, 0) << good.err << server_log();
    EXPECT_EQ(read_file(tmp_ / "small.rpm"), read_file(upstream_ / kSmallHref));
    EXPECT_EQ(read_file(mirror() / kSmallHref), read_file(upstream_ / kSmallHref));
}

TEST_F(ServeOnDemandTest, StreamedPassesPackagesOnAndKeepsNothing) {
    add_to_job("download-policy = streamed\n");
    sync_job();
    start_server();
    for (int round = 1; round <= 2; ++round) {
        const HttpReply reply = get("/sample/" + kTinyHref);
        EXPECT_EQ(reply.status, 200) << server_log();
        EXPECT_EQ(reply.body, read_file(upstream_ / kTinyHref));
        EXPECT_EQ(reply.headers.at("content-length"),
                  std::to_string(fs::file_size(upstream_ / kTinyHref)));
        EXPECT_EQ(upstream_requests(kTinyHref), static_cast<std::size_t>(round))
            << "nothing kept: every request goes upstream";
    }
    EXPECT_TRUE(files_in(mirror() / "Packages").empty());
}

TEST_F(ServeOnDemandTest, HeadAsksNothingOfUpstreamAndARangeWaitsForTheVerifiedPackage) {
    add_to_job("download-policy = on-demand\n");
    sync_job();
    start_server();
    const std::string file = read_file(upstream_ / kDataHref);
    const HttpReply head = get("/sample/" + kDataHref, {}, true);
    EXPECT_EQ(head.status, 200);
    EXPECT_EQ(head.headers.at("content-length"), std::to_string(file.size()));
    EXPECT_EQ(upstream_requests(kDataHref), 0U) << "HEAD answers from the metadata";

    const HttpReply part = get("/sample/" + kDataHref, {"Range: bytes=10-19"});
    EXPECT_EQ(part.status, 206) << server_log();
    EXPECT_EQ(part.body, file.substr(10, 10));
    EXPECT_EQ(read_file(mirror() / kDataHref), file) << "fetched whole, verified and kept";
    EXPECT_EQ(upstream_requests(kDataHref), 1U);
}

TEST_F(ServeOnDemandTest, BadDownloadPolicyValuesAreRejected) {
    add_to_job("download-policy = lazy\n");
    const CommandResult bad =
        run_to_end(rpmirror_sync_argv({"--config-file", config_.string()}), tmp_ / "logs");
    EXPECT_NE(bad.exit_code, 0);
    EXPECT_NE(bad.err.find(config_.string() + ":7: job 'sample': download-policy: unknown "
                                              "download policy 'lazy' (expected immediate, "
                                              "on-demand or streamed)"),
              std::string::npos)
        << bad.err;
    EXPECT_FALSE(fs::exists(mirror() / "repodata")) << "the job did not run";

    TempDir::write_at(config_, "[main]\ndestination = " + mirror_root().string() +
                                   "\n\n[sample]\nbaseurl = " + servers_.front()->url("/") +
                                   "\ndownload-policy = on-demand\n");
    const CommandResult no_metadata =
        run_to_end(rpmirror_sync_argv({"--config-file", config_.string()}), tmp_ / "logs");
    EXPECT_NE(no_metadata.exit_code, 0);
    EXPECT_NE(no_metadata.err.find(config_.string() +
                                   ":6: job 'sample': download-policy: on-demand needs "
                                   "--download-metadata"),
              std::string::npos)
        << no_metadata.err;

    const CommandResult option =
        sync({"--repofrompath", "sample," + servers_.front()->url("/"), "--repo", "sample", "-p",
              mirror_root().string(), "--download-metadata", "--download-policy", "eager"});
    EXPECT_NE(option.exit_code, 0);
    EXPECT_NE(option.err.find("--download-policy: unknown download policy 'eager'"),
              std::string::npos)
        << option.err;
}

}  // namespace
}  // namespace rpmirror::test
