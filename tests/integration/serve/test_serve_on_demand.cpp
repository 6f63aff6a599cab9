// `rpmirror serve` of on-demand and streamed mirrors (download-policy), end to end: the real sync
// publishes metadata only, the real server fetches each package from an upstream nginx (or the
// fault server) at its first request, passes it on as it arrives and keeps it only once it
// matches the metadata; dnf installs through it; the upstream's access log counts the fetches.
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "integration/serve/serve_fixture.hpp"
#include "support/http_server.hpp"
#include "support/signing.hpp"
#include "support/source_tree.hpp"
#include "support/zypper.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kHrefs{kTinyHref, kSmallHref, kMediumHref, kDocsHref, kDataHref};

// The fixture's job, on demand, fetching from `upstream` ("parallel = 2\n" etc. in `lines`).
std::string on_demand_job(const fs::path& mirror_root, const std::string& upstream,
                          const std::string& lines) {
    return "[main]\ndestination = " + mirror_root.string() + "\n\n[sample]\nbaseurl = " + upstream +
           "\ndownload-metadata = 1\ndownload-policy = on-demand\n" + lines;
}

class ServeOnDemandTest : public ServeFixture {
  protected:
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

    // Fails the test unless the mirror holds every package of kHrefs as upstream has it and
    // nothing else beside them (no temporary file), and `rpmirror verify` passes.
    void expect_every_package_kept() {
        for (const std::string& href : kHrefs) {
            EXPECT_EQ(read_file(mirror() / href), read_file(upstream_ / href)) << href;
        }
        EXPECT_EQ(files_in(mirror() / "Packages").size(), kHrefs.size())
            << "nothing but the packages (no temporary file left)";
        const CommandResult verified = run_to_end(
            {rpmirror_binary(), "verify", "-p", mirror_root().string(), "--repo", "sample"},
            tmp_ / "logs");
        EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;
    }

    // `clients` clients at once (curl -Z), each asking the server for every package of `hrefs`
    // (kHrefs unless given) of the job; fails the test unless each one received every package
    // as `upstream` (upstream_ unless given) has it.
    void every_package_at_once(int clients, const std::vector<std::string>& hrefs = kHrefs,
                               const fs::path& upstream = {}) {
        // A config file (-K), not arguments: thousands of transfers would overflow the command
        // line.
        std::string transfers;
        for (int client = 0; client < clients; ++client) {
            for (const std::string& href : hrefs) {
                transfers += "url = \"" + url("/sample/" + href) + "\"\noutput = \"" +
                             (tmp_ / "got" / std::to_string(client) / href).string() + "\"\n";
            }
        }
        TempDir::write_at(tmp_ / "transfers.curlrc", transfers);
        const CommandResult fetched =
            run_to_end({"curl", "-sS", "--fail", "-Z", "--parallel-max", "50", "--create-dirs",
                        "-K", (tmp_ / "transfers.curlrc").string()},
                       tmp_ / "logs");
        ASSERT_EQ(fetched.exit_code, 0) << fetched.err << server_log();
        const fs::path from = upstream.empty() ? upstream_ : upstream;
        for (const std::string& href : hrefs) {
            const std::string expected = read_file(from / href);
            for (int client = 0; client < clients; ++client) {
                EXPECT_EQ(read_file(tmp_ / "got" / std::to_string(client) / href), expected)
                    << client << " " << href;
            }
        }
    }
};

