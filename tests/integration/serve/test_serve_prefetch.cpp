// The hybrid policy (`prefetch =` beside `download-policy = on-demand`), end to end: the real sync
// of a repository with five versions of every name (scripts/make-versions-test-repo) served by an
// upstream nginx fetches the packages the prefetch selects and leaves the rest to the real
// `rpmirror serve`, which still fetches an older one at its first request.
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

// The newest EVR of every name.arch of versions-repo, sorted (tests/integration/sync/
// test_keep_versions.cpp lists them all).
const std::vector<std::string> kNewestOfEach{"alpha-2.0-2.x86_64.rpm", "beta-0.5-1.noarch.rpm",
                                             "gamma-1.0-1.x86_64.rpm"};
const std::string kAnOlderOne = "alpha-1.2-1.x86_64.rpm";

class ServePrefetchTest : public ServeFixture {
  protected:
    void SetUp() override {
        ServeFixture::SetUp();
        versions_ = copy_repo(test_repo("versions-repo"), tmp_ / "versions-upstream");
        upstream_server_ = &serve(versions_);
    }

    // Writes the configuration: one on-demand job "versions" with `lines` added.
    void configure(const std::string& lines) {
        TempDir::write_at(config_, "[main]\ndestination = " + mirror_root().string() +
                                       "\n\n[versions]\nbaseurl = " + upstream_server_->url("/") +
                                       "\ndownload-metadata = 1\ndownload-policy = on-demand\n" +
                                       lines);
    }

    // `rpmirror sync --config-file` of the configuration, as it ended.
    CommandResult sync_config() {
        CommandResult result =
            run_to_end(rpmirror_sync_argv({"--config-file", config_.string()}), tmp_ / "logs");
        expect_no_sanitizer_report(result.err);
        return result;
    }

    // The package file names the mirror holds, sorted.
    std::vector<std::string> held() const {
        std::vector<std::string> names;
        const fs::path packages = mirror_root() / "versions" / "Packages";
        if (fs::exists(packages)) {
            for (const auto& entry : fs::directory_iterator(packages)) {
                names.push_back(entry.path().filename().string());
            }
        }
        std::sort(names.begin(), names.end());
        return names;
    }

    // How many times upstream was asked for Packages/`name`, up to now.
    std::size_t upstream_requests(const std::string& name) {
        const std::vector<std::string> uris = uris_since(*upstream_server_, 0);
        return static_cast<std::size_t>(std::count(uris.begin(), uris.end(), "/Packages/" + name));
    }

    fs::path versions_;
    NginxServer* upstream_server_ = nullptr;
};

TEST_F(ServePrefetchTest, NewestIsHeldAfterSyncAndAnOlderOneIsFetchedOnDemand) {
    configure("prefetch = newest\n");
    const CommandResult synced = sync_config();
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    EXPECT_EQ(held(), kNewestOfEach) << "the newest of each name.arch prefetched, nothing older";
    for (const std::string& name : kNewestOfEach) {
        EXPECT_EQ(read_file(mirror_root() / "versions" / "Packages" / name),
                  read_file(versions_ / "Packages" / name))
            << name;
    }
    EXPECT_EQ(upstream_requests(kAnOlderOne), 0U);

    start_server();
    const HttpReply older = get("/versions/Packages/" + kAnOlderOne);
    EXPECT_EQ(older.status, 200) << server_log();
    EXPECT_EQ(older.body, read_file(versions_ / "Packages" / kAnOlderOne));
    EXPECT_EQ(upstream_requests(kAnOlderOne), 1U) << "fetched on demand";
    EXPECT_TRUE(fs::is_regular_file(mirror_root() / "versions" / "Packages" / kAnOlderOne))
        << "and kept";
    // A prefetched one is served from the mirror: upstream was asked for it by the sync only.
    EXPECT_EQ(get("/versions/Packages/" + kNewestOfEach.front()).body,
              read_file(versions_ / "Packages" / kNewestOfEach.front()));
    EXPECT_EQ(upstream_requests(kNewestOfEach.front()), 1U);
}

TEST_F(ServePrefetchTest, NamesAndGlobsPrefetchTheirPackagesOnly) {
    configure("prefetch = beta, gamma-8*\n");
    const CommandResult synced = sync_config();
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    EXPECT_EQ(held(),
              (std::vector<std::string>{"beta-0.1-1.noarch.rpm", "beta-0.2-1.noarch.rpm",
                                        "beta-0.3-1.noarch.rpm", "beta-0.4-1.noarch.rpm",
                                        "beta-0.5-1.noarch.rpm", "gamma-8.0-1.x86_64.rpm"}));
}

