// dedupe_targets on real files: what is searched (siblings, never the excluded directory,
// repodata/, staging directories, symlinks, other filesystems), what is linked (only files that
// verify, by cache or by hashing), how (hard link or reflink, final name only once complete) and
// the fallbacks (reflink unsupported: left to the download).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "rpmirror/checksum/checksum.hpp"
#include "rpmirror/dedupe/dedupe.hpp"
#include "rpmirror/plan/plan.hpp"
#include "support/temp_dir.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror {
namespace {

namespace stdfs = std::filesystem;
using test::TempDir;

struct FileId {
    dev_t dev = 0;
    ino_t ino = 0;
    nlink_t links = 0;
    bool operator==(const FileId& other) const { return dev == other.dev && ino == other.ino; }
};

FileId id_of(const stdfs::path& path) {
    struct stat st {};
    EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
    return {st.st_dev, st.st_ino, st.st_nlink};
}

class Dedupe : public ::testing::Test {
  protected:
    // Writes `content` as <tmp>/<relative> and returns the target that asks for it under
    // `destination` of the repository <tmp>/mirror/<repo>.
    DedupeTarget write_package(const std::string& relative, const std::string& content,
                               const std::string& repo = "updates",
                               const std::string& destination = "Packages/p.rpm") {
        TempDir::write_at(tmp_ / relative, content);
        return target_for(content, repo, destination);
    }

    DedupeTarget target_for(const std::string& content, const std::string& repo = "updates",
                            const std::string& destination = "Packages/p.rpm") {
        return {ChecksumType::Sha256, hash_bytes(ChecksumType::Sha256, content), content.size(),
                tmp_ / "mirror" / repo, destination};
    }

    DedupeOptions options(DedupeMode mode = DedupeMode::Hardlink) {
        DedupeOptions dedupe;
        dedupe.mode = mode;
        dedupe.trees = {tmp_ / "mirror"};
        dedupe.excluded = {tmp_ / "mirror" / "updates"};
        return dedupe;
    }

