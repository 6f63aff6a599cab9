// The destination contract (store/mirror_store.hpp): the same assertions against both stores, a
// local directory (LocalStore) and a prefix in a real Ceph RADOS Gateway bucket (S3Store).
// --delete, verify --extra and the no-op's check are written once over this interface; what
// holds here holds for them on either destination.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "integration/s3/ceph_fixture.hpp"
#include "store/local_store.hpp"
#include "store/s3_store.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror::test {
namespace {

enum class Kind { Local, S3 };

class StoreContractTest : public CephS3Test, public ::testing::WithParamInterface<Kind> {
  protected:
    // Puts `body` at `key` of the mirror, as another run (or another program) would have.
    void put(const std::string& key, const std::string& body) {
        if (GetParam() == Kind::Local) {
            TempDir::write_at(tmp_ / "mirror" / key, body);
        } else {
            auto stored = client().put_object(bucket(), prefix() + key, body);
            ASSERT_TRUE(stored) << stored.error().to_string();
        }
    }

    // A store of the mirror, as one run opens it (an S3 store lists the prefix once).
    std::unique_ptr<store::MirrorStore> open() {
        if (GetParam() == Kind::Local) {
            return std::make_unique<store::LocalStore>(tmp_ / "mirror");
        }
        return std::make_unique<store::S3Store>(client(), s3::S3Location{bucket(), prefix()});
    }

    static std::string prefix() { return "mirror/repo/"; }

    // The mirror every test starts from: three packages and what is not a package.
    void put_mirror() {
        put("Packages/a.rpm", "aaa");
        put("Packages/sub/b.rpm", "bbbbb");
        put("top.rpm", "t");
        put("Packages/notes.txt", "not a package");
        put("Packages/a.rpm.part", "a partial download");
        put("repodata/repomd.xml", "<repomd/>");
        put("repodata/inside.rpm", "metadata");
        put(".repodata.staging-1/staged.rpm", "a staging directory");
        put(".rpmirror/kept.rpm", "rpmirror's own");
    }

    static std::set<std::string> keys_of(const store::Listing& listing) {
        std::set<std::string> keys;
        for (const auto& [key, file] : listing) {
            keys.insert(key);
        }
        return keys;
    }

