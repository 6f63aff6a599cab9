// --dedupe on real files (dedupe::copy_duplicates over the disk store, and the search a sync of
// a directory opens: store::SyncStore::siblings): what is searched (the mirrors beside the
// repository, --dedupe-dir's trees; never the repository itself, repodata/, staging directories,
// symlinks, other filesystems), what is linked (only files that verify, by cache or by hashing),
// how (hard link or reflink, final name only once complete) and the fallbacks (reflink
// unsupported: left to the download).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "checksum/hasher.hpp"
#include "dedupe/copies.hpp"
#include "plan/plan.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "rpmirror/dedupe/dedupe.hpp"
#include "store/object_store.hpp"
#include "store/sync_store.hpp"
#include "support/temp_dir.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror {
namespace {

namespace stdfs = std::filesystem;
using dedupe::Outcome;
using dedupe::Search;
using dedupe::Wanted;
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
    // Writes `content` as <tmp>/<relative> and returns the package that asks for it at
    // `destination` of the repository <tmp>/mirror/updates.
    Wanted write_package(const std::string& relative, const std::string& content,
                         const std::string& destination = "Packages/p.rpm") {
        TempDir::write_at(tmp_ / relative, content);
        return wanted_for(content, destination);
    }

    Wanted wanted_for(const std::string& content,
                      const std::string& destination = "Packages/p.rpm") {
        return {destination, ChecksumType::Sha256, hash_bytes(ChecksumType::Sha256, content),
                content.size()};
    }

    // The repository mirror/updates of the store at <tmp>; the tree mirror/ searched whole (no
    // mirror beside it searched as one), as --dedupe-dir would.
    Search search(DedupeMode mode = DedupeMode::Hardlink) {
        Search search;
        search.mode = mode;
        search.where.repository = "mirror/updates";
        search.where.mirror = [](const std::string&) { return false; };
        search.where.trees = {"mirror"};
        search.where.partials = true;
        return search;
    }

    Outcome run(const std::vector<Wanted>& wanted, const Search& given) {
        return dedupe::copy_duplicates(*store_, wanted, given);
    }

    // As a sync of the directory <tmp>/mirror/updates searches (store::SyncStore::siblings: the
    // mirrors beside it, then `dedupe_dirs`), its sync states in <tmp>/state.
    Outcome run_synced(const std::vector<Wanted>& wanted,
                       std::vector<stdfs::path> dedupe_dirs = {}) {
        store::SyncStoreOptions options;
        options.destination = (tmp_ / "mirror").string();
        options.repository = tmp_ / "mirror/updates";
        options.metadata_dir = options.repository;
        options.state_dir = tmp_ / "state";
        options.dedupe_dirs = std::move(dedupe_dirs);
        auto opened = store::SyncStore::open(options);
        EXPECT_TRUE(opened) << opened.error().to_string();
        if (!opened) {
            return {};
        }
        const std::optional<store::Siblings> siblings = (*opened)->siblings();
        EXPECT_TRUE(siblings);
        if (!siblings) {
            return {};
        }
        const Search synced = dedupe::search_of(*siblings, DedupeMode::Hardlink, true, {});
        return dedupe::copy_duplicates(*siblings->shared, wanted, synced);
    }

    TempDir tmp_;
    std::unique_ptr<store::ObjectStore> store_ = store::disk_object_store(tmp_.path());
    const std::string content_ = std::string(10000, 'x') + "package";
};

TEST_F(Dedupe, HardLinksAVerifiedSiblingFileByHashing) {
    const Wanted target = write_package("mirror/base/Packages/p.rpm", content_);
    // Not modified within the racy window: hashing it writes its cache entry.
    stdfs::last_write_time(tmp_ / "mirror/base/Packages/p.rpm",
                           stdfs::file_time_type::clock::now() - std::chrono::hours(1));
    const std::vector<Wanted> targets{target};
    const Outcome outcome = run(targets, search());
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
    const Outcome again = run(targets, search());
    EXPECT_EQ(again.linked_count, 1U);
    EXPECT_EQ(again.hashed, 1U) << "a cache entry of a file rpmirror did not write is believed";
}

