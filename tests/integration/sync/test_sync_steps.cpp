// A sync's steps as the prefetch chains them (src/prefetch): each record told as soon as it is
// verified (SyncEvents::record_fetched), the revision told once primary is parsed while the other
// records download (SyncEvents::revision_parsed), and a package step over the revision, and the
// parsed primary, that the metadata step fetched (SyncOptions::upstream, dnf_cache).
// In-process Syncers against nginx (a fault server where a record must not arrive) serving the
// sample repository.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <set>
#include <stop_token>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "index/index.hpp"
#include "integration/sync/sync_fixture.hpp"
#include "metadata/metadata.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "support/http_server.hpp"
#include "sync/repo_source.hpp"
#include "sync/sync.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

// What the handler saw of each record while it ran.
struct SeenRecord {
    std::string type;
    std::vector<std::string> pending;
    std::string sha256;      // of the file, read in the handler
    bool published = false;  // the destination's repodata/repomd.xml existed then
};

class RecordLog final : public SyncEvents {
  public:
    explicit RecordLog(fs::path destination) : destination_(std::move(destination)) {}
    void package(const PackageEvent& /*event*/) override {}
    void record_fetched(const RecordEvent& event) override {
        SeenRecord seen;
        seen.type = event.type;
        seen.pending = event.pending;
        seen.sha256 = hash_bytes(ChecksumType::Sha256, read_file(event.file));
        seen.published = fs::exists(destination_ / "repodata" / "repomd.xml");
        const std::lock_guard lock(mutex_);
        records.push_back(std::move(seen));
    }
    // From the thread that parses: kept, with what had been told and published by then.
    void revision_parsed(const std::string& repo_id,
                         const std::shared_ptr<const UpstreamRevision>& revision) override {
        const bool published = fs::exists(destination_ / "repodata" / "repomd.xml");
        {
            const std::lock_guard lock(mutex_);
            ++revisions;
            parsed_repo = repo_id;
            parsed = revision;
            published_when_parsed = published;
            told_when_parsed.clear();
            for (const SeenRecord& seen : records) {
                told_when_parsed.insert(seen.type);
            }
        }
        changed_.notify_all();
    }
    // Waits (at most `limit`) for revision_parsed; returns the revision, null if none came.
    std::shared_ptr<const UpstreamRevision> wait_for_revision(std::chrono::seconds limit) {
        std::unique_lock lock(mutex_);
        changed_.wait_for(lock, limit, [this] { return parsed != nullptr; });
        return parsed;
    }
    std::vector<SeenRecord> records;
    int revisions = 0;
    std::string parsed_repo;
    std::shared_ptr<const UpstreamRevision> parsed;
    bool published_when_parsed = false;
    std::set<std::string> told_when_parsed;

  private:
    fs::path destination_;
    std::mutex mutex_;
    std::condition_variable changed_;
};

class SyncSteps : public SyncFixture {
  protected:
    static RepoConfig repo(const std::string& url) {
        RepoConfig config;
        config.id = "s";
        config.name = "s";
        config.baseurls = {url};
        return config;
    }

    // dnf's cache of the sample repository as the prefetch fills it: its metadata alone.
    SyncOptions metadata_step(const fs::path& destination) const {
        SyncOptions options;
        options.download_path = destination;
        options.norepopath = true;
        options.download_metadata = true;
        options.upstream_metadata = true;
        options.announce_tree = false;
        options.dnf_cache = true;
        options.state_dir = tmp_ / "state";
        return options;
    }

    // Its packages as the prefetch fetches them, from `revision` (the metadata step's).
    SyncOptions package_step(const fs::path& destination,
                             std::shared_ptr<const UpstreamRevision> revision) const {
        SyncOptions options;
        options.download_path = destination / "packages";
        options.norepopath = true;
        options.packages_by_file_name = true;
        options.announce_tree = false;
        options.dnf_cache = true;
        options.upstream = std::move(revision);
        options.state_dir = tmp_ / "state";
        return options;
    }
};

// Every record is told once, verified (its checksum is repomd.xml's), before anything is
// published, with the records still on their way: the last one waits for none.
TEST_F(SyncSteps, EachRecordIsToldVerifiedBeforeThePublication) {
    const NginxServer& server = serve(test_repo("sample-repo"));
    const fs::path cache = tmp_ / "cache";
    RepoConfig config = repo(server.url("/"));
    config.excludepkgs = {"*"};
    SyncOptions options = metadata_step(cache);
    RecordLog log(cache);
    options.events = &log;

    const RepoSyncReport report = Syncer().sync(config, options);

    ASSERT_FALSE(report.error) << report.error->to_string();
    ASSERT_TRUE(report.metadata_published);
    const auto repomd = parse_repomd(read_file(cache / "repodata" / "repomd.xml"), "repomd.xml");
    ASSERT_TRUE(repomd);
    std::set<std::string> told;
    for (const SeenRecord& seen : log.records) {
        EXPECT_TRUE(told.insert(seen.type).second) << seen.type << " told twice";
        EXPECT_FALSE(seen.published) << seen.type;
        const RepomdRecord* record = repomd->find(seen.type);
        ASSERT_NE(record, nullptr) << seen.type;
        EXPECT_EQ(seen.sha256, record->checksum.hex) << seen.type;
        EXPECT_EQ(std::count(seen.pending.begin(), seen.pending.end(), seen.type), 0);
    }
    // dnf's records only (dnf_cache): primary and filelists of the sample repository.
    EXPECT_EQ(told, (std::set<std::string>{"filelists", "primary"}));
    ASSERT_FALSE(log.records.empty());
    EXPECT_EQ(log.records.front().pending.size(), 1U);
    EXPECT_TRUE(log.records.back().pending.empty());
    // The revision once, with its parse: what the report carries for the next step.
    EXPECT_EQ(log.revisions, 1);
    EXPECT_EQ(log.parsed_repo, "s");
    ASSERT_TRUE(log.parsed && log.parsed->primary);
    ASSERT_TRUE(report.upstream && report.upstream->primary);
    EXPECT_EQ(log.parsed->primary, report.upstream->primary);
    EXPECT_FALSE(log.published_when_parsed);
}

