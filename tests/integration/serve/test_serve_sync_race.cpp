// A sync of an on-demand job while `rpmirror serve` fetches one of its packages: the sync's
// cleanup of stale temporary files (.NAME.part) leaves the one a live fetch writes alone (the
// download holds a lock on it) and still removes one no download holds.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <string>

#include "integration/serve/serve_fixture.hpp"
#include "support/http_server.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

using ServeSyncRaceTest = ServeFixture;

TEST_F(ServeSyncRaceTest, ASyncLeavesTheTemporaryFileOfALiveFetchAlone) {
    const fs::path stalled = tmp_ / "stalled";
    FaultServer faulty(
        upstream_,
        nlohmann::json{
            {"paths",
             {{"/" + kMediumHref,
               {{{"stall_after", 65536}, {"mark", stalled.string()}}, nlohmann::json::object()}}}}},
        tmp_.path());
    TempDir::write_at(config_, "[main]\ndestination = " + mirror_root().string() +
                                   "\n\n[sample]\nbaseurl = " + faulty.url("/") +
                                   "\ndownload-metadata = 1\ndownload-policy = on-demand\n");
    sync_job();
    // What a server killed mid-fetch leaves: no download holds it.
    const fs::path stale = mirror() / "Packages" / (".rpmirror-sample-docs-1.0-1.noarch.rpm.part");
    TempDir::write_at(stale, read_file(upstream_ / kDocsHref).substr(0, 1000));

    start_server();
    const fs::path live = mirror() / "Packages" / (".rpmirror-sample-medium-1.0-1.noarch.rpm.part");
    RunningCommand client(
        {"curl", "-sS", "-o", (tmp_ / "got").string(), url("/sample/" + kMediumHref)},
        tmp_ / "client");
    ASSERT_TRUE(wait_until([&] {
        return fs::exists(stalled) && fs::exists(live) && fs::file_size(live) > 0;
    })) << server_log();

    // A sync with work to do (a prefetch added), so that it cleans up (a no-op sync does not).
    TempDir::write_at(config_, read_file(config_) + "prefetch = rpmirror-sample-tiny\n");
    const CommandResult synced =
        run_to_end(rpmirror_sync_argv({"--config-file", config_.string()}), tmp_ / "logs");
    EXPECT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    EXPECT_TRUE(fs::exists(live)) << "the live fetch's temporary file is left to it\n"
                                  << synced.out << synced.err;
    EXPECT_FALSE(fs::exists(stale)) << "a stale one is still removed\n" << synced.out << synced.err;
    EXPECT_FALSE(fs::exists(mirror() / kMediumHref));
    EXPECT_EQ(read_file(mirror() / kTinyHref), read_file(upstream_ / kTinyHref)) << "prefetched";
    client.signal(SIGKILL);
    client.wait();
}

}  // namespace
}  // namespace rpmirror::test