TEST_F(ServePrefetchTest, BadValuesAreRefusedNamingTheFileLineAndValue) {
    configure("prefetch = newest, alpha\n");
    const CommandResult mixed = sync_config();
    EXPECT_NE(mixed.exit_code, 0);
    EXPECT_NE(mixed.err.find(config_.string() + ":8"), std::string::npos) << mixed.err;
    EXPECT_NE(mixed.err.find("'newest, alpha'"), std::string::npos) << mixed.err;

    configure("prefetch = Packages/alpha\n");
    const CommandResult slash = sync_config();
    EXPECT_NE(slash.exit_code, 0);
    EXPECT_NE(slash.err.find("'Packages/alpha' is no package name"), std::string::npos)
        << slash.err;

    TempDir::write_at(config_, "[main]\ndestination = " + mirror_root().string() +
                                   "\n\n[versions]\nbaseurl = " + upstream_server_->url("/") +
                                   "\ndownload-metadata = 1\nprefetch = newest\n");
    const CommandResult immediate = sync_config();
    EXPECT_NE(immediate.exit_code, 0);
    EXPECT_NE(immediate.err.find(config_.string() + ":7"), std::string::npos) << immediate.err;
    EXPECT_NE(immediate.err.find("prefetch needs download-policy on-demand"), std::string::npos)
        << immediate.err;
    EXPECT_TRUE(held().empty()) << "nothing fetched";
    EXPECT_FALSE(fs::exists(mirror_root() / "versions" / "repodata")) << "nothing published";
}

// A job's snapshot of an on-demand mirror: the sync fetches every listed package first, so the
// snapshot holds them all and upstream deleting one cannot make it 404.
TEST_F(ServePrefetchTest, ASnapshotOfAnOnDemandJobHoldsEveryListedPackage) {
    configure("snapshot = pinned\n");
    const CommandResult synced = sync_config();
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    const fs::path snapshot = mirror_root() / "snapshots" / "versions" / "pinned";
    std::vector<std::string> listed;
    for (const auto& entry : fs::directory_iterator(versions_ / "Packages")) {
        listed.push_back(entry.path().filename().string());
    }
    std::sort(listed.begin(), listed.end());
    ASSERT_EQ(listed.size(), 15U);
    EXPECT_EQ(held(), listed) << "every listed package fetched by the sync";
    for (const std::string& name : listed) {
        ASSERT_TRUE(fs::is_regular_file(snapshot / "Packages" / name)) << name << synced.err;
        EXPECT_EQ(read_file(snapshot / "Packages" / name), read_file(versions_ / "Packages" / name))
            << name;
    }

    // Upstream deletes a package: the snapshot, served by nginx, still has it.
    const std::string kept = read_file(versions_ / "Packages" / kAnOlderOne);
    fs::remove(versions_ / "Packages" / kAnOlderOne);
    NginxServer& snapshots = serve(snapshot);
    const CommandResult got =
        run_to_end({"curl", "-sS", "--fail", "-o", (tmp_ / "got.rpm").string(),
                    snapshots.url("/Packages/" + kAnOlderOne)},
                   tmp_ / "logs");
    EXPECT_EQ(got.exit_code, 0) << got.err;
    EXPECT_EQ(read_file(tmp_ / "got.rpm"), kept);
}

// A listed package upstream no longer has fails the sync, naming it, and no snapshot is taken.
TEST_F(ServePrefetchTest, AFetchFailureRefusesTheSnapshotOfAnOnDemandJob) {
    fs::remove(versions_ / "Packages" / kAnOlderOne);
    configure("snapshot = pinned\nretries = 1\n");
    const CommandResult synced = sync_config();
    EXPECT_NE(synced.exit_code, 0) << synced.out << synced.err;
    EXPECT_NE((synced.out + synced.err).find("alpha-1.2-1"), std::string::npos)
        << synced.out << synced.err;
    EXPECT_FALSE(fs::exists(mirror_root() / "snapshots" / "versions" / "pinned"))
        << "nothing half-made";
}

}  // namespace
}  // namespace rpmirror::test