    TempDir tmp_;
    const std::string content_ = std::string(10000, 'x') + "package";
};

TEST_F(Dedupe, HardLinksAVerifiedSiblingFileByHashing) {
    const DedupeTarget target = write_package("mirror/base/Packages/p.rpm", content_);
    // Not modified within the racy window: hashing it writes its cache entry.
    stdfs::last_write_time(tmp_ / "mirror/base/Packages/p.rpm",
                           stdfs::file_time_type::clock::now() - std::chrono::hours(1));
    const std::vector<DedupeTarget> targets{target};
    const DedupeOutcome outcome = dedupe_targets(targets, options());
    ASSERT_EQ(outcome.linked, std::vector<bool>{true}) << testing::PrintToString(outcome.notes);
    EXPECT_EQ(outcome.linked_count, 1U);
    EXPECT_EQ(outcome.linked_bytes, content_.size());
    EXPECT_EQ(outcome.hashed, 1U) << "no cache entry: hashed";
    const stdfs::path linked = tmp_ / "mirror/updates/Packages/p.rpm";
    EXPECT_EQ(id_of(linked), id_of(tmp_ / "mirror/base/Packages/p.rpm"));
    EXPECT_EQ(id_of(linked).links, 2U);
    for (const auto& entry : stdfs::recursive_directory_iterator(tmp_ / "mirror/updates")) {
        EXPECT_FALSE(entry.path().filename().string().ends_with(".part")) << entry.path();
        EXPECT_FALSE(entry.path().filename().string().ends_with(".dedupe-link")) << entry.path();
    }
    // No sync state records the candidate: it is hashed again (its cache entry, which anyone who
    // can write the file can write, is not believed; nor is one written).
    stdfs::remove(linked);
    const DedupeOutcome again = dedupe_targets(targets, options());
    EXPECT_EQ(again.linked_count, 1U);
    EXPECT_EQ(again.hashed, 1U) << "a cache entry of a file rpmirror did not write is believed";
}

TEST_F(Dedupe, TheCacheEntryOfAFileASyncStateRecordsIsBelieved) {
    const DedupeTarget target = write_package("mirror/base/Packages/p.rpm", content_);
    const stdfs::path candidate = tmp_ / "mirror/base/Packages/p.rpm";
    stdfs::last_write_time(candidate, stdfs::file_time_type::clock::now() - std::chrono::hours(1));
    {
        const UniqueFd fd(::open(candidate.c_str(), O_RDONLY | O_CLOEXEC));
        struct stat st {};
        ASSERT_TRUE(fd && ::fstat(fd.get(), &st) == 0);
        ASSERT_TRUE(write_cached_digest(fd.get(), st, ChecksumType::Sha256, target.digest, true));
    }
    // As a sync leaves it: the file recorded as it is now (after its cache entry was written).
    SyncState state;
    state.files.push_back(*stat_for_state(tmp_ / "mirror/base", "Packages/p.rpm"));
    ASSERT_TRUE(write_sync_state(sync_state_path(tmp_ / "state", tmp_ / "mirror/base"), state));
    DedupeOptions trusting = options();
    trusting.state_dir = tmp_ / "state";
    const std::vector<DedupeTarget> targets{target};
    const DedupeOutcome outcome = dedupe_targets(targets, trusting);
    EXPECT_EQ(outcome.linked_count, 1U) << testing::PrintToString(outcome.notes);
    EXPECT_EQ(outcome.hashed, 0U) << "the cache entry of a file rpmirror wrote was not believed";

    // Changed since (here: only its mode, which changes its ctime): hashed again.
    stdfs::remove(tmp_ / "mirror/updates/Packages/p.rpm");
    stdfs::permissions(candidate, stdfs::perms(0600));
    const DedupeOutcome changed = dedupe_targets(targets, trusting);
    EXPECT_EQ(changed.linked_count, 1U);
    EXPECT_EQ(changed.hashed, 1U);
}

TEST_F(Dedupe, ACandidateOthersMayWriteIsNeverHardLinked) {
    const DedupeTarget target = write_package("mirror/base/Packages/p.rpm", content_);
    stdfs::permissions(tmp_ / "mirror/base/Packages/p.rpm", stdfs::perms(0664));
    const std::vector<DedupeTarget> targets{target};
    const DedupeOutcome outcome = dedupe_targets(targets, options());
    EXPECT_EQ(outcome.linked, std::vector<bool>{false});
    EXPECT_EQ(outcome.hashed, 0U) << "not even a candidate";
    ASSERT_EQ(outcome.notes.size(), 1U);
    EXPECT_NE(outcome.notes[0].find("writable by group or others"), std::string::npos)
        << outcome.notes[0];
    EXPECT_FALSE(stdfs::exists(tmp_ / "mirror/updates/Packages/p.rpm"));
}

TEST_F(Dedupe, NeverLinksAFileWhoseDigestDiffers) {
    std::string other = content_;
    other.back() = 'X';  // same size, other bytes
    TempDir::write_at(tmp_ / "mirror/base/Packages/p.rpm", other);
    const std::vector<DedupeTarget> targets{target_for(content_)};
    const DedupeOutcome outcome = dedupe_targets(targets, options());
    EXPECT_EQ(outcome.linked, std::vector<bool>{false});
    EXPECT_EQ(outcome.hashed, 1U);
    EXPECT_FALSE(stdfs::exists(tmp_ / "mirror/updates/Packages/p.rpm"));
}

TEST_F(Dedupe, AStaleCacheEntryIsNotTrusted) {
    // The file verified once (cache written), then rewritten with other bytes of the same size.
    const stdfs::path candidate = tmp_ / "mirror/base/Packages/p.rpm";
    TempDir::write_at(candidate, content_);
    ASSERT_TRUE(hash_file(candidate, ChecksumType::Sha256));
    std::string other = content_;
    other.front() = 'Y';
    TempDir::write_at(candidate, other);
    const std::vector<DedupeTarget> targets{target_for(content_)};
    EXPECT_EQ(dedupe_targets(targets, options()).linked, std::vector<bool>{false});
}

TEST_F(Dedupe, SearchesNeitherTheOwnRepositoryNorRepodataNorStagingNorSymlinks) {
    TempDir::write_at(tmp_ / "mirror/updates/Packages/old/p.rpm", content_);  // excluded
    TempDir::write_at(tmp_ / "mirror/base/repodata/p.rpm", content_);
    TempDir::write_at(tmp_ / "mirror/base/.repodata.staging-abc/p.rpm", content_);
    TempDir::write_at(tmp_ / "elsewhere/Packages/p.rpm", content_);
    stdfs::create_directories(tmp_ / "mirror/base/Packages");
    stdfs::create_symlink(tmp_ / "elsewhere/Packages/p.rpm", tmp_ / "mirror/base/Packages/p.rpm");
    stdfs::create_directory_symlink(tmp_ / "elsewhere/Packages", tmp_ / "mirror/base/linked-dir");
    const std::vector<DedupeTarget> targets{target_for(content_)};
    const DedupeOutcome outcome = dedupe_targets(targets, options());
    EXPECT_EQ(outcome.linked, std::vector<bool>{false});
    EXPECT_EQ(outcome.hashed, 0U) << "nothing reachable was a candidate";
}

// sibling_parents: only the directories beside the repository that hold a published mirror
// (repodata/repomd.xml) are searched; snapshots/, unpublished or unrelated directories, and a
// symlinked mirror are not.
TEST_F(Dedupe, SiblingParentsSearchOnlyThePublishedMirrorsBesideTheRepository) {
    TempDir::write_at(tmp_ / "mirror/snapshots/s1/base/Packages/p.rpm", content_);
    TempDir::write_at(tmp_ / "mirror/unpublished/Packages/p.rpm", content_);
    TempDir::write_at(tmp_ / "mirror/linked/repodata/repomd.xml", "<repomd/>");
    TempDir::write_at(tmp_ / "mirror/linked/Packages/p.rpm", content_);
    stdfs::rename(tmp_ / "mirror/linked", tmp_ / "linked");
    stdfs::create_directory_symlink(tmp_ / "linked", tmp_ / "mirror/linked");
    DedupeOptions siblings = options();
    siblings.trees.clear();
    siblings.sibling_parents = {tmp_ / "mirror"};
    const std::vector<DedupeTarget> targets{target_for(content_)};
    EXPECT_EQ(dedupe_targets(targets, siblings).linked, std::vector<bool>{false});

    TempDir::write_at(tmp_ / "mirror/base/repodata/repomd.xml", "<repomd/>");
    TempDir::write_at(tmp_ / "mirror/base/Packages/p.rpm", content_);
    const DedupeOutcome outcome = dedupe_targets(targets, siblings);
    ASSERT_EQ(outcome.linked, std::vector<bool>{true}) << testing::PrintToString(outcome.notes);
    EXPECT_EQ(id_of(tmp_ / "mirror/updates/Packages/p.rpm"),
              id_of(tmp_ / "mirror/base/Packages/p.rpm"));
    EXPECT_EQ(outcome.hashed, 1U) << "only the published sibling's file was a candidate";
}

// A sibling synced without --download-metadata has no repodata/: its sync state marks it.
TEST_F(Dedupe, ASiblingWithASyncStateIsAMirrorToo) {
    TempDir::write_at(tmp_ / "mirror/base/Packages/p.rpm", content_);
    DedupeOptions siblings = options();
    siblings.trees.clear();
    siblings.sibling_parents = {tmp_ / "mirror"};
    siblings.state_dir = tmp_ / "state";
    const std::vector<DedupeTarget> targets{target_for(content_)};
    EXPECT_EQ(dedupe_targets(targets, siblings).linked, std::vector<bool>{false});
    TempDir::write_at(sync_state_path(tmp_ / "state", tmp_ / "mirror/base"), "{}");
    EXPECT_EQ(dedupe_targets(targets, siblings).linked, std::vector<bool>{true});
}

TEST_F(Dedupe, ExtraTreesAreSearchedAndOffSearchesNothing) {
    TempDir::write_at(tmp_ / "elsewhere/deep/dir/p.rpm", content_);
    const std::vector<DedupeTarget> targets{target_for(content_)};
    EXPECT_EQ(dedupe_targets(targets, options(DedupeMode::Off)).linked, std::vector<bool>{false});
    DedupeOptions extra = options();
    extra.trees.push_back(tmp_ / "missing");  // skipped without a note
    extra.trees.push_back(tmp_ / "elsewhere");
    const DedupeOutcome outcome = dedupe_targets(targets, extra);
    EXPECT_EQ(outcome.linked, std::vector<bool>{true});
    EXPECT_TRUE(outcome.notes.empty()) << testing::PrintToString(outcome.notes);
}

TEST_F(Dedupe, ATargetOfUnknownSizeIsNeverLinked) {
    DedupeTarget target = write_package("mirror/base/Packages/p.rpm", content_);
    target.size = kUnknownSize;
    const std::vector<DedupeTarget> targets{target};
    EXPECT_EQ(dedupe_targets(targets, options()).linked, std::vector<bool>{false});
}

TEST_F(Dedupe, OneCandidateServesEveryTargetWithItsDigest) {
    write_package("mirror/base/Packages/p.rpm", content_);
    const std::vector<DedupeTarget> targets{target_for(content_, "updates", "a/p.rpm"),
                                            target_for(content_, "updates", "b/p.rpm")};
    const DedupeOutcome outcome = dedupe_targets(targets, options());
    EXPECT_EQ(outcome.linked, (std::vector<bool>{true, true}));
    EXPECT_EQ(outcome.linked_bytes, 2 * content_.size());
}

// ext4 and tmpfs have no FICLONE: the target is left to the download, with a note naming it.
TEST_F(Dedupe, ReflinkWhereUnsupportedFallsBackToTheDownload) {
    write_package("mirror/base/Packages/p.rpm", content_);
    const std::vector<DedupeTarget> targets{target_for(content_)};
    const DedupeOutcome outcome = dedupe_targets(targets, options(DedupeMode::Reflink));
    if (outcome.linked_count == 1) {
        // A filesystem with reflinks (btrfs, XFS): a separate inode with the same bytes.
        EXPECT_NE(id_of(tmp_ / "mirror/updates/Packages/p.rpm"),
                  id_of(tmp_ / "mirror/base/Packages/p.rpm"));
        EXPECT_EQ(hash_file(tmp_ / "mirror/updates/Packages/p.rpm", ChecksumType::Sha256)->hex,
                  hash_bytes(ChecksumType::Sha256, content_));
        return;
    }
    EXPECT_EQ(outcome.linked, std::vector<bool>{false});
    EXPECT_EQ(outcome.fallbacks, 1U);
    ASSERT_EQ(outcome.notes.size(), 1U);
    EXPECT_NE(outcome.notes[0].find("reflink"), std::string::npos) << outcome.notes[0];
    EXPECT_NE(outcome.notes[0].find("Packages/p.rpm"), std::string::npos) << outcome.notes[0];
    EXPECT_FALSE(stdfs::exists(tmp_ / "mirror/updates/Packages/p.rpm"));
}

// /dev/shm is tmpfs, the temporary directory another filesystem: never linked across.
TEST_F(Dedupe, NothingIsLinkedAcrossFilesystems) {
    struct stat shm {};
    struct stat here {};
    ASSERT_EQ(::stat("/dev/shm", &shm), 0) << "this test needs /dev/shm (tmpfs)";
    ASSERT_EQ(::stat(tmp_.path().c_str(), &here), 0);
    ASSERT_NE(shm.st_dev, here.st_dev)
        << "this test needs the temporary directory on another filesystem than /dev/shm";
    const stdfs::path other =
        stdfs::path("/dev/shm") / ("rpmirror-dedupe-test-" + std::to_string(::getpid()));
    TempDir::write_at(other / "Packages/p.rpm", content_);
    DedupeOptions extra = options();
    extra.trees.push_back(other);
    const std::vector<DedupeTarget> targets{target_for(content_)};
    const DedupeOutcome outcome = dedupe_targets(targets, extra);
    stdfs::remove_all(other);
    EXPECT_EQ(outcome.linked, std::vector<bool>{false});
    EXPECT_EQ(outcome.hashed, 0U) << "another filesystem is not even read";
    EXPECT_EQ(outcome.fallbacks, 0U);
}

TEST(DedupeMode, ParsesItsNamesAndNamesBadInput) {
    EXPECT_EQ(*parse_dedupe_mode("hardlink"), DedupeMode::Hardlink);
    EXPECT_EQ(*parse_dedupe_mode("reflink"), DedupeMode::Reflink);
    EXPECT_EQ(*parse_dedupe_mode("off"), DedupeMode::Off);
    const auto bad = parse_dedupe_mode("copy");
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().to_string().find("'copy'"), std::string::npos);
}

}  // namespace
}  // namespace rpmirror
