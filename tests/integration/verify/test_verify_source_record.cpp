// A local mirror remembers its source (store/source_record.hpp), end to end: synced from
// nginx serving a real repository (scripts/make-sample-repo), then repaired by `verify --repair`,
// audited by `verify --remote` and synced again by a bare `sync --repo sample`, none given a
// source; a damaged record or one of another repository is named, and nothing changes.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "integration/sync/sync_fixture.hpp"
#include "plan/plan.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

class SourceRecordTest : public SyncFixture {
  protected:
    void SetUp() override {
        SyncFixture::SetUp();
        upstream_ = test_repo("sample-repo");
        url_ = serve(upstream_).url("/");
        mirror_ = tmp_ / "mirror";
        state_ = tmp_ / "state";
    }

    // `rpmirror sync -p <mirror> --state-dir <state> <args>` (no source unless `args` gives one).
    CommandResult sync_mirror(std::vector<std::string> args) {
        args.insert(args.end(), {"-p", mirror_.string(), "--state-dir", state_.string(),
                                 "--download-metadata"});
        return sync(args);
    }

    // `rpmirror verify -p <mirror> <args>`, no .repo file anywhere.
    CommandResult verify(const std::vector<std::string>& args) {
        std::vector<std::string> argv{rpmirror_binary(),
                                      "verify",
                                      "-p",
                                      mirror_.string(),
                                      "--state-dir",
                                      state_.string(),
                                      "-c",
                                      (tmp_ / "empty.conf").string(),
                                      "--reposdir",
                                      (tmp_ / "empty-reposdir").string()};
        argv.insert(argv.end(), args.begin(), args.end());
        return run_to_end(argv, tmp_ / "logs");
    }

    // Synced once from nginx with its source on the command line.
    void synced() {
        const CommandResult first =
            sync_mirror({"--repofrompath", "sample," + url_, "--repo", "sample"});
        ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
    }

    // Where the record of a directory's repository is: beside its sync state.
    fs::path record() const {
        fs::path path = sync_state_path(state_, mirror_ / "sample");
        path.replace_extension(".source.repo");
        return path;
    }

    fs::path package(const std::string& name) const { return mirror_ / "sample/Packages" / name; }

    fs::path upstream_;
    std::string url_;
    fs::path mirror_;
    fs::path state_;
};

TEST_F(SourceRecordTest, RepairRemoteAndABareSyncUseTheSourceTheMirrorRecorded) {
    synced();
    ASSERT_TRUE(fs::is_regular_file(record())) << record();
    const std::string text = read_file(record());
    EXPECT_NE(text.find("[sample]"), std::string::npos) << text;
    EXPECT_NE(text.find("baseurl=" + url_), std::string::npos) << text;
    EXPECT_EQ(tree_digests(mirror_ / "sample").count(".rpmirror/source.repo"), 0U)
        << "the mirror's tree holds only what clients read";

    fs::remove(package(kTiny));
    const CommandResult repaired = verify({"--repair"});
    EXPECT_EQ(repaired.exit_code, 0) << repaired.out << repaired.err;
    EXPECT_NE(repaired.out.find("sample: source: recorded in " + record().string()),
              std::string::npos)
        << repaired.out;
    EXPECT_NE(repaired.out.find("sample: after repair: OK"), std::string::npos) << repaired.out;
    EXPECT_EQ(read_file(package(kTiny)), read_file(upstream_ / kTinyHref));

    const CommandResult remote = verify({"--remote"});
    EXPECT_EQ(remote.exit_code, 0) << remote.out << remote.err;
    EXPECT_NE(remote.out.find("sample: OK"), std::string::npos) << remote.out;

    fs::remove(package(kSmall));
    const CommandResult bare = sync_mirror({"--repo", "sample"});
    EXPECT_EQ(bare.exit_code, 0) << bare.out << bare.err;
    EXPECT_NE(bare.err.find("repository 'sample' from its mirror's record " + record().string()),
              std::string::npos)
        << bare.err;
    EXPECT_EQ(read_file(package(kSmall)), read_file(upstream_ / kSmallHref));
}

TEST_F(SourceRecordTest, AMirrorWithoutARecordSaysWhereThisVersionKeepsOne) {
    fs::create_directories(mirror_);
    fs::copy(upstream_, mirror_ / "sample", fs::copy_options::recursive);
    fs::remove(package(kTiny));
    const CommandResult run = verify({"--repair"});
    EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
    EXPECT_NE(run.out.find("sample: repair: FAILED: no source is configured"), std::string::npos)
        << run.out;
    EXPECT_NE(run.out.find("a sync by this version of rpmirror records it in " + record().string()),
              std::string::npos)
        << run.out;
    EXPECT_FALSE(fs::exists(package(kTiny)));
}

TEST_F(SourceRecordTest, ADamagedRecordIsNamedWithItsLineAndNothingChanges) {
    synced();
    const std::string text = read_file(record());
    const std::size_t line = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
    TempDir::write_at(record(), text + "sslverify=maybe\n");
    fs::remove(package(kTiny));
    const std::string located = record().string() + ": line " + std::to_string(line + 1) + ":";

    const CommandResult repair = verify({"--repair"});
    EXPECT_EQ(repair.exit_code, 1) << repair.out << repair.err;
    EXPECT_NE(repair.out.find("sample: repair: FAILED: " + located), std::string::npos)
        << repair.out;
    EXPECT_FALSE(fs::exists(package(kTiny)));

    const CommandResult bare = sync_mirror({"--repo", "sample"});
    EXPECT_EQ(bare.exit_code, 2) << bare.out << bare.err;
    EXPECT_NE(bare.err.find(located), std::string::npos) << bare.err;
    EXPECT_FALSE(fs::exists(package(kTiny)));
}

TEST_F(SourceRecordTest, ARecordOfAnotherRepositoryIsIgnoredAndNamed) {
    synced();
    std::string text = read_file(record());
    const std::size_t section = text.find("[sample]");
    ASSERT_NE(section, std::string::npos) << text;
    text.replace(section, 8, "[other]");
    TempDir::write_at(record(), text);
    fs::remove(package(kTiny));

    const CommandResult repair = verify({"--repair"});
    EXPECT_EQ(repair.exit_code, 1) << repair.out << repair.err;
    EXPECT_NE(repair.out.find("sample: repair: FAILED: no source is configured"), std::string::npos)
        << repair.out;
    EXPECT_NE(repair.out.find(record().string() + " records repository 'other', not 'sample': "
                                                  "ignored"),
              std::string::npos)
        << repair.out;
    EXPECT_FALSE(fs::exists(package(kTiny)));
}

// A source the command line gives wins over the record: the record is not read.
TEST_F(SourceRecordTest, ASourceOnTheCommandLineWins) {
    synced();
    TempDir::write_at(record(), "damaged, and never read\n");
    fs::remove(package(kTiny));
    const CommandResult repaired = verify({"--repair", "--repofrompath", "sample," + url_});
    EXPECT_EQ(repaired.exit_code, 0) << repaired.out << repaired.err;
    EXPECT_EQ(repaired.out.find("source: recorded"), std::string::npos) << repaired.out;
    EXPECT_TRUE(fs::exists(package(kTiny)));
}

}  // namespace
}  // namespace rpmirror::test
