// Swapping a staged directory in: RENAME_EXCHANGE, and the merge by plain renames that NFS, CIFS
// and FUSE get.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include "fs/beneath.hpp"
#include "fs/swap.hpp"
#include "support/source_tree.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror::fs {
namespace {

const MergeOrder kRepodataOrder{{"repomd.xml", "repomd.xml.asc"}, {"old-primary.xml.gz"}};

class Swap : public ::testing::Test {
  protected:
    void TearDown() override { force_fallbacks(false); }

    // A live directory (old revision, signed) and a staged one (new revision, `signed_new`).
    void make_revisions(bool signed_new) {
        dir_.write("meta/repodata/repomd.xml", "old index");
        dir_.write("meta/repodata/repomd.xml.asc", "old signature");
        dir_.write("meta/repodata/old-primary.xml.gz", "old primary");
        dir_.write("meta/repodata/older-primary.xml.gz", "a revision before");
        dir_.write("meta/repodata/shared-comps.xml", "same in both");
        dir_.write("meta/repodata/primary.xml.gz", "plain name, revision A");
        dir_.write("meta/.stage/repomd.xml", "new index");
        if (signed_new) {
            dir_.write("meta/.stage/repomd.xml.asc", "new signature");
        }
        dir_.write("meta/.stage/new-primary.xml.gz", "new primary");
        dir_.write("meta/.stage/shared-comps.xml", "same in both");
        // A record whose name does not change with its content: the same size, other bytes.
        dir_.write("meta/.stage/primary.xml.gz", "plain name, revision B");
    }

    std::string read(std::string_view name) const {
        return test::read_file(dir_ / "meta/repodata" / name);
    }

    test::TempDir dir_;
};

TEST_F(Swap, ExchangesDirectoriesWhereTheFilesystemCan) {
    make_revisions(true);
    auto swapped = swap_in_directory(dir_ / "meta", ".stage", "repodata", kRepodataOrder);
    ASSERT_TRUE(swapped) << swapped.error().to_string();
    EXPECT_EQ(*swapped, SwapMethod::Exchanged);  // tmpfs and ext4 support RENAME_EXCHANGE
    EXPECT_EQ(read("repomd.xml"), "new index");
    EXPECT_FALSE(std::filesystem::exists(dir_ / "meta/repodata/old-primary.xml.gz"));
    EXPECT_EQ(test::read_file(dir_ / "meta/.stage/repomd.xml"), "old index");
}

TEST_F(Swap, CreatesTheLiveDirectoryWhenThereIsNone) {
    dir_.write("meta/.stage/repomd.xml", "new index");
    for (const bool forced : {false, true}) {
        force_fallbacks(forced);
        auto swapped = swap_in_directory(dir_ / "meta", ".stage", "repodata", kRepodataOrder);
        ASSERT_TRUE(swapped) << swapped.error().to_string();
        EXPECT_EQ(*swapped, SwapMethod::Created);
        EXPECT_EQ(read("repomd.xml"), "new index");
        std::filesystem::rename(dir_ / "meta/repodata", dir_ / "meta/.stage");
    }
}

TEST_F(Swap, MergesByRenamesKeepingTheRecordsOfTheReplacedIndex) {
    make_revisions(true);
    force_fallbacks(true);
    const auto shared_inode = [this] {
        struct stat st {};
        EXPECT_EQ(::lstat((dir_ / "meta/repodata/shared-comps.xml").c_str(), &st), 0);
        return st.st_ino;
    };
    const ino_t shared_before = shared_inode();
    auto swapped = swap_in_directory(dir_ / "meta", ".stage", "repodata", kRepodataOrder);
    ASSERT_TRUE(swapped) << swapped.error().to_string();
    EXPECT_EQ(*swapped, SwapMethod::Merged);
    EXPECT_EQ(read("primary.xml.gz"), "plain name, revision B") << "same size, other content";
    EXPECT_EQ(shared_inode(), shared_before) << "the same bytes: left in place";
    EXPECT_EQ(read("repomd.xml"), "new index");
    EXPECT_EQ(read("repomd.xml.asc"), "new signature");
    EXPECT_EQ(read("new-primary.xml.gz"), "new primary");
    EXPECT_EQ(read("shared-comps.xml"), "same in both");
    EXPECT_EQ(read("old-primary.xml.gz"), "old primary") << "listed by the replaced index";
    EXPECT_FALSE(std::filesystem::exists(dir_ / "meta/repodata/older-primary.xml.gz"))
        << "listed by no published index";
}

TEST_F(Swap, MergeRemovesASignatureTheNewIndexDoesNotHaveBeforeReplacingTheIndex) {
    make_revisions(false);
    force_fallbacks(true);
    auto swapped = swap_in_directory(dir_ / "meta", ".stage", "repodata", kRepodataOrder);
    ASSERT_TRUE(swapped) << swapped.error().to_string();
    EXPECT_EQ(read("repomd.xml"), "new index");
    EXPECT_FALSE(std::filesystem::exists(dir_ / "meta/repodata/repomd.xml.asc"));
}

TEST_F(Swap, RefusesALiveEntryThatIsNotADirectory) {
    dir_.write("meta/.stage/repomd.xml", "new index");
    std::filesystem::create_directories(dir_ / "elsewhere");
    std::filesystem::create_directory_symlink(dir_ / "elsewhere", dir_ / "meta/repodata");
    for (const bool forced : {false, true}) {
        force_fallbacks(forced);
        auto swapped = swap_in_directory(dir_ / "meta", ".stage", "repodata", kRepodataOrder);
        ASSERT_FALSE(swapped);
        EXPECT_EQ(swapped.error().code, ErrorCode::Unsafe);
        EXPECT_TRUE(std::filesystem::is_empty(dir_ / "elsewhere"));
    }
}

}  // namespace
}  // namespace rpmirror::fs