// filelists never arrives (the server sends 10 bytes of it, then nothing): the revision is told
// parsed all the same, before any publication, and a package step on connections of its own
// fetches a package from it while the metadata step still waits; stopped, the metadata step
// publishes nothing. Before the parse ran beside the downloads it came only after every record.
TEST_F(SyncSteps, TheRevisionIsToldParsedWhileTheOtherRecordsDownload) {
    const fs::path upstream = test_repo("sample-repo");
    const std::string filelists =
        "/repodata/" +
        only_file_ending(upstream / "repodata", "filelists.xml.gz").filename().string();
    nlohmann::json script = {{"paths", nlohmann::json::object()}};
    script["paths"][filelists] = nlohmann::json::array({{{"stall_after", 10}}});
    fs::create_directories(tmp_ / "fault");
    const FaultServer server(upstream, script, tmp_ / "fault");
    const fs::path cache = tmp_ / "cache";
    RepoConfig config = repo(server.url("/"));
    RepoConfig metadata_only = config;
    metadata_only.excludepkgs = {"*"};
    SyncOptions options = metadata_step(cache);
    RecordLog log(cache);
    options.events = &log;
    RepoSyncReport metadata;
    // Stopped (and joined) on every way out of the test: filelists never ends by itself.
    std::jthread metadata_step_thread([&](std::stop_token stop) {
        metadata = Syncer().sync(metadata_only, options, nullptr, std::move(stop));
    });

    const std::shared_ptr<const UpstreamRevision> revision =
        log.wait_for_revision(std::chrono::seconds(60));
    ASSERT_TRUE(revision && revision->primary) << "no revision told while filelists was held";
    ASSERT_GE(revision->primary->size(), 1U);
    config.closure = std::vector<std::string>{(*revision->primary)[0].strict_nevra()};
    const RepoSyncReport packages = Syncer().sync(config, package_step(cache, revision));
    const bool filelists_held = server.requests_for(filelists).size() == 1U &&
                                !fs::exists(cache / "repodata" / "repomd.xml");
    metadata_step_thread.request_stop();
    metadata_step_thread.join();

    EXPECT_FALSE(log.published_when_parsed);
    EXPECT_FALSE(log.told_when_parsed.contains("filelists"));
    ASSERT_FALSE(packages.error) << packages.error->to_string();
    EXPECT_EQ(packages.downloaded, 1U);
    EXPECT_TRUE(filelists_held) << "the package step ran while filelists was on its way";
    EXPECT_TRUE(metadata.error) << "the metadata step was stopped";
    EXPECT_FALSE(metadata.metadata_published);
    EXPECT_FALSE(fs::exists(cache / "repodata" / "repomd.xml"));
    EXPECT_EQ(server.requests_for(filelists).size(), 1U);
}

// The package step over the metadata step's revision selects from the primary that step parsed:
// primary.xml is neither fetched again nor read from the cache (removed here), and the packages
// are those of the closure.
TEST_F(SyncSteps, ThePackageStepSelectsFromTheParseOfTheMetadataStep) {
    const NginxServer& server = serve(test_repo("sample-repo"));
    const fs::path cache = tmp_ / "cache";
    RepoConfig config = repo(server.url("/"));
    Syncer syncer;
    RepoConfig metadata_only = config;
    metadata_only.excludepkgs = {"*"};
    const RepoSyncReport fetched = syncer.sync(metadata_only, metadata_step(cache));
    ASSERT_FALSE(fetched.error) << fetched.error->to_string();
    ASSERT_TRUE(fetched.upstream);
    ASSERT_TRUE(fetched.upstream->primary);
    const std::size_t listed = fetched.upstream->primary->size();
    ASSERT_GE(listed, 2U);
    const std::string chosen = (*fetched.upstream->primary)[0].strict_nevra();
    fs::remove(only_file_ending(cache / "repodata", "-primary.xml.gz"));
    const std::size_t before = log_size(server);

    config.closure = std::vector<std::string>{chosen};
    config.record_sources.push_back(cache / "repodata");
    const RepoSyncReport packages = syncer.sync(config, package_step(cache, fetched.upstream));

    ASSERT_FALSE(packages.error) << packages.error->to_string();
    EXPECT_EQ(packages.upstream_packages, listed);
    EXPECT_EQ(packages.downloaded, 1U);
    const std::vector<std::string> asked = uris_since(server, before);
    EXPECT_EQ(std::count_if(asked.begin(), asked.end(),
                            [](const std::string& uri) {
                                return uri.find("/repodata/") != std::string::npos;
                            }),
              0)
        << "asked: " << testing::PrintToString(asked);
    EXPECT_EQ(asked.size(), 1U) << testing::PrintToString(asked);
}

}  // namespace
}  // namespace rpmirror::test
