// `rpmirror sync` when things go wrong: packages failing mid-sync (metadata must stay the previous
// complete one), hostile symlinks in the destination, bodies encoded nobody asked for, and
// SIGINT.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "integration/sync/sync_fixture.hpp"
#include "support/http_server.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

// Returns the names in `dir` that start with ".repodata.staging-" (left-over staging dirs).
std::vector<std::string> staging_dirs(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir)) {
        if (entry.path().filename().string().starts_with(".repodata.staging-")) {
            names.push_back(entry.path().filename().string());
        }
    }
    return names;
}

class SyncFaults : public SyncFixture {
  protected:
    // Mirrors revision 1 of an upstream repository (the sample repository without kMedium) with
    // --download-metadata, then makes revision 2 upstream (kMedium added back), so the next sync
    // has new metadata to publish and one package to fetch. Returns the upstream directory.
    fs::path mirror_revision_one_then_update_upstream() {
        const fs::path upstream = copy_repo(test_repo("sample-repo"), tmp_ / "upstream");
        fs::rename(upstream / "Packages" / kMedium, tmp_ / kMedium);
        recreate_repo(upstream, "1704153600", tmp_ / "logs");
        NginxServer& server = serve(upstream);
        const CommandResult first = sync(args_for(server.url("/")));
        EXPECT_EQ(first.exit_code, 0) << first.out << first.err;
        fs::rename(tmp_ / kMedium, upstream / "Packages" / kMedium);
        recreate_repo(upstream, "1704240000", tmp_ / "logs");
        return upstream;
    }

    std::vector<std::string> args_for(const std::string& url) const {
        return {"--repofrompath", "sample," + url,      "--repo", "sample", "-p",
                mirror_.string(), "--download-metadata"};
    }

    // Checks that a sync whose kMedium download fails as `fault` describes keeps the previous
    // metadata, says so, exits 1; then a clean re-run publishes the new revision.
    void expect_metadata_kept_back(const nlohmann::json& fault) {
        const fs::path upstream = mirror_revision_one_then_update_upstream();
        const fs::path repodata = mirror_ / "sample" / "repodata";
        const auto old_metadata = tree_digests(repodata);
        const std::string old_repomd = read_file(repodata / "repomd.xml");
        ASSERT_FALSE(old_repomd.empty());
        ASSERT_NE(old_repomd, read_file(upstream / "repodata" / "repomd.xml"));
        FaultServer faulty(upstream, {{"paths", {{"/Packages/" + kMedium, {fault}}}}}, tmp_.path());

        const fs::path json_report = tmp_ / "report.json";
        std::vector<std::string> args = args_for(faulty.url("/"));
        args.insert(args.end(), {"--json", json_report.string()});
        const CommandResult failed = sync(args);

        EXPECT_EQ(failed.exit_code, 1) << failed.out << failed.err;
        EXPECT_FALSE(faulty.requests_for("/Packages/" + kMedium).empty());
        EXPECT_EQ(read_file(repodata / "repomd.xml"), old_repomd) << "byte-identical";
        EXPECT_EQ(tree_digests(repodata), old_metadata);
        EXPECT_TRUE(staging_dirs(mirror_ / "sample").empty());
        EXPECT_FALSE(fs::exists(mirror_ / "sample" / "Packages" / kMedium));
        EXPECT_NE(failed.err.find("metadata not published: 1 package(s) failed; the published "
                                  "metadata stays in place"),
                  std::string::npos)
            << failed.err;
        EXPECT_NE(failed.err.find(kMedium.substr(0, kMedium.size() - 4)), std::string::npos)
            << "the failed package is named:\n"
            << failed.err;
        const auto report = nlohmann::json::parse(read_file(json_report), nullptr, false);
        ASSERT_FALSE(report.is_discarded());
        EXPECT_EQ(report["exit_code"], 1);
        EXPECT_EQ(report["repositories"][0]["metadata_published"], false);
        EXPECT_EQ(report["repositories"][0]["failed"], 1);

        NginxServer& healthy = serve(upstream);
        const CommandResult rerun = sync(args_for(healthy.url("/")));
        EXPECT_EQ(rerun.exit_code, 0) << rerun.out << rerun.err;
        EXPECT_EQ(tree_digests(mirror_ / "sample", kStateFile), tree_digests(upstream, kStateFile));
    }

