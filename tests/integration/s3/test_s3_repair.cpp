// `rpmirror verify` and `--repair` of a filtered mirror in a bucket (a real Ceph RADOS Gateway):
// the selection the sync recorded in the state object is what is audited and what the repair
// syncs, so a filtered mirror stays filtered and its rewritten metadata stays true.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "integration/s3/s3_sync_fixture.hpp"

namespace rpmirror::test {
namespace {

const std::string kData = "Packages/rpmirror-sample-data-1.0-1.noarch.rpm";
const std::string kTiny = "Packages/rpmirror-sample-tiny-1.0-1.noarch.rpm";

class S3RepairTest : public S3SyncTest {
  protected:
    CommandResult verify(std::vector<std::string> extra) {
        std::vector<std::string> argv{rpmirror_binary(), "verify", "-p", destination()};
        argv.insert(argv.end(), extra.begin(), extra.end());
        return run_to_end(argv, tmp_ / "logs");
    }

    // A mirror of the sample repository without its data package (excludepkgs), with metadata
    // rewritten for the four packages it holds.
    void sync_filtered() {
        const CommandResult synced =
            sync({"--download-metadata", "--setopt=sample.excludepkgs=rpmirror-sample-data"});
        ASSERT_EQ(synced.exit_code, 0) << synced.err;
        const auto listed = objects();
        ASSERT_FALSE(listed.contains(kData));
        ASSERT_TRUE(listed.contains(kTiny));
    }
};

TEST_F(S3RepairTest, VerifyAuditsTheSelectionTheSyncRecorded) {
    sync_filtered();
    const CommandResult verified = verify({});
    EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;
    EXPECT_NE(verified.out.find("sample: selection: "), std::string::npos) << verified.out;
    EXPECT_NE(verified.out.find("(recorded by sync)"), std::string::npos) << verified.out;
    EXPECT_NE(verified.out.find("sample: OK: 4 packages"), std::string::npos) << verified.out;
}

TEST_F(S3RepairTest, ARepairOfAFilteredMirrorKeepsItFiltered) {
    sync_filtered();
    auto published = client().get_object(bucket(), key("repodata/repomd.xml"));
    ASSERT_TRUE(published) << published.error().to_string();
    ASSERT_NE(*published, read_file(upstream_ / "repodata" / "repomd.xml"));
    ASSERT_TRUE(client().delete_object(bucket(), key(kTiny)));

    const CommandResult repaired = verify({"--repair", "--repofrompath", "sample," + repo_url_});
    EXPECT_EQ(repaired.exit_code, 0) << repaired.out << repaired.err;
    EXPECT_NE(repaired.out.find("sample: after repair: OK"), std::string::npos) << repaired.out;
    const auto listed = objects();
    EXPECT_TRUE(listed.contains(kTiny)) << "the missing package was not uploaded again";
    EXPECT_FALSE(listed.contains(kData)) << "the repair uploaded what the selection leaves out";
    // The published metadata is still the filtered mirror's: it lists exactly what is there.
    auto republished = client().get_object(bucket(), key("repodata/repomd.xml"));
    ASSERT_TRUE(republished) << republished.error().to_string();
    EXPECT_NE(*republished, read_file(upstream_ / "repodata" / "repomd.xml"));
    const CommandResult all = verify({"--all-packages", "--no-cache"});
    EXPECT_EQ(all.exit_code, 0) << all.out << all.err;
    EXPECT_NE(all.out.find("sample: OK: 4 packages"), std::string::npos) << all.out;
}

}  // namespace
}  // namespace rpmirror::test
