// The local MirrorStore's own guarantees, beyond the contract every store shares
// (tests/integration/s3/test_store_contract.cpp): no symlink is followed, nothing outside the
// root is touched, the staging directories are metadata, a file's version sees `cp -p`, and a
// document already written is not written again.
#include <fcntl.h>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <vector>

#include "checksum/hasher.hpp"
#include "plan/plan.hpp"
#include "rpmirror/checksum/checksum.hpp"

#include "store/local_store.hpp"
#include "support/source_tree.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror {
namespace {

namespace stdfs = std::filesystem;

TEST(LocalStore, DeleteRemovesOnlyUnselectedRegularRpmFilesInsideTheRepository) {
    test::TempDir dir;
    const auto repo = dir / "repo";
    dir.write("repo/Packages/a/keep-1.0.rpm", "k");
    dir.write("repo/Packages/a/stale-0.9.rpm", "s");
    dir.write("repo/Packages/b/old/deep-1.rpm", "d");
    dir.write("repo/top.rpm", "t");
    dir.write("repo/Packages/notes.txt", "not an rpm");
    dir.write("repo/Packages/.keep-1.1.rpm.part", "partial download");
    dir.write("repo/repodata/odd.rpm", "metadata is not touched");
    dir.write("repo/.repodata.staging-abc/odd.rpm", "nor is a staging directory");
    dir.write("outside/victim.rpm", "outside the repository");
    dir.write("outside/sub/victim2.rpm", "outside the repository");
    stdfs::create_symlink(dir / "outside/victim.rpm", repo / "Packages/link.rpm");
    stdfs::create_directory_symlink(dir / "outside/sub", repo / "Packages/linkdir");

    store::LocalStore local(repo);
    const auto unlisted = store::unlisted_packages(local, {"Packages/a/keep-1.0.rpm"});
    ASSERT_TRUE(unlisted) << unlisted.error().to_string();
    ASSERT_EQ(unlisted->size(), 3U);
    EXPECT_TRUE(stdfs::exists(repo / "top.rpm")) << "listing removes nothing";

    const auto removed = store::delete_unlisted(local, {"Packages/a/keep-1.0.rpm"});
    ASSERT_TRUE(removed) << removed.error().to_string();
    EXPECT_EQ(*removed, (std::vector<std::string>{"Packages/a/stale-0.9.rpm",
                                                  "Packages/b/old/deep-1.rpm", "top.rpm"}));
    EXPECT_TRUE(stdfs::exists(repo / "Packages/a/keep-1.0.rpm"));
    EXPECT_TRUE(stdfs::exists(repo / "Packages/notes.txt"));
    EXPECT_TRUE(stdfs::exists(repo / "Packages/.keep-1.1.rpm.part"));
    EXPECT_TRUE(stdfs::exists(repo / "repodata/odd.rpm"));
    EXPECT_TRUE(stdfs::exists(repo / ".repodata.staging-abc/odd.rpm"));
    EXPECT_TRUE(stdfs::is_symlink(repo / "Packages/link.rpm"));
    EXPECT_EQ(test::read_file(dir / "outside/victim.rpm"), "outside the repository");
    EXPECT_EQ(test::read_file(dir / "outside/sub/victim2.rpm"), "outside the repository");
}

TEST(LocalStore, AMissingRootHoldsNothingAndASymlinkedRootIsRefused) {
    test::TempDir dir;
    store::LocalStore absent(dir / "absent");
    const auto nothing = store::delete_unlisted(absent, {});
    ASSERT_TRUE(nothing) << nothing.error().to_string();
    EXPECT_TRUE(nothing->empty());

    dir.write("real/x.rpm", "x");
    stdfs::create_directory_symlink(dir / "real", dir / "repo");
    store::LocalStore linked(dir / "repo");
    const auto refused = store::delete_unlisted(linked, {});
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, ErrorCode::Unsafe);
    EXPECT_EQ(refused.error().subject, (dir / "repo").string());
    EXPECT_TRUE(stdfs::exists(dir / "real/x.rpm"));
}