// A signed upstream (packages by rpmsign, repomd.xml.asc by gpg) mirrored on demand: dnf, then
// zypper, each from an empty cache with every signature check on (gpgcheck, repo_gpgcheck),
// install or download through the server; each package is fetched from upstream once.
TEST_F(ServeOnDemandTest, SyncPublishesMetadataOnlyAndSignedPackagesInstallThroughServe) {
    if (!signing_tools_available()) {
        GTEST_FAIL() << "gpg and rpmsign are needed (scripts/deps)";
    }
    for (const std::string& href : kHrefs) {
        test_keys().sign_rpm(Signer::Good, upstream_ / href);
    }
    recreate_repo(upstream_, "1704067200", tmp_ / "logs");
    test_keys().sign_detached(Signer::Good, upstream_ / "repodata" / "repomd.xml",
                              upstream_ / "repodata" / "repomd.xml.asc");
    add_to_job("download-policy = on-demand\n");
    sync_job();
    EXPECT_TRUE(fs::exists(mirror() / "repodata" / "repomd.xml"));
    EXPECT_EQ(read_file(mirror() / "repodata" / "repomd.xml.asc"),
              read_file(upstream_ / "repodata" / "repomd.xml.asc"));
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
    TempDir::write_at(work / "reposd" / "m.repo",
                      "[m]\nname=m\nbaseurl=" + url("/sample/") +
                          "\ngpgcheck=1\nrepo_gpgcheck=1\ngpgkey=file://" +
                          test_keys().key_file(Signer::Good).string() + "\n");
    install.insert(install.end(),
                   {"--disableplugin=*", "--installroot", root.string(), "--repo=m", "install",
                    "rpmirror-sample-tiny", "rpmirror-sample-small", "rpmirror-sample-medium",
                    "rpmirror-sample-docs", "rpmirror-sample-data"});
    const CommandResult installed = run_to_end(install, tmp_ / "logs");
    ASSERT_EQ(installed.exit_code, 0) << installed.out << installed.err << server_log();
    const CommandResult query =
        run_to_end({"rpm", "-q", "--root", root.string(), "rpmirror-sample-medium"}, tmp_ / "logs");
    EXPECT_EQ(query.exit_code, 0) << query.out << query.err;
    EXPECT_NE(server_log().find("\"GET /sample/repodata/repomd.xml.asc\" 200"), std::string::npos)
        << "dnf checked the repository's signature\n"
        << server_log();
    for (const std::string& href : kHrefs) {
        ASSERT_TRUE(fs::is_regular_file(mirror() / href)) << href << " kept\n" << server_log();
        EXPECT_EQ(read_file(mirror() / href), read_file(upstream_ / href)) << href;
        EXPECT_EQ(upstream_requests(href), 1U) << href;
        EXPECT_NE(server_log().find("\"GET /sample/" + href + "\" 200"), std::string::npos)
            << server_log();
    }
    expect_every_package_kept();

    // Held now: served from the mirror, upstream not asked again.
    EXPECT_EQ(get("/sample/" + kMediumHref).body, read_file(upstream_ / kMediumHref));
    EXPECT_EQ(upstream_requests(kMediumHref), 1U);

    // zypper, trusting the key through its rpm database, checks repomd.xml.asc on refresh and
    // each package's signature as it downloads it.
    const fs::path zroot = tmp_ / "zroot";
    fs::create_directories(zroot);
    run_checked(
        {"rpm", "--root", zroot.string(), "--import", test_keys().key_file(Signer::Good).string()},
        tmp_ / "logs");
    const auto zypper = [&](std::vector<std::string> args) {
        args.insert(args.begin(),
                    {zypper_binary().string(), "--root", zroot.string(), "--non-interactive"});
        return run_to_end(args, tmp_ / "logs");
    };
    const CommandResult added = zypper({"addrepo", "-f", "-g", url("/sample/"), "mir"});
    ASSERT_EQ(added.exit_code, 0) << added.out << added.err;
    const CommandResult refreshed = zypper({"refresh"});
    ASSERT_EQ(refreshed.exit_code, 0) << refreshed.out << refreshed.err << server_log();
    const CommandResult downloaded =
        zypper({"download", "rpmirror-sample-tiny", "rpmirror-sample-small",
                "rpmirror-sample-medium", "rpmirror-sample-docs", "rpmirror-sample-data"});
    ASSERT_EQ(downloaded.exit_code, 0) << downloaded.out << downloaded.err << server_log();
    std::size_t rpms = 0;
    for (const auto& entry : fs::recursive_directory_iterator(zroot)) {
        if (entry.path().extension() == ".rpm") {
            ++rpms;
            EXPECT_EQ(read_file(entry.path()),
                      read_file(upstream_ / "Packages" / entry.path().filename()))
                << entry.path();
        }
    }
    EXPECT_EQ(rpms, kHrefs.size()) << downloaded.out;
    for (const std::string& href : kHrefs) {
        EXPECT_EQ(upstream_requests(href), 1U) << href << ": served from the mirror";
    }
}

