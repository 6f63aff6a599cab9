// A sync's steps as the prefetch chains them (src/prefetch): each record told as soon as it is
// verified (SyncEvents::record_fetched), and a package step over the revision, and the parsed
// primary, that the metadata step fetched moments ago (SyncOptions::upstream, dnf_cache).
// In-process Syncer against nginx serving the sample repository.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "index/index.hpp"
#include "integration/sync/sync_fixture.hpp"
#include "metadata/metadata.hpp"
#include "rpmirror/checksum/checksum.hpp"
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
        records.push_back(std::move(seen));
    }
    std::vector<SeenRecord> records;

  private:
    fs::path destination_;
};

class SyncSteps : public SyncFixture {
  protected:
    RepoConfig repo(const NginxServer& server) const {
        RepoConfig config;
        config.id = "s";
        config.name = "s";
        config.baseurls = {server.url("/")};
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
};

// Every record is told once, verified (its checksum is repomd.xml's), before anything is
// published, with the records still on their way: the last one waits for none.
TEST_F(SyncSteps, EachRecordIsToldVerifiedBeforeThePublication) {
    const NginxServer& server = serve(test_repo("sample-repo"));
    const fs::path cache = tmp_ / "cache";
    RepoConfig config = repo(server);
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
}

// The package step over the metadata step's revision selects from the primary that step parsed:
// primary.xml is neither fetched again nor read from the cache (removed here), and the packages
// are those of the closure.
TEST_F(SyncSteps, ThePackageStepSelectsFromTheParseOfTheMetadataStep) {
    const NginxServer& server = serve(test_repo("sample-repo"));
    const fs::path cache = tmp_ / "cache";
    RepoConfig config = repo(server);
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
    SyncOptions options;
    options.download_path = cache / "packages";
    options.norepopath = true;
    options.packages_by_file_name = true;
    options.announce_tree = false;
    options.dnf_cache = true;
    options.upstream = fetched.upstream;
    options.state_dir = tmp_ / "state";
    const RepoSyncReport packages = syncer.sync(config, options);

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
