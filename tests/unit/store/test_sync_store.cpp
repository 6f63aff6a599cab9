// A repository's mirror opened for a sync (store/sync_store.hpp): a directory's survey of what it
// holds, its staging area in place, and what a bucket refuses before it sends a request. The
// bucket's survey is asserted against a real Ceph bucket (tests/integration/s3/
// test_store_contract.cpp) and end to end by the S3 sync tests.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "checksum/hasher.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "store/sync_store.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror {
namespace {

namespace stdfs = std::filesystem;

store::WantedFile wanted(std::string key, std::string_view content, bool found) {
    store::WantedFile file;
    file.key = std::move(key);
    file.checksum_type = ChecksumType::Sha256;
    file.digest = hash_bytes(ChecksumType::Sha256, content);
    file.size = content.size();
    file.found = found;
    return file;
}

store::SyncStoreOptions directory_options(const test::TempDir& dir) {
    store::SyncStoreOptions options;
    options.destination = (dir / "mirror").string();
    options.repository = dir / "mirror" / "repo";
    options.metadata_dir = options.repository;
    options.state_dir = dir / "state";
    return options;
}

TEST(SyncStore, ADirectorySurveyHashesWhatThePlanFoundAndJudgesEachFile) {
    test::TempDir dir;
    for (const auto& [name, content] :
         {std::pair{"repo/Packages/good.rpm", "good"},
          std::pair{"repo/Packages/damaged.rpm", "dam4ged"},
          std::pair{"blobs/shared.rpm", "someone else's"}, std::pair{"blobs/same.rpm", "same"}}) {
        dir.write(std::string("mirror/") + name, content);
    }
    auto opened = store::SyncStore::open(directory_options(dir));
    ASSERT_TRUE(opened) << opened.error().to_string();
    store::SyncStore& mirror = **opened;
    ASSERT_TRUE(mirror.load());

    std::vector<store::WantedFile> files;
    files.push_back(wanted("Packages/good.rpm", "good", true));
    files.push_back(wanted("Packages/absent.rpm", "absent", false));
    files.push_back(wanted("Packages/damaged.rpm", "damaged", true));
    files.push_back(wanted("../blobs/shared.rpm", "ours", true));
    files[3].beyond = true;
    files[3].shown = (dir / "mirror/blobs/shared.rpm").string();
    files.push_back(wanted("../blobs/same.rpm", "same", true));
    files[4].beyond = true;
    store::SurveyOptions options;
    options.threads = 2;
    options.judged_with = "ABCDEF";  // a directory checks once the files are in place
    store::Survey survey = mirror.survey(files, options);

    EXPECT_EQ(survey.absent, std::vector<std::size_t>{1});
    std::vector<store::Judgement> judged = survey.judged.get();
    std::sort(judged.begin(), judged.end(),
              [](const auto& left, const auto& right) { return left.item < right.item; });
    ASSERT_EQ(judged.size(), 4U);
    EXPECT_EQ(judged[0].item, 0U);
    EXPECT_EQ(judged[0].holding, store::Holding::Held);
    EXPECT_EQ(judged[1].item, 2U);
    EXPECT_EQ(judged[1].holding, store::Holding::Replace);  // in the repository: fetched again
    EXPECT_EQ(judged[2].item, 3U);
    EXPECT_EQ(judged[2].holding, store::Holding::Conflict);  // beyond it: never replaced
    EXPECT_EQ(judged[2].where, files[3].shown);
    EXPECT_EQ(judged[2].held, "14 bytes");
    EXPECT_EQ(judged[3].item, 4U);
    EXPECT_EQ(judged[3].holding, store::Holding::Held);
    for (const store::WantedFile& file : files) {
        EXPECT_FALSE(file.stored) << file.key;
    }
    EXPECT_EQ(mirror.requests(), 0U);
}

TEST(SyncStore, ADirectoryStagesInPlaceBeneathItsLayoutRootAndLinksItsOwnDuplicates) {
    test::TempDir dir;
    store::SyncStoreOptions options = directory_options(dir);
    options.layout_root = options.repository;
    options.repository = options.layout_root / "core" / "x86_64";
    options.metadata_dir = options.repository;  // the metadata goes with the repository
    auto opened = store::SyncStore::open(options);
    ASSERT_TRUE(opened) << opened.error().to_string();
    auto staging = (*opened)->stage({});
    ASSERT_TRUE(staging) << staging.error().to_string();
    EXPECT_TRUE((*staging)->in_place());
    EXPECT_EQ((*staging)->directory(), options.layout_root);
    // --dedupe links a directory's duplicates by their files (hashed, no record describes the
    // copies) from the mirrors beside the repository, inside a store holding the layout root.
    const std::optional<store::Siblings> siblings = (*opened)->siblings();
    ASSERT_TRUE(siblings);
    ASSERT_NE(siblings->shared, nullptr);
    EXPECT_EQ(siblings->repository, "core/x86_64");
    EXPECT_EQ(siblings->shared->describe(siblings->repository),
              std::filesystem::weakly_canonical(options.repository).string());
    EXPECT_TRUE(siblings->mirror) << "a directory beside is searched only if it is a mirror";
    EXPECT_FALSE(siblings->describe_copies);
    EXPECT_TRUE(siblings->partials);
    EXPECT_EQ((*opened)->mirror().describe("repodata/repomd.xml"),
              (options.repository / "repodata/repomd.xml").string());
}

TEST(SyncStore, ABucketRefusesWhatOnlyADirectoryCanDoBeforeAnyRequest) {
    store::SyncStoreOptions options;
    options.destination = "s3://bucket/mirror";
    options.repository = "s3://bucket/mirror/repo";
    const auto refusal = [&](const store::SyncStoreOptions& given) {
        auto opened = store::SyncStore::open(given);
        EXPECT_FALSE(opened);
        return opened ? Error{} : opened.error();
    };
    store::SyncStoreOptions remote_time = options;
    remote_time.remote_time = true;
    Error error = refusal(remote_time);
    EXPECT_EQ(error.code, ErrorCode::Unsupported);
    EXPECT_NE(error.to_string().find("--remote-time is not possible with an s3:// destination"),
              std::string::npos)
        << error.to_string();
    store::SyncStoreOptions dedupe_dirs = options;
    dedupe_dirs.dedupe_dirs = {"/srv/old-mirror"};
    EXPECT_EQ(refusal(dedupe_dirs).code, ErrorCode::Unsupported);
    // A local --metadata-path makes the sync a bucket's too, and is refused naming both.
    store::SyncStoreOptions metadata;
    metadata.destination = "/srv/mirror";
    metadata.repository = "/srv/mirror/repo";
    metadata.metadata_destination = "s3://bucket/mirror";
    error = refusal(metadata);
    EXPECT_EQ(error.code, ErrorCode::BadInput);
    EXPECT_NE(error.to_string().find("--metadata-path 's3://bucket/mirror' and -p '/srv/mirror'"),
              std::string::npos)
        << error.to_string();
    store::SyncStoreOptions small_parts = options;
    small_parts.part_size = 1 << 20;
    error = refusal(small_parts);
    EXPECT_EQ(error.code, ErrorCode::BadInput);
    EXPECT_NE(error.to_string().find("--s3-part-size 1048576 is below the 5 MiB S3 requires"),
              std::string::npos)
        << error.to_string();
}

}  // namespace
}  // namespace rpmirror
