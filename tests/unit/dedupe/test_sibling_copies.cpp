// dedupe::copy_from_siblings over the memory store (and the fault wrapper): what a sibling's
// state records is copied pinned, a sibling without a state is no source, a sibling object that
// changed since its state recorded it is a fallback, and a failing copy leaves the sibling's file
// intact and nothing at the target.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dedupe/siblings.hpp"
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
    const dedupe::SiblingOutcome outcome =
        dedupe::copy_from_siblings(*memory_, "pub/updates", packages, {});
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
    const dedupe::SiblingOutcome outcome =
        dedupe::copy_from_siblings(*memory_, "pub/updates", packages, {});
    EXPECT_TRUE(outcome.copied.empty());
    EXPECT_EQ(outcome.linked, std::vector<bool>{false});
    EXPECT_EQ(outcome.fallbacks, 1U);
    EXPECT_TRUE(outcome.notes.empty()) << outcome.notes.front();
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
    const dedupe::SiblingOutcome outcome =
        dedupe::copy_from_siblings(faults, "pub/updates", packages, {});
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
    const dedupe::SiblingOutcome outcome =
        dedupe::copy_from_siblings(faults, "pub/updates", packages, {});
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
    hold("pub/base", "Packages/p.rpm", content_);
    ASSERT_TRUE(memory_->put("pub/broken/.rpmirror/state.json", "{not json"));
    const std::vector<dedupe::Wanted> packages{wanted("Packages/p.rpm", content_)};
    const dedupe::SiblingOutcome outcome =
        dedupe::copy_from_siblings(*memory_, "pub/updates", packages, {});
    EXPECT_TRUE(outcome.copied.empty());
    ASSERT_EQ(outcome.notes.size(), 1U);
    EXPECT_NE(outcome.notes[0].find("pub/broken/.rpmirror/state.json"), std::string::npos)
        << outcome.notes[0];
    EXPECT_EQ(outcome.linked, std::vector<bool>{false});
    EXPECT_EQ(read("pub/updates/Packages/p.rpm"), std::nullopt);

    // Nothing wanted, or no repository named: nothing is even listed.
    store::FaultInjectingStore faults(*memory_);
    EXPECT_TRUE(dedupe::copy_from_siblings(faults, "pub/updates", {}, {}).notes.empty());
    EXPECT_TRUE(dedupe::copy_from_siblings(faults, "", packages, {}).copied.empty());
    EXPECT_EQ(faults.count(store::StoreOp::Read), 0U);
}

}  // namespace
}  // namespace rpmirror