    void interrupt_then_resume(int signal_number, int expected_exit_code);

    fs::path mirror_ = tmp_ / "mirror";
};

TEST_F(SyncFaults, PackageAnswering404KeepsThePreviousMetadata) {
    expect_metadata_kept_back({{"status", 404}});
}

TEST_F(SyncFaults, PackageWithAWrongChecksumKeepsThePreviousMetadata) {
    expect_metadata_kept_back({{"corrupt", true}});
}

TEST_F(SyncFaults, FirstSyncWithAFailingPackagePublishesNoMetadata) {
    const fs::path upstream = test_repo("sample-repo");
    FaultServer faulty(upstream, {{"paths", {{"/Packages/" + kMedium, {{{"status", 404}}}}}}},
                       tmp_.path());

    const CommandResult failed = sync(args_for(faulty.url("/")));

    EXPECT_EQ(failed.exit_code, 1) << failed.out << failed.err;
    EXPECT_FALSE(fs::exists(mirror_ / "sample" / "repodata"));
    EXPECT_TRUE(staging_dirs(mirror_ / "sample").empty());
    // Nothing was ever published: no metadata "stays in place"; the line says what to run.
    EXPECT_EQ(failed.err.find("stays in place"), std::string::npos) << failed.err;
    EXPECT_NE(failed.err.find("metadata not published: 1 package(s) failed; nothing is published "
                              "yet"),
              std::string::npos)
        << failed.err;
    EXPECT_NE(failed.err.find("--publish-partial"), std::string::npos) << failed.err;
    EXPECT_EQ(read_file(mirror_ / "sample" / "Packages" / kData),
              read_file(upstream / "Packages" / kData))
        << "the other packages are mirrored";
}

TEST_F(SyncFaults, SymlinkedPackagePathIsReplacedAndItsTargetUntouched) {
    const fs::path upstream = test_repo("sample-repo");
    NginxServer& server = serve(upstream);
    const fs::path outside = TempDir::write_at(tmp_ / "outside" / "victim", "precious");
    const fs::path planted = mirror_ / "sample" / "Packages" / kMedium;
    fs::create_directories(planted.parent_path());
    fs::create_symlink(outside, planted);

    const CommandResult result = sync(args_for(server.url("/")));

    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_EQ(read_file(outside), "precious");
    EXPECT_FALSE(fs::is_symlink(planted));
    EXPECT_EQ(tree_digests(mirror_ / "sample", kStateFile), tree_digests(upstream));
}

TEST_F(SyncFaults, SymlinkedDirectoryLeadingOutsideIsNeverWrittenThrough) {
    const fs::path upstream = test_repo("sample-repo");
    NginxServer& server = serve(upstream);
    const fs::path outside = tmp_ / "outside";
    fs::create_directories(outside);
    fs::create_directories(mirror_ / "sample");
    fs::create_directory_symlink(outside, mirror_ / "sample" / "Packages");

    const CommandResult result = sync(args_for(server.url("/")));

    EXPECT_TRUE(fs::is_empty(outside)) << "nothing is written outside the mirror";
    EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
    EXPECT_NE(result.err.find("symlink"), std::string::npos) << "refused, saying why:\n"
                                                             << result.err;
    EXPECT_FALSE(fs::exists(mirror_ / "sample" / "repodata"))
        << "no metadata for a mirror that lacks its packages";
}

