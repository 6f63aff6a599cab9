// dedupe::copy_duplicates over the memory store (and the fault wrapper), which answers
// ObjectStore::find_content by the trees' state objects as a bucket does: what a sibling's state
// records is copied pinned, a sibling without a state is no source, a sibling object that changed
// since its state recorded it is a fallback, a failing copy leaves the sibling's file intact and
// nothing at the target; the mirrors beside the repository first, then the extra trees; the
// copy mode follows --dedupe's.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checksum/hasher.hpp"
#include "dedupe/copies.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "s3/mirror_state.hpp"
#include "store/fault_objects.hpp"
#include "store/object_store.hpp"

namespace rpmirror {
namespace {

class SiblingCopies : public ::testing::Test {
  protected:
    // Stores `content` at <repo>/<key> and, iff `recorded`, records it in <repo>'s state object.
    void hold(const std::string& repo, const std::string& key, const std::string& content,
              bool recorded = true) {
        ASSERT_TRUE(memory_->put(store::join_key(repo, key), content));
        if (!recorded) {
            return;
        }
        auto info = memory_->stat(store::join_key(repo, key));
        ASSERT_TRUE(info && info->has_value());
        s3::MirrorState& state = states_[repo];
        state.objects[key] = {(*info)->size, (*info)->version, ChecksumType::Sha256,
                              hash_bytes(ChecksumType::Sha256, content)};
        ASSERT_TRUE(memory_->put(store::join_key(repo, s3::kStateKey), s3::to_json(state)));
    }

    dedupe::Wanted wanted(const std::string& key, const std::string& content) const {
        return {key, ChecksumType::Sha256, hash_bytes(ChecksumType::Sha256, content),
                content.size()};
    }

    // The repository pub/updates, its copies described (as a bucket's record needs them).
    static dedupe::Search search(DedupeMode mode = DedupeMode::Hardlink) {
        dedupe::Search search;
        search.mode = mode;
        search.where.repository = "pub/updates";
        search.where.describe_copies = true;
        return search;
    }

    std::optional<std::string> read(const std::string& key) {
        auto bytes = memory_->read(key);
        return bytes ? std::optional<std::string>(*bytes) : std::nullopt;
    }