TEST_F(Dedupe, TheCacheEntryOfAFileASyncStateRecordsIsBelieved) {
    const Wanted target = write_package("mirror/base/Packages/p.rpm", content_);
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
    Search trusting = search();
    trusting.where.trust = cache_trust_of_state_dir(tmp_ / "state");
    const std::vector<Wanted> targets{target};
    const Outcome outcome = run(targets, trusting);
    EXPECT_EQ(outcome.linked_count, 1U) << testing::PrintToString(outcome.notes);
    EXPECT_EQ(outcome.hashed, 0U) << "the cache entry of a file rpmirror wrote was not believed";

    // Changed since (here: only its mode, which changes its ctime): hashed again.
    stdfs::remove(tmp_ / "mirror/updates/Packages/p.rpm");
    stdfs::permissions(candidate, stdfs::perms(0600));
    const Outcome changed = run(targets, trusting);
    EXPECT_EQ(changed.linked_count, 1U);
    EXPECT_EQ(changed.hashed, 1U);
}

TEST_F(Dedupe, ACandidateOthersMayWriteIsNeverHardLinked) {
    const Wanted target = write_package("mirror/base/Packages/p.rpm", content_);
    stdfs::permissions(tmp_ / "mirror/base/Packages/p.rpm", stdfs::perms(0664));
    const std::vector<Wanted> targets{target};
    const Outcome outcome = run(targets, search());
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
    const std::vector<Wanted> targets{wanted_for(content_)};
    const Outcome outcome = run(targets, search());
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
    const std::vector<Wanted> targets{wanted_for(content_)};
    EXPECT_EQ(run(targets, search()).linked, std::vector<bool>{false});
}

TEST_F(Dedupe, SearchesNeitherTheOwnRepositoryNorRepodataNorStagingNorSymlinks) {
    TempDir::write_at(tmp_ / "mirror/updates/Packages/old/p.rpm", content_);  // excluded
    TempDir::write_at(tmp_ / "mirror/base/repodata/p.rpm", content_);
    TempDir::write_at(tmp_ / "mirror/base/.repodata.staging-abc/p.rpm", content_);
    TempDir::write_at(tmp_ / "elsewhere/Packages/p.rpm", content_);
    stdfs::create_directories(tmp_ / "mirror/base/Packages");
    stdfs::create_symlink(tmp_ / "elsewhere/Packages/p.rpm", tmp_ / "mirror/base/Packages/p.rpm");
    stdfs::create_directory_symlink(tmp_ / "elsewhere/Packages", tmp_ / "mirror/base/linked-dir");
    const std::vector<Wanted> targets{wanted_for(content_)};
    const Outcome outcome = run(targets, search());
    EXPECT_EQ(outcome.linked, std::vector<bool>{false});
    EXPECT_EQ(outcome.hashed, 0U) << "nothing reachable was a candidate";
}

// A sync's search: only the directories beside the repository that hold a published mirror
// (repodata/repomd.xml) are searched; snapshots/, unpublished or unrelated directories, and a
// symlinked mirror are not.
TEST_F(Dedupe, SiblingParentsSearchOnlyThePublishedMirrorsBesideTheRepository) {
    TempDir::write_at(tmp_ / "mirror/snapshots/s1/base/Packages/p.rpm", content_);
    TempDir::write_at(tmp_ / "mirror/unpublished/Packages/p.rpm", content_);
    TempDir::write_at(tmp_ / "mirror/linked/repodata/repomd.xml", "<repomd/>");
    TempDir::write_at(tmp_ / "mirror/linked/Packages/p.rpm", content_);
    stdfs::rename(tmp_ / "mirror/linked", tmp_ / "linked");
    stdfs::create_directory_symlink(tmp_ / "linked", tmp_ / "mirror/linked");
    const std::vector<Wanted> targets{wanted_for(content_)};
    EXPECT_EQ(run_synced(targets).linked, std::vector<bool>{false});

    TempDir::write_at(tmp_ / "mirror/base/repodata/repomd.xml", "<repomd/>");
    TempDir::write_at(tmp_ / "mirror/base/Packages/p.rpm", content_);
    const Outcome outcome = run_synced(targets);
    ASSERT_EQ(outcome.linked, std::vector<bool>{true}) << testing::PrintToString(outcome.notes);
    EXPECT_EQ(id_of(tmp_ / "mirror/updates/Packages/p.rpm"),
              id_of(tmp_ / "mirror/base/Packages/p.rpm"));
    EXPECT_EQ(outcome.hashed, 1U) << "only the published sibling's file was a candidate";
}