TEST_F(SyncFaults, SignatureThatCannotBeFetchedFailsTheRepositoryBeforeAnyDownload) {
    const fs::path upstream = test_repo("sample-repo");
    FaultServer faulty(upstream, {{"paths", {{"/repodata/repomd.xml.asc", {{{"status", 500}}}}}}},
                       tmp_.path());

    const CommandResult result = sync(args_for(faulty.url("/")));

    EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
    EXPECT_NE(result.err.find("repomd.xml.asc"), std::string::npos) << result.err;
    EXPECT_FALSE(fs::exists(mirror_ / "sample" / "repodata"));
    for (const LoggedRequest& request : faulty.requests()) {
        EXPECT_FALSE(request.path.starts_with("/Packages/")) << request.path;
    }
}

// --- Content-Encoding nobody asked for -------------------------------------------------------

TEST_F(SyncFaults, ServerGzippingEveryResponseIsMirroredFromTheDecodedBytes) {
    // Every body, repomd.xml included, comes gzip-encoded with its encoded Content-Length.
    const fs::path upstream = test_repo("sample-repo");
    FaultServer faulty(upstream, {{"all", {{{"encode", "gzip"}}}}}, tmp_.path());

    const CommandResult result = sync(args_for(faulty.url("/")));

    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_EQ(tree_digests(mirror_ / "sample", kStateFile), tree_digests(upstream));
    std::map<std::string, int> requests;
    for (const LoggedRequest& request : faulty.requests()) {
        ++requests[request.path];
        EXPECT_FALSE(request.headers.contains("accept-encoding")) << request.path;
    }
    for (const auto& [href, digest] : package_digests(upstream)) {
        EXPECT_EQ(requests["/" + href], 1) << href << " decoded and verified the first time";
    }
    EXPECT_EQ(requests["/repodata/repomd.xml"], 1);
}

TEST_F(SyncFaults, GzFileSentWithContentEncodingGzipIsStoredAsSent) {
    // The classic misconfiguration (Apache's AddEncoding x-gzip .gz): primary.xml.gz labelled
    // "Content-Encoding: gzip". Decoded, it is primary.xml and too large; stored as sent, it
    // is the record.
    const fs::path upstream = test_repo("sample-repo");
    std::string primary;
    for (const auto& entry : fs::directory_iterator(upstream / "repodata")) {
        if (entry.path().filename().string().ends_with("-primary.xml.gz")) {
            primary = "/repodata/" + entry.path().filename().string();
        }
    }
    ASSERT_FALSE(primary.empty());
    FaultServer faulty(upstream, {{"paths", {{primary, {{{"gzip", true}}}}}}}, tmp_.path());

    const CommandResult result = sync(args_for(faulty.url("/")));

    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_EQ(tree_digests(mirror_ / "sample", kStateFile), tree_digests(upstream));
    EXPECT_EQ(faulty.requests_for(primary).size(), 2U) << "decoded once, then stored as sent";
}

// --- stopping -----------------------------------------------------------------------------------

TEST_F(SyncFaults, SigintWhileFetchingRepomdStopsTheSyncAtOnce) {
    // repomd.xml trickles in at 2 bytes a second: about half an hour for the whole document
    // (and no low-speed abort within the test: timeout=600). The stop must not wait for it.
    const fs::path upstream = test_repo("sample-repo");
    FaultServer server(upstream, {{"paths", {{"/repodata/repomd.xml", {{{"trickle", {1, 0.5}}}}}}}},
                       tmp_.path());
    std::vector<std::string> args{"-c", (tmp_ / "empty.conf").string(), "--reposdir",
                                  (tmp_ / "empty-reposdir").string(),
                                  "--setopt=sample.timeout=600"};
    for (const std::string& arg : args_for(server.url("/"))) {
        args.push_back(arg);
    }
    RunningCommand running(rpmirror_sync_argv(args), tmp_ / "interrupted");
    ASSERT_TRUE(wait_until([&] { return !server.requests().empty(); })) << running.err();

    running.signal(SIGINT);
    std::optional<int> exit_code;
    const bool ended = wait_until([&] {
        exit_code = running.try_wait();
        return exit_code.has_value();
    });

    ASSERT_TRUE(ended) << "still fetching repomd.xml after SIGINT";
    expect_no_sanitizer_report(running.err());
    EXPECT_EQ(*exit_code, 130) << running.out() << running.err();
    EXPECT_NE(running.err().find("interrupted"), std::string::npos) << running.err();
    EXPECT_FALSE(fs::exists(mirror_ / "sample" / "repodata"));
    EXPECT_FALSE(fs::exists(mirror_ / "sample" / "Packages"));
    const auto requests = server.requests();
    ASSERT_EQ(requests.size(), 1U) << "nothing asked for after the stop";
    EXPECT_EQ(requests[0].path, "/repodata/repomd.xml");
}