TEST(LocalStore, AReadersLockCreatesNothingAndIsTheLockInTheStateDirectoryGiven) {
    test::TempDir dir;
    const auto repo = dir / "absent" / "repo";
    store::LocalStore reader(repo, dir / "state");
    auto held = reader.lock_present(std::nullopt);
    ASSERT_TRUE(held) << held.error().to_string();
    EXPECT_FALSE(stdfs::exists(dir / "absent"));  // a snapshot of no mirror creates none
    EXPECT_TRUE(stdfs::exists(dir / "state" / "repos"));

    // A sync with that state directory waits for it; one with another does not see it.
    store::LocalStore sync(repo, dir / "state");
    const auto refused = sync.lock(std::nullopt, {});
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, ErrorCode::Busy) << refused.error().to_string();
    EXPECT_FALSE(stdfs::exists(dir / "absent"));
    store::LocalStore elsewhere(repo, dir / "other-state");
    const auto other = elsewhere.lock_present(std::nullopt);
    EXPECT_TRUE(other) << other.error().to_string();
}

TEST(LocalStore, ACopyWithTheSameSizeAndMtimeIsAnotherVersion) {
    test::TempDir dir;
    dir.write("repo/Packages/a.rpm", "abc");
    store::LocalStore local(dir / "repo");
    const auto before = local.stat("Packages/a.rpm");
    ASSERT_TRUE(before && *before);
    dir.write("repo/Packages/a.rpm.new", "xyz");
    struct stat st {};
    ASSERT_EQ(::stat((dir / "repo/Packages/a.rpm").c_str(), &st), 0);
    const struct timespec times[2] = {st.st_atim, st.st_mtim};
    ASSERT_EQ(::utimensat(AT_FDCWD, (dir / "repo/Packages/a.rpm.new").c_str(), times, 0), 0);
    stdfs::rename(dir / "repo/Packages/a.rpm.new", dir / "repo/Packages/a.rpm");
    const auto after = local.stat("Packages/a.rpm");
    ASSERT_TRUE(after && *after);
    EXPECT_EQ((*after)->size, (*before)->size);
    EXPECT_NE((*after)->version, (*before)->version);
    EXPECT_FALSE(store::files_unchanged(local, {{"Packages/a.rpm", **before}}));
    EXPECT_TRUE(store::files_unchanged(local, {{"Packages/a.rpm", **after}}));
}

// write_document (comps.xml, --mirror-url's list beyond the repository) replaces a file whose
// content differs, and leaves one that already holds the content alone (the same inode).
TEST(LocalStore, WriteDocumentLeavesAFileHoldingTheContentAlone) {
    test::TempDir dir;
    dir.write("repo/Packages/a.rpm", "a");
    store::LocalStore local(dir / "repo");
    ASSERT_TRUE(local.write_document("../mirrors/list", "http://mirror/a/\n"));
    const stdfs::path list = dir / "mirrors/list";
    EXPECT_EQ(test::read_file(list), "http://mirror/a/\n");
    struct stat first {};
    ASSERT_EQ(::stat(list.c_str(), &first), 0);

    ASSERT_TRUE(local.write_document("../mirrors/list", "http://mirror/a/\n"));
    struct stat again {};
    ASSERT_EQ(::stat(list.c_str(), &again), 0);
    EXPECT_EQ(again.st_ino, first.st_ino) << "not written again";

    ASSERT_TRUE(local.write_document("../mirrors/list", "http://mirror/b/\n"));
    EXPECT_EQ(test::read_file(list), "http://mirror/b/\n");
}