// A sibling synced without --download-metadata has no repodata/: its sync state marks it.
TEST_F(Dedupe, ASiblingWithASyncStateIsAMirrorToo) {
    TempDir::write_at(tmp_ / "mirror/base/Packages/p.rpm", content_);
    const std::vector<Wanted> targets{wanted_for(content_)};
    EXPECT_EQ(run_synced(targets).linked, std::vector<bool>{false});
    TempDir::write_at(sync_state_path(tmp_ / "state", tmp_ / "mirror/base"), "{}");
    EXPECT_EQ(run_synced(targets).linked, std::vector<bool>{true});
}

TEST_F(Dedupe, ExtraTreesAreSearchedAndOffSearchesNothing) {
    TempDir::write_at(tmp_ / "elsewhere/deep/dir/p.rpm", content_);
    const std::vector<Wanted> targets{wanted_for(content_)};
    EXPECT_EQ(run(targets, search(DedupeMode::Off)).linked, std::vector<bool>{false});
    Search extra = search();
    extra.where.trees.push_back("missing");  // skipped without a note
    extra.where.trees.push_back("elsewhere");
    const Outcome outcome = run(targets, extra);
    EXPECT_EQ(outcome.linked, std::vector<bool>{true});
    EXPECT_TRUE(outcome.notes.empty()) << testing::PrintToString(outcome.notes);
    stdfs::remove(tmp_ / "mirror/updates/Packages/p.rpm");
    // As a sync's --dedupe-dir (a directory beside no mirror), a missing one skipped too.
    const Outcome synced = run_synced(targets, {tmp_ / "missing", tmp_ / "elsewhere"});
    EXPECT_EQ(synced.linked, std::vector<bool>{true}) << testing::PrintToString(synced.notes);
    EXPECT_EQ(id_of(tmp_ / "mirror/updates/Packages/p.rpm"),
              id_of(tmp_ / "elsewhere/deep/dir/p.rpm"));
    EXPECT_TRUE(synced.notes.empty()) << testing::PrintToString(synced.notes);
}

TEST_F(Dedupe, ATargetOfUnknownSizeIsNeverLinked) {
    Wanted target = write_package("mirror/base/Packages/p.rpm", content_);
    target.size = kUnknownSize;
    const std::vector<Wanted> targets{target};
    EXPECT_EQ(run(targets, search()).linked, std::vector<bool>{false});
}

TEST_F(Dedupe, OneCandidateServesEveryTargetWithItsDigest) {
    write_package("mirror/base/Packages/p.rpm", content_);
    const std::vector<Wanted> targets{wanted_for(content_, "a/p.rpm"),
                                      wanted_for(content_, "b/p.rpm")};
    const Outcome outcome = run(targets, search());
    EXPECT_EQ(outcome.linked, (std::vector<bool>{true, true}));
    EXPECT_EQ(outcome.linked_bytes, 2 * content_.size());
}

// ext4 and tmpfs have no FICLONE: the target is left to the download, with a note naming it.
TEST_F(Dedupe, ReflinkWhereUnsupportedFallsBackToTheDownload) {
    write_package("mirror/base/Packages/p.rpm", content_);
    const std::vector<Wanted> targets{wanted_for(content_)};
    const Outcome outcome = run(targets, search(DedupeMode::Reflink));
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
    const std::vector<Wanted> targets{wanted_for(content_)};
    // The store a sync opens holds both (its root is "/"), the tree is searched as the sync's
    // --dedupe-dir.
    const Outcome outcome = run_synced(targets, {other});
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