// Interrupts a sync with `signal_number` in the middle of a package's transfer and checks the
// exit code, the kept .part file, and that the next run resumes it and completes the mirror.
void SyncFaults::interrupt_then_resume(int signal_number, int expected_exit_code) {
    const fs::path upstream = test_repo("sample-repo");
    // The big package trickles in (64 KiB per 0.1 s: about 5 s) the first time, then is served
    // normally. The signal is sent once the server has seen its request and bytes have been
    // written to the .part file, so the interruption always hits a running transfer.
    const std::string data_path = "/Packages/" + kData;
    FaultServer server(
        upstream,
        {{"paths", {{data_path, {{{"trickle", {65536, 0.1}}}, nlohmann::json::object()}}}}},
        tmp_.path());
    const fs::path part = mirror_ / "sample" / "Packages" / part_file_name(kData);
    std::vector<std::string> args{"-c", (tmp_ / "empty.conf").string(), "--reposdir",
                                  (tmp_ / "empty-reposdir").string()};
    for (const std::string& arg : args_for(server.url("/"))) {
        args.push_back(arg);
    }
    RunningCommand running(rpmirror_sync_argv(args), tmp_ / "interrupted");
    ASSERT_TRUE(wait_until([&] {
        std::error_code ignored;
        return !server.requests_for(data_path).empty() && fs::file_size(part, ignored) > 0 &&
               !ignored;
    })) << running.err();

    running.signal(signal_number);
    const int exit_code = running.wait();
    expect_no_sanitizer_report(running.err());

    EXPECT_EQ(exit_code, expected_exit_code) << running.out() << running.err();
    EXPECT_TRUE(fs::exists(part)) << "kept for resume";
    EXPECT_LT(fs::file_size(part), fs::file_size(upstream / "Packages" / kData));
    EXPECT_FALSE(fs::exists(mirror_ / "sample" / "Packages" / kData));
    EXPECT_FALSE(fs::exists(mirror_ / "sample" / "repodata")) << "nothing published";
    // A first sync: nothing was ever published, so no metadata "stays in place".
    EXPECT_EQ(running.err().find("stays in place"), std::string::npos) << running.err();
    EXPECT_NE(running.err().find("metadata not published: the sync was interrupted; nothing is "
                                 "published yet"),
              std::string::npos)
        << running.err();
    EXPECT_NE(running.err().find("run the same command again to resume"), std::string::npos)
        << running.err();

    const CommandResult rerun = sync(args_for(server.url("/")));

    EXPECT_EQ(rerun.exit_code, 0) << rerun.out << rerun.err;
    EXPECT_FALSE(fs::exists(part));
    EXPECT_EQ(tree_digests(mirror_ / "sample", kStateFile), tree_digests(upstream));
    const auto requests = server.requests_for(data_path);
    ASSERT_EQ(requests.size(), 2U);
    EXPECT_TRUE(requests[1].range.starts_with("bytes=")) << "resumed, not restarted";
    EXPECT_NE(requests[1].range, "bytes=0-");
}

TEST_F(SyncFaults, SigintLeavesPartFilesAndTheNextRunResumesAndCompletes) {
    interrupt_then_resume(SIGINT, 130);
}

TEST_F(SyncFaults, SigtermLeavesPartFilesAndTheNextRunResumesAndCompletes) {
    interrupt_then_resume(SIGTERM, 143);
}

}  // namespace
}  // namespace rpmirror::test