    std::unique_ptr<store::ObjectStore> memory_ = store::memory_object_store();
    std::map<std::string, s3::MirrorState> states_;
    const std::string content_ = std::string(1000, 'p') + "package";
};

TEST_F(SiblingCopies, CopiesWhatASiblingRecordsAndLeavesTheRest) {
    hold("pub/base", "Packages/p.rpm", content_);
    hold("pub/unsynced", "Packages/q.rpm", "q package", false);  // no state: not a mirror
    hold("pub/updates", "Packages/own.rpm", "own");
    const std::vector<dedupe::Wanted> packages{wanted("Packages/p.rpm", content_),
                                               wanted("Packages/q.rpm", "q package")};
    const dedupe::Outcome outcome = dedupe::copy_duplicates(*memory_, packages, search());
    EXPECT_TRUE(outcome.notes.empty()) << outcome.notes.front();
    ASSERT_EQ(outcome.copied.size(), 1U);
    EXPECT_EQ(outcome.copied[0].index, 0U);
    EXPECT_EQ(outcome.copied[0].object.size, content_.size());
    EXPECT_EQ(outcome.copied[0].source, memory_->describe("pub/base/Packages/p.rpm"));
    EXPECT_EQ(outcome.linked_bytes, content_.size());
    EXPECT_EQ(outcome.fallbacks, 0U);
    EXPECT_EQ(outcome.linked, (std::vector<bool>{true, false}));
    EXPECT_EQ(outcome.linked_count, 1U);
    EXPECT_EQ(read("pub/updates/Packages/p.rpm"), content_);
    EXPECT_EQ(read("pub/updates/Packages/q.rpm"), std::nullopt);
}

TEST_F(SiblingCopies, ASiblingObjectChangedSinceItsStateIsAFallback) {
    hold("pub/base", "Packages/p.rpm", content_);
    std::string other = content_;
    other.back() = 'X';
    ASSERT_TRUE(memory_->put("pub/base/Packages/p.rpm", other));  // the state not updated
    const std::vector<dedupe::Wanted> packages{wanted("Packages/p.rpm", content_)};
    const dedupe::Outcome outcome = dedupe::copy_duplicates(*memory_, packages, search());
    EXPECT_TRUE(outcome.copied.empty());
    EXPECT_EQ(outcome.linked, std::vector<bool>{false});
    EXPECT_EQ(outcome.fallbacks, 1U);
    ASSERT_EQ(outcome.notes.size(), 1U);
    EXPECT_NE(outcome.notes[0].find("changed since it was recorded"), std::string::npos)
        << outcome.notes[0];
    EXPECT_NE(outcome.notes[0].find("pub/base/Packages/p.rpm"), std::string::npos)
        << outcome.notes[0];
    EXPECT_NE(outcome.notes[0].find("downloading it"), std::string::npos) << outcome.notes[0];
    EXPECT_EQ(read("pub/updates/Packages/p.rpm"), std::nullopt);
}

TEST_F(SiblingCopies, ManyCopiesAreOneBatchDescribedByOneListingNotAStatEach) {
    std::vector<dedupe::Wanted> packages;
    for (int n = 0; n < 20; ++n) {
        const std::string key = "Packages/p" + std::to_string(n) + ".rpm";
        hold("pub/base", key, content_ + std::to_string(n));
        packages.push_back(wanted(key, content_ + std::to_string(n)));
    }
    store::FaultInjectingStore faults(*memory_);
    const dedupe::Outcome outcome = dedupe::copy_duplicates(faults, packages, search());
    EXPECT_TRUE(outcome.notes.empty()) << outcome.notes.front();
    ASSERT_EQ(outcome.copied.size(), packages.size());
    for (const dedupe::Copied& copied : outcome.copied) {
        EXPECT_EQ(copied.object.size, packages[copied.index].size);
        EXPECT_EQ(read(store::join_key("pub/updates", packages[copied.index].key)),
                  content_ + std::to_string(copied.index));
    }
    // In a bucket a stat is a request: one per copy made a sibling copy cost two round trips.
    EXPECT_EQ(faults.count(store::StoreOp::Stat), 0U);
    EXPECT_EQ(faults.count(store::StoreOp::List), 2U) << "the siblings, then what was copied";
    EXPECT_EQ(faults.count(store::StoreOp::Find), 1U) << "one search for every package";
    EXPECT_EQ(faults.count(store::StoreOp::Copy), packages.size());
}

TEST_F(SiblingCopies, AFailingCopyLeavesTheSiblingIntactAndNothingAtTheTarget) {
    hold("pub/base", "Packages/p.rpm", content_);
    hold("pub/base", "Packages/r.rpm", "r package");
    store::FaultInjectingStore faults(*memory_);
    faults.fail_matching(store::StoreOp::Copy, "updates/Packages/p\\.rpm$",
                         Error{ErrorCode::Io, "injected", "bucket", 5});
    const std::vector<dedupe::Wanted> packages{wanted("Packages/p.rpm", content_),
                                               wanted("Packages/r.rpm", "r package")};
    const dedupe::Outcome outcome = dedupe::copy_duplicates(faults, packages, search());
    ASSERT_EQ(outcome.copied.size(), 1U) << "the failure ends no other copy";
    EXPECT_EQ(outcome.copied[0].index, 1U);
    EXPECT_EQ(outcome.linked_bytes, std::string("r package").size());
    EXPECT_EQ(outcome.fallbacks, 0U);
    ASSERT_EQ(outcome.notes.size(), 1U);
    EXPECT_NE(outcome.notes[0].find("--dedupe: "), std::string::npos) << outcome.notes[0];
    EXPECT_NE(outcome.notes[0].find("injected"), std::string::npos) << outcome.notes[0];
    EXPECT_EQ(outcome.linked, (std::vector<bool>{false, true}));
    EXPECT_EQ(outcome.linked_count, 1U);
    EXPECT_EQ(read("pub/base/Packages/p.rpm"), content_);
    EXPECT_EQ(read("pub/updates/Packages/p.rpm"), std::nullopt);
    EXPECT_EQ(read("pub/updates/Packages/r.rpm"), "r package");
}

TEST_F(SiblingCopies, ASearchThatFailsCopiesNothingAndSaysWhy) {
    // Searched in name order: a sibling past the one holding every package is never read.
    hold("pub/base", "Packages/p.rpm", content_);
    ASSERT_TRUE(memory_->put("pub/later/.rpmirror/state.json", "{not json"));
    const std::vector<dedupe::Wanted> found{wanted("Packages/p.rpm", content_)};
    const dedupe::Outcome copied = dedupe::copy_duplicates(*memory_, found, search());
    EXPECT_EQ(copied.linked, std::vector<bool>{true});
    EXPECT_TRUE(copied.notes.empty()) << copied.notes.front();
    ASSERT_TRUE(memory_->remove(std::vector<std::string>{"pub/updates/Packages/p.rpm"}));

    // One read before it: the search fails, nothing is copied.
    ASSERT_TRUE(memory_->put("pub/a/.rpmirror/state.json", "{not json"));
    const std::vector<dedupe::Wanted> packages{wanted("Packages/p.rpm", content_)};
    const dedupe::Outcome outcome = dedupe::copy_duplicates(*memory_, packages, search());
    EXPECT_TRUE(outcome.copied.empty());
    ASSERT_EQ(outcome.notes.size(), 1U);
    EXPECT_NE(outcome.notes[0].find("pub/a/.rpmirror/state.json"), std::string::npos)
        << outcome.notes[0];
    EXPECT_EQ(outcome.linked, std::vector<bool>{false});
    EXPECT_EQ(read("pub/updates/Packages/p.rpm"), std::nullopt);

    // Nothing wanted, or no repository named: nothing is even listed.
    store::FaultInjectingStore faults(*memory_);
    EXPECT_TRUE(dedupe::copy_duplicates(faults, {}, search()).notes.empty());
    dedupe::Search nowhere = search();
    nowhere.where.repository.clear();
    EXPECT_TRUE(dedupe::copy_duplicates(faults, packages, nowhere).copied.empty());
    EXPECT_TRUE(dedupe::copy_duplicates(faults, packages, search(DedupeMode::Off)).copied.empty());
    EXPECT_EQ(faults.count(store::StoreOp::List), 0U);
    EXPECT_EQ(faults.count(store::StoreOp::Find), 0U);
    EXPECT_EQ(faults.count(store::StoreOp::Read), 0U);

    // The store's search failing: nothing copied, one note naming the failure.
    faults.fail_nth(store::StoreOp::Find, 1, Error{ErrorCode::Io, "injected", "bucket", 5});
    const dedupe::Outcome failed = dedupe::copy_duplicates(faults, packages, search());
    EXPECT_EQ(failed.linked, std::vector<bool>{false});
    ASSERT_EQ(failed.notes.size(), 1U);
    EXPECT_NE(failed.notes[0].find("--dedupe: bucket: injected"), std::string::npos)
        << failed.notes[0];
    EXPECT_EQ(faults.count(store::StoreOp::Copy), 0U);
}

// Only the directories beside the repository that Search::mirror accepts are searched, in name
// order, then the extra trees; the first holder of a content is the source; the own repository
// never.
TEST_F(SiblingCopies, MirrorsBesideFirstThenTheTreesAndNeverTheRepositoryItself) {
    hold("pub/zeta", "Packages/p.rpm", content_);
    hold("pub/alpha", "Packages/p.rpm", content_);
    hold("pub/refused", "Packages/q.rpm", "q package");
    hold("old/base", "Packages/q.rpm", "q package");
    hold("old/base", "Packages/r.rpm", "r package");
    hold("pub/updates", "Packages/other/r.rpm", "r package");  // its own: no source
    dedupe::Search given = search();
    std::vector<std::string> asked;
    given.where.mirror = [&asked](const std::string& key) {
        asked.push_back(key);
        return key != "pub/refused";
    };
    given.where.trees = {"old/base"};
    const std::vector<dedupe::Wanted> packages{wanted("Packages/p.rpm", content_),
                                               wanted("Packages/q.rpm", "q package"),
                                               wanted("Packages/r.rpm", "r package")};
    const dedupe::Outcome outcome = dedupe::copy_duplicates(*memory_, packages, given);
    EXPECT_TRUE(outcome.notes.empty()) << outcome.notes.front();
    EXPECT_EQ(asked, (std::vector<std::string>{"pub/alpha", "pub/refused", "pub/zeta"}));
    EXPECT_EQ(outcome.linked, (std::vector<bool>{true, true, true}));
    ASSERT_EQ(outcome.copied.size(), 3U);
    EXPECT_EQ(outcome.copied[0].source, memory_->describe("pub/alpha/Packages/p.rpm"));
    EXPECT_EQ(outcome.copied[1].source, memory_->describe("old/base/Packages/q.rpm"));
    EXPECT_EQ(outcome.copied[2].source, memory_->describe("old/base/Packages/r.rpm"));
    EXPECT_EQ(read("pub/updates/Packages/q.rpm"), "q package");
}

// A package beyond the repository (an upstream layout's blob, "../") is copied to where it lies;
// one that climbs out of the store is left to the download.
TEST_F(SiblingCopies, AKeyBeyondTheRepositoryIsCopiedWhereItLies) {
    hold("pub/base", "Packages/p.rpm", content_);
    hold("pub/base", "Packages/q.rpm", "q package");
    const std::vector<dedupe::Wanted> packages{wanted("../blobs/p.rpm", content_),
                                               wanted("../../../q.rpm", "q package")};
    dedupe::Search given = search();
    given.where.describe_copies = false;
    const dedupe::Outcome outcome = dedupe::copy_duplicates(*memory_, packages, given);
    EXPECT_EQ(outcome.linked, (std::vector<bool>{true, false}));
    EXPECT_EQ(read("pub/blobs/p.rpm"), content_);
}

// --dedupe=reflink asks the store for a file of its own (CopyMode::Clone), hardlink for the same
// file (CopyMode::Link): in memory a clone shares nothing with its source afterwards.
TEST_F(SiblingCopies, TheCopyModeFollowsTheDedupeMode) {
    hold("pub/base", "Packages/p.rpm", content_);
    hold("pub/base", "Packages/q.rpm", "q package");
    const std::vector<dedupe::Wanted> linked{wanted("Packages/p.rpm", content_)};
    ASSERT_EQ(dedupe::copy_duplicates(*memory_, linked, search()).linked_count, 1U);
    auto link = memory_->stat("pub/updates/Packages/p.rpm");
    ASSERT_TRUE(link && link->has_value());
    EXPECT_EQ((*link)->links, 2U) << "a hard link shares the sibling's content";
    const std::vector<dedupe::Wanted> cloned{wanted("Packages/q.rpm", "q package")};
    ASSERT_EQ(dedupe::copy_duplicates(*memory_, cloned, search(DedupeMode::Reflink)).linked_count,
              1U);
    auto clone = memory_->stat("pub/updates/Packages/q.rpm");
    ASSERT_TRUE(clone && clone->has_value());
    EXPECT_EQ((*clone)->links, 1U) << "a reflink is a file of its own";
    EXPECT_EQ(read("pub/updates/Packages/q.rpm"), "q package");
}

}  // namespace
}  // namespace rpmirror