    TempDir tmp_;
};

TEST_P(StoreContractTest, ListsThePackagesAndNothingElse) {
    put_mirror();
    auto store = open();
    const auto listed = store->list_packages();
    ASSERT_TRUE(listed) << listed.error().to_string();
    EXPECT_EQ(keys_of(*listed),
              (std::set<std::string>{"Packages/a.rpm", "Packages/sub/b.rpm", "top.rpm"}));
    EXPECT_EQ(listed->at("Packages/a.rpm").size, 3U);
    EXPECT_EQ(listed->at("Packages/sub/b.rpm").size, 5U);
    EXPECT_FALSE(listed->at("top.rpm").version.empty());
}

TEST_P(StoreContractTest, AnEmptyMirrorHoldsNothing) {
    auto store = open();
    const auto listed = store->list_packages();
    ASSERT_TRUE(listed) << listed.error().to_string();
    EXPECT_TRUE(listed->empty());
    const auto absent = store->stat("repodata/repomd.xml");
    ASSERT_TRUE(absent) << absent.error().to_string();
    EXPECT_FALSE(*absent);
}

TEST_P(StoreContractTest, StatGivesTheSizeAndAVersionThatChangesWithTheContent) {
    put_mirror();
    const auto before = open()->stat("repodata/repomd.xml");
    ASSERT_TRUE(before && *before);
    EXPECT_EQ((*before)->size, 9U);
    const auto absent = open()->stat("Packages/none.rpm");
    ASSERT_TRUE(absent);
    EXPECT_FALSE(*absent);
    put("repodata/repomd.xml", "<other/>!");  // same size, other content
    const auto after = open()->stat("repodata/repomd.xml");
    ASSERT_TRUE(after && *after);
    EXPECT_EQ((*after)->size, 9U);
    EXPECT_NE((*after)->version, (*before)->version);
}

TEST_P(StoreContractTest, FilesUnchangedSeesARewriteAndARemoval) {
    put_mirror();
    const auto recorded = open()->list_packages();
    ASSERT_TRUE(recorded);
    EXPECT_TRUE(store::files_unchanged(*open(), *recorded));
    put("Packages/a.rpm", "AAA");
    EXPECT_FALSE(store::files_unchanged(*open(), *recorded));
    const auto rewritten = open()->list_packages();
    ASSERT_TRUE(rewritten);
    EXPECT_TRUE(store::files_unchanged(*open(), *rewritten));
    auto store = open();
    const std::vector<std::string> gone{"top.rpm"};
    ASSERT_TRUE(store->remove_packages(gone));
    EXPECT_FALSE(store::files_unchanged(*open(), *rewritten));
}

TEST_P(StoreContractTest, DeleteRemovesExactlyTheUnlistedPackages) {
    put_mirror();
    auto store = open();
    const auto unlisted = store::unlisted_packages(*store, {"Packages/a.rpm"});
    ASSERT_TRUE(unlisted) << unlisted.error().to_string();
    EXPECT_EQ(keys_of(*unlisted), (std::set<std::string>{"Packages/sub/b.rpm", "top.rpm"}));
    const auto deleted = store::delete_unlisted(*store, {"Packages/a.rpm"});
    ASSERT_TRUE(deleted) << deleted.error().to_string();
    EXPECT_EQ(*deleted, (std::vector<std::string>{"Packages/sub/b.rpm", "top.rpm"}));
    auto reopened = open();
    const auto left = reopened->list_packages();
    ASSERT_TRUE(left);
    EXPECT_EQ(keys_of(*left), (std::set<std::string>{"Packages/a.rpm"}));
    for (const char* kept :
         {"Packages/notes.txt", "Packages/a.rpm.part", "repodata/repomd.xml", "repodata/inside.rpm",
          ".repodata.staging-1/staged.rpm", ".rpmirror/kept.rpm"}) {
        const auto found = reopened->stat(kept);
        ASSERT_TRUE(found) << kept;
        EXPECT_TRUE(*found) << kept << " was removed";
    }
}

TEST_P(StoreContractTest, OnlyPackagesCanBeRemovedAndAbsentOnesAreLeftAlone) {
    put_mirror();
    auto store = open();
    const std::vector<std::string> metadata{"repodata/repomd.xml"};
    const auto refused = store->remove_packages(metadata);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, ErrorCode::BadInput);
    EXPECT_EQ(refused.error().subject, store->describe("repodata/repomd.xml"));
    const auto still = open()->stat("repodata/repomd.xml");
    ASSERT_TRUE(still && *still);

    const std::vector<std::string> absent{"Packages/gone.rpm"};
    const auto nothing = store->remove_packages(absent);
    ASSERT_TRUE(nothing) << nothing.error().to_string();
    EXPECT_TRUE(nothing->empty());
}

TEST_P(StoreContractTest, DescribeNamesTheFileWhereItLives) {
    auto store = open();
    const std::string named = store->describe("Packages/a.rpm");
    if (GetParam() == Kind::Local) {
        EXPECT_EQ(named, (tmp_ / "mirror" / "Packages/a.rpm").string());
    } else {
        EXPECT_EQ(named, "s3://" + bucket() + "/" + prefix() + "Packages/a.rpm");
    }
}

INSTANTIATE_TEST_SUITE_P(BothStores, StoreContractTest, ::testing::Values(Kind::Local, Kind::S3),
                         [](const ::testing::TestParamInfo<Kind>& info) {
                             return std::string(info.param == Kind::Local ? "local" : "s3");
                         });

}  // namespace
}  // namespace rpmirror::test
