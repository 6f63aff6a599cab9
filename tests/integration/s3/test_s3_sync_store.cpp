// A bucket's repository opened for a sync (store/sync_store.hpp), against a real Ceph RADOS
// Gateway: what it holds is what its state object records and its listing still shows, --gpgcheck
// hands back what no check vouches for, its siblings are the prefixes beside it, and its lease is
// held by one run at a time. The directory's side: tests/unit/store/test_sync_store.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "checksum/hasher.hpp"
#include "integration/s3/ceph_fixture.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "s3/config.hpp"
#include "s3/mirror_state.hpp"
#include "store/sync_store.hpp"

namespace rpmirror::test {
namespace {

class S3SyncStoreTest : public CephS3Test {
  protected:
    // Stores `body` at `key` of the repository and returns its ETag.
    std::string put(const std::string& key, const std::string& body) {
        auto etag = client().put_object(bucket(), "mirror/repo/" + key, body);
        EXPECT_TRUE(etag) << etag.error().to_string();
        return etag ? *etag : std::string();
    }

    store::SyncStoreOptions options() const {
        const s3::S3Config config = cluster().config();
        store::SyncStoreOptions where;
        where.destination = "s3://" + bucket() + "/mirror";
        where.repository = where.destination + "/repo";
        where.s3.endpoint = config.endpoint;
        where.s3.region = config.region;
        where.s3.credentials = config.credentials;
        where.s3.path_style = config.path_style;
        return where;
    }

    static store::WantedFile wanted(std::string key, std::string_view content) {
        store::WantedFile file;
        file.key = std::move(key);
        file.digest = hash_bytes(ChecksumType::Sha256, content);
        file.size = content.size();
        return file;
    }
};

TEST_F(S3SyncStoreTest, HoldsWhatItsStateRecordsAndItsListingStillShows) {
    s3::MirrorState state;
    const std::string good = put("Packages/good.rpm", "good");
    state.objects["Packages/good.rpm"] = {4, good, ChecksumType::Sha256,
                                          hash_bytes(ChecksumType::Sha256, "good")};
    // Recorded, then rewritten by another program: its ETag is no longer the one recorded.
    put("Packages/changed.rpm", "before");
    state.objects["Packages/changed.rpm"] = {6, "0123456789abcdef0123456789abcdef",
                                             ChecksumType::Sha256,
                                             hash_bytes(ChecksumType::Sha256, "before")};
    state.signatures_checked = "KEYS";
    ASSERT_TRUE(s3::store_state(client(), s3::S3Location{bucket(), "mirror/repo/"}, state));

    auto opened = store::SyncStore::open(options());
    ASSERT_TRUE(opened) << opened.error().to_string();
    store::SyncStore& mirror = **opened;
    const auto loaded = mirror.load();
    ASSERT_TRUE(loaded) << loaded.error().to_string();
    std::vector<store::WantedFile> files{wanted("Packages/good.rpm", "good"),
                                         wanted("Packages/changed.rpm", "before"),
                                         wanted("Packages/absent.rpm", "absent")};
    store::Survey survey = mirror.survey(files, {});
    EXPECT_EQ(survey.absent, (std::vector<std::size_t>{1, 2}));
    const std::vector<store::Judgement> judged = survey.judged.get();
    ASSERT_EQ(judged.size(), 1U);
    EXPECT_EQ(judged[0].item, 0U);
    EXPECT_EQ(judged[0].holding, store::Holding::Held);

    // --gpgcheck with the keys the state was checked against: nothing to judge again.
    store::SurveyOptions same_keys;
    same_keys.judged_with = "KEYS";
    EXPECT_EQ(mirror.survey(files, same_keys).absent, (std::vector<std::size_t>{1, 2}));
    // With other keys: what it holds passes through the spool to be judged, never stored again.
    store::SurveyOptions other_keys;
    other_keys.judged_with = "OTHER";
    store::Survey rejudged = mirror.survey(files, other_keys);
    EXPECT_EQ(rejudged.absent, (std::vector<std::size_t>{0, 1, 2}));
    EXPECT_TRUE(rejudged.judged.get().empty());
    EXPECT_TRUE(files[0].stored);
    EXPECT_FALSE(files[1].stored);
    EXPECT_FALSE(files[2].stored);
    EXPECT_GT(mirror.requests(), 0U);
}

TEST_F(S3SyncStoreTest, StagesInASpoolFindsItsSiblingsAndIsLeasedByOneRunAtATime) {
    auto opened = store::SyncStore::open(options());
    ASSERT_TRUE(opened) << opened.error().to_string();
    store::SyncStore& mirror = **opened;
    auto staging = mirror.stage({});
    ASSERT_TRUE(staging) << staging.error().to_string();
    EXPECT_FALSE((*staging)->in_place());
    const auto siblings = mirror.siblings();
    ASSERT_TRUE(siblings);
    EXPECT_EQ(siblings->repository, "mirror/repo");
    EXPECT_NE(siblings->shared, nullptr);
    auto lease = mirror.lock(std::nullopt, {});
    ASSERT_TRUE(lease) << lease.error().to_string();
    auto other = store::SyncStore::open(options());
    ASSERT_TRUE(other);
    const auto busy = (*other)->lock(std::nullopt, {});
    ASSERT_FALSE(busy);
    EXPECT_EQ(busy.error().code, ErrorCode::Busy) << busy.error().to_string();
}

}  // namespace
}  // namespace rpmirror::test