// The numbers: 50 clients at once, each asking for the same 100 packages (small ones,
// made by bench/gen_repo.py) of an on-demand mirror: upstream's access log shows each package
// fetched once, and every client received every package intact.
TEST_F(ServeOnDemandTest, ConcurrentClientsShareOneUpstreamFetch) {
    const fs::path many = tmp_ / "many";
    run_checked({"python3", (source_root() / "bench" / "gen_repo.py").string(), "--count", "100",
                 "--total-bytes", "1200000", "--out", many.string()},
                tmp_ / "logs");
    std::vector<std::string> hrefs;
    for (const std::string& line : lines_of(read_file(many / "manifest.tsv"))) {
        hrefs.push_back(line.substr(0, line.find('\t')));
    }
    ASSERT_EQ(hrefs.size(), 100U);
    const NginxServer& upstream = serve(many / "repo");
    TempDir::write_at(config_, on_demand_job(mirror_root(), upstream.url("/"), ""));
    sync_job();
    start_server();
    every_package_at_once(50, hrefs, many / "repo");
    const HttpReply metrics = get("/metrics");
    EXPECT_NE(metrics.body.find("\nrpmirror_serve_upstream_fetches_total{job=\"sample\"} 100\n"),
              std::string::npos)
        << metrics.body;
    EXPECT_NE(metrics.body.find("\nrpmirror_serve_upstream_failures_total{job=\"sample\"} 0\n"),
              std::string::npos)
        << metrics.body;
    const std::vector<std::string> uris = uris_since(upstream, 0);
    for (const std::string& href : hrefs) {
        EXPECT_EQ(std::count(uris.begin(), uris.end(), "/" + href), 1)
            << href << " fetched from upstream exactly once";
        EXPECT_EQ(read_file(mirror() / href), read_file(many / "repo" / href)) << href;
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

TEST_F(ServeOnDemandTest, ABurstOfMissesKeepsToTheJobsParallelFetches) {
    // Each package trickles for about half a second, so fetches overlap unless held back.
    FaultServer faulty(upstream_,
                       nlohmann::json{{"paths",
                                       {{"/" + kTinyHref, {{{"trickle", {1024, 0.1}}}}},
                                        {"/" + kSmallHref, {{{"trickle", {1024, 0.1}}}}},
                                        {"/" + kDocsHref, {{{"trickle", {16384, 0.1}}}}},
                                        {"/" + kMediumHref, {{{"trickle", {65536, 0.1}}}}},
                                        {"/" + kDataHref, {{{"trickle", {1048576, 0.1}}}}}}}},
                       tmp_.path());
    TempDir::write_at(config_, on_demand_job(mirror_root(), faulty.url("/"), "parallel = 2\n"));
    sync_job();
    start_server();
    every_package_at_once(2);
    int most = 0;
    for (const std::string& href : kHrefs) {
        const auto requests = faulty.requests_for("/" + href);
        EXPECT_EQ(requests.size(), 1U) << href << ": the queued requests shared one fetch";
        for (const LoggedRequest& request : requests) {
            most = std::max(most, request.in_flight);
        }
        EXPECT_EQ(read_file(mirror() / href), read_file(upstream_ / href)) << href;
    }
    EXPECT_LE(most, 2) << "upstream never answered more than `parallel` fetches at once";
    EXPECT_EQ(most, 2) << "the two workers fetched at once";
}

TEST_F(ServeOnDemandTest, SequentialMissesReuseAnUpstreamConnection) {
    FaultServer faulty(upstream_, nlohmann::json::object(), tmp_.path());
    TempDir::write_at(config_, on_demand_job(mirror_root(), faulty.url("/"), ""));
    sync_job();
    start_server();
    std::set<int> connections;
    for (const std::string& href : kHrefs) {
        const HttpReply reply = get("/sample/" + href);
        ASSERT_EQ(reply.status, 200) << href << "\n" << server_log();
        EXPECT_EQ(reply.body, read_file(upstream_ / href)) << href;
        const auto requests = faulty.requests_for("/" + href);
        ASSERT_EQ(requests.size(), 1U) << href;
        connections.insert(requests.front().connection);
    }
    EXPECT_LT(connections.size(), kHrefs.size())
        << kHrefs.size() << " misses one after another came on " << connections.size()
        << " upstream connections";
}

TEST_F(ServeOnDemandTest, AServerKilledMidFetchLeavesNoPartialPackageUnderItsName) {
    constexpr int kKills = 3;
    nlohmann::json steps = nlohmann::json::array();
    for (int kill = 0; kill < kKills; ++kill) {
        steps.push_back({{"stall_after", 65536},
                         {"mark", (tmp_ / ("stalled-" + std::to_string(kill))).string()}});
    }
    steps.push_back(nlohmann::json::object());
    FaultServer faulty(upstream_, nlohmann::json{{"paths", {{"/" + kMediumHref, steps}}}},
                       tmp_.path());
    TempDir::write_at(config_, on_demand_job(mirror_root(), faulty.url("/"), ""));
    sync_job();
    const fs::path temporary = tmp_ / "server-tmp";
    fs::create_directories(temporary);
    server_env_ = {"TMPDIR=" + temporary.string()};
    for (int kill = 0; kill < kKills; ++kill) {
        start_server();
        const fs::path got = tmp_ / ("got-" + std::to_string(kill));
        RunningCommand client({"curl", "-sS", "-o", got.string(), url("/sample/" + kMediumHref)},
                              tmp_ / ("client-" + std::to_string(kill)));
        // The upstream sent part of the body, and some of it reached the client.
        ASSERT_TRUE(wait_until([&] {
            return fs::exists(tmp_ / ("stalled-" + std::to_string(kill))) && fs::exists(got) &&
                   fs::file_size(got) > 0;
        })) << server_log();
        EXPECT_FALSE(fs::exists(mirror() / kMediumHref)) << "not under its name mid-fetch";
        server_->signal(SIGKILL);
        server_->wait();
        EXPECT_NE(client.wait(), 0) << "the client saw the response cut short";
        EXPECT_LT(fs::file_size(got), fs::file_size(upstream_ / kMediumHref));
        EXPECT_FALSE(fs::exists(mirror() / kMediumHref)) << "kill " << kill;
        for (const auto& entry : fs::recursive_directory_iterator(temporary)) {
            EXPECT_FALSE(entry.is_regular_file()) << entry.path() << " left in $TMPDIR";
        }
    }

    // The next server resumes the leftover, verifies and keeps the package.
    start_server();
    for (const std::string& href : kHrefs) {
        const HttpReply reply = get("/sample/" + href);
        EXPECT_EQ(reply.status, 200) << href << "\n" << server_log();
        EXPECT_EQ(reply.body, read_file(upstream_ / href)) << href;
    }
    const auto medium = faulty.requests_for("/" + kMediumHref);
    ASSERT_EQ(medium.size(), static_cast<std::size_t>(kKills + 1));
    EXPECT_NE(medium.back().range, "") << "the leftover was resumed";
    expect_every_package_kept();
    for (const auto& entry : fs::recursive_directory_iterator(temporary)) {
        EXPECT_FALSE(entry.is_regular_file()) << entry.path() << " left in $TMPDIR";
    }
}

TEST_F(ServeOnDemandTest, UpstreamDyingMidBodyCutsTheResponseShortAndKeepsNothing) {
    FaultServer faulty(
        upstream_,
        nlohmann::json{
            {"paths",
             {{"/" + kMediumHref,
               {{{"close_after", 100000}}, {{"close_after", 100000}}, nlohmann::json::object()}},
              {"/" + kSmallHref, {{{"status", 404}}, nlohmann::json::object()}}}}},
        tmp_.path());
    TempDir::write_at(config_, on_demand_job(mirror_root(), faulty.url("/"), "retries = 1\n"));
    sync_job();
    start_server();
    const std::uint64_t size = fs::file_size(upstream_ / kMediumHref);
    const CommandResult first = curl_to("/sample/" + kMediumHref, tmp_ / "first.rpm");
    EXPECT_NE(first.exit_code, 0) << "a short body under the Content-Length\n" << server_log();
    EXPECT_LT(std::stoull(first.out), size) << first.out;
    EXPECT_TRUE(wait_until([&] {
        return server_log().find("sample: " + kMediumHref +
                                 ": not fetched from upstream, nothing kept") != std::string::npos;
    })) << server_log();
    EXPECT_FALSE(fs::exists(mirror() / kMediumHref)) << "nothing kept under the final name";
    EXPECT_TRUE(files_in(mirror() / "Packages").empty()) << "nor under any other";

    // The next request fetches again, whole this time.
    const HttpReply again = get("/sample/" + kMediumHref);
    EXPECT_EQ(again.status, 200) << server_log();
    EXPECT_EQ(again.body, read_file(upstream_ / kMediumHref));
    EXPECT_EQ(faulty.requests_for("/" + kMediumHref).size(), 3U);
    EXPECT_EQ(faulty.requests_for("/" + kMediumHref).back().range, "") << "started over";
    EXPECT_EQ(read_file(mirror() / kMediumHref), read_file(upstream_ / kMediumHref));

    // Failing before any byte: 502, and a log line naming the job, the package and the URL.
    const HttpReply refused = get("/sample/" + kSmallHref);
    EXPECT_EQ(refused.status, 502) << server_log();
    EXPECT_TRUE(wait_until([&] {
        const std::string log = server_log();
        const std::size_t line = log.find("sample: " + kSmallHref + ": not fetched from upstream");
        return line != std::string::npos &&
               log.find(faulty.url("/" + kSmallHref) + ": HTTP 404", line) != std::string::npos;
    })) << server_log();
    EXPECT_FALSE(fs::exists(mirror() / kSmallHref));
    const HttpReply recovered = get("/sample/" + kSmallHref);
    EXPECT_EQ(recovered.status, 200) << server_log();
    EXPECT_EQ(recovered.body, read_file(upstream_ / kSmallHref));
}

// Upstream gone (its nginx stopped): packages already held are still served, intact; a miss is
// answered 502 and logged naming the job, the package and the upstream URL; nothing is kept.
TEST_F(ServeOnDemandTest, UpstreamGoneHeldPackagesStillServedAndMissesAre502) {
    auto gone = std::make_unique<NginxServer>(upstream_, tmp_ / "gone");
    const std::string base = gone->url("/");
    TempDir::write_at(config_, on_demand_job(mirror_root(), base, "retries = 1\n"));
    sync_job();
    start_server();
    ASSERT_EQ(get("/sample/" + kTinyHref).status, 200) << server_log();
    ASSERT_TRUE(fs::is_regular_file(mirror() / kTinyHref));
    gone.reset();

    const HttpReply held = get("/sample/" + kTinyHref);
    EXPECT_EQ(held.status, 200) << server_log();
    EXPECT_EQ(held.body, read_file(upstream_ / kTinyHref));
    EXPECT_EQ(get("/sample/repodata/repomd.xml").status, 200);

    const HttpReply missed = get("/sample/" + kMediumHref);
    EXPECT_EQ(missed.status, 502) << server_log();
    EXPECT_TRUE(wait_until([&] {
        const std::string log = server_log();
        const std::size_t line =
            log.find("sample: " + kMediumHref + ": not fetched from upstream, nothing kept: ");
        return line != std::string::npos &&
               log.find(base + kMediumHref, line) < log.find('\n', line);
    })) << server_log();
    EXPECT_FALSE(fs::exists(mirror() / kMediumHref));
    EXPECT_EQ(files_in(mirror() / "Packages"), std::vector<std::string>{kTiny})
        << "nothing kept but the held package";
}

}  // namespace
}  // namespace rpmirror::test