TEST(LocalStore, WriteDocumentNeverWritesThroughASymlinkBelowWhereItsKeyClimbsTo) {
    test::TempDir dir;
    dir.write("repo/Packages/a.rpm", "a");
    dir.write("elsewhere/list", "theirs\n");
    stdfs::create_directory_symlink(dir / "elsewhere", dir / "mirrors");
    store::LocalStore local(dir / "repo");
    const auto written = local.write_document("../mirrors/list", "http://mirror/a/\n");
    ASSERT_FALSE(written);
    EXPECT_EQ(written.error().code, ErrorCode::Unsafe) << written.error().to_string();
    EXPECT_EQ(test::read_file(dir / "elsewhere/list"), "theirs\n");
}

// check_files gives the version of what it checked (what a snapshot's copy is pinned to): the
// version the file has now, even though checking it wrote its checksum cache (a ctime change).
TEST(LocalStore, CheckFilesGivesTheVersionOfTheFileItChecked) {
    test::TempDir dir;
    dir.write("repo/Packages/a.rpm", "abc");
    store::LocalStore local(dir / "repo", dir / "state");
    const std::vector<store::ExpectedFile> files{
        {"Packages/a.rpm", ChecksumType::Sha256, hash_bytes(ChecksumType::Sha256, "abc"), 3},
        {"Packages/b.rpm", ChecksumType::Sha256, hash_bytes(ChecksumType::Sha256, "abc"), 3}};
    const auto checked = local.check_files(files, {1, /*use_cache=*/true});
    ASSERT_EQ(checked.size(), 2U);
    ASSERT_EQ(checked[0].finding, store::Finding::Intact);
    const auto now = local.stat("Packages/a.rpm");
    ASSERT_TRUE(now && *now);
    EXPECT_EQ(checked[0].version, (*now)->version);
    EXPECT_EQ(checked[1].finding, store::Finding::Missing);
    EXPECT_TRUE(checked[1].version.empty());
}

// A snapshot's hard link moves the linked file's ctime; follow_links moves the sync state's record
// with it, so the next sync's no-op (files_unchanged over the record) holds. A file replaced since
// it was linked is not followed.
TEST(LocalStore, FollowLinksMovesTheRecordOfAFileLinkedElsewhere) {
    test::TempDir dir;
    dir.write("repo/Packages/a.rpm", "abc");
    dir.write("repo/Packages/b.rpm", "def");
    store::LocalStore local(dir / "repo", dir / "state");
    SyncState state{std::string(64, 'f'), "arch=x86_64", {}};
    for (const char* key : {"Packages/a.rpm", "Packages/b.rpm"}) {
        const auto file = stat_for_state(dir / "repo", key);
        ASSERT_TRUE(file);
        state.files.push_back(*file);
    }
    ASSERT_TRUE(write_sync_state(sync_state_path(dir / "state", dir / "repo"), state));
    const auto recorded = local.recorded();
    ASSERT_TRUE(recorded && recorded->versions);
    const store::Listing before = *recorded->versions;
    ASSERT_TRUE(store::files_unchanged(local, before));

    stdfs::create_directories(dir / "snapshot");
    for (const char* name : {"a.rpm", "b.rpm"}) {
        stdfs::create_hard_link(dir / "repo/Packages" / name, dir / "snapshot" / name);
    }
    dir.write("repo/Packages/b.rpm.new", "xyz");  // b replaced after its link
    stdfs::rename(dir / "repo/Packages/b.rpm.new", dir / "repo/Packages/b.rpm");
    EXPECT_FALSE(store::files_unchanged(local, {{"Packages/a.rpm", before.at("Packages/a.rpm")}}))
        << "a link moves the ctime";

    local.follow_links(before);
    const auto followed = local.recorded();
    ASSERT_TRUE(followed && followed->versions);
    EXPECT_TRUE(store::files_unchanged(
        local, {{"Packages/a.rpm", followed->versions->at("Packages/a.rpm")}}));
    EXPECT_EQ(followed->versions->at("Packages/a.rpm").version,
              (*local.stat("Packages/a.rpm"))->version);
    EXPECT_EQ(followed->versions->at("Packages/b.rpm"), before.at("Packages/b.rpm"))
        << "a replaced file's record stays";
}

}  // namespace
}  // namespace rpmirror
