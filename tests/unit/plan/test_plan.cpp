#include <fcntl.h>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <array>

#include "plan/plan.hpp"
#include "store/local_store.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror {
namespace {

const std::array<std::uint8_t, 32> kDigest{};

PackageIndex index_of(const std::vector<std::string>& hrefs) {
    PackageIndex index;
    for (const std::string& href : hrefs) {
        PackageView package;
        package.name = "pkg";
        package.arch = "x86_64";
        package.version = "1.0";
        package.release = "1";
        package.checksum_type = ChecksumType::Sha256;
        package.digest = kDigest;
        package.package_size = 3;
        package.location_href = href;
        EXPECT_TRUE(index.add(package));
    }
    return index;
}

Selection select_all(const PackageIndex& index) {
    Selection selection;
    for (std::size_t position = 0; position < index.size(); ++position) {
        selection.positions.push_back(position);
    }
    return selection;
}

TEST(Plan, PresentFilesAreVerifiedMissingOnesDownloaded) {
    test::TempDir dir;
    const auto repo = dir / "repo";
    dir.write("repo/Packages/a.rpm", "abc");
    dir.write("repo/Packages/.b.rpm.part", "ab");  // a partial download is not "present"
    std::filesystem::create_symlink(dir / "repo/Packages/a.rpm", repo / "Packages/c.rpm");
    const PackageIndex index =
        index_of({"Packages/a.rpm", "Packages/b.rpm", "Packages/c.rpm", "./Packages/d.rpm"});
    const auto plan = plan_sync(index, select_all(index), repo, {}, "base");
    ASSERT_TRUE(plan) << plan.error().to_string();
    ASSERT_EQ(plan->targets.size(), 4U);
    EXPECT_EQ(plan->roots, std::vector<std::filesystem::path>{repo});
    EXPECT_EQ(plan->to_verify, std::vector<std::size_t>{0});
    EXPECT_EQ(plan->to_download, (std::vector<std::size_t>{1, 2, 3}))
        << "a symlink under a final name is replaced, never trusted";
    EXPECT_EQ(plan->targets[3].relative_path, "Packages/d.rpm");
    EXPECT_EQ(plan->targets[3].destination, "Packages/d.rpm");
}

TEST(Plan, HrefsInTheMirrorsReservedPlacesRefuseTheWholeRepository) {
    test::TempDir dir;
    for (const std::string href :
         {"repodata/repomd.xml", "./repodata/evil.rpm", "Packages/../repodata/x.rpm",
          ".repodata.staging-abc123/primary.xml.gz", "Packages/.a.rpm.part"}) {
        SCOPED_TRACE(href);
        const PackageIndex index = index_of({"Packages/ok.rpm", href});
        const auto plan = plan_sync(index, select_all(index), dir / "repo", {}, "base");
        ASSERT_FALSE(plan);
        EXPECT_EQ(plan.error().code, ErrorCode::Unsafe);
        EXPECT_NE(plan.error().message.find("reserves"), std::string::npos)
            << plan.error().to_string();
        EXPECT_NE(plan.error().message.find("repository 'base'"), std::string::npos);
    }
}

TEST(Plan, HrefsNamingOneFileAreOneTarget) {
    test::TempDir dir;
    const PackageIndex index =
        index_of({"Packages/a.rpm", "./Packages/a.rpm", "Packages/x/../a.rpm", "Packages/b.rpm"});
    const auto plan = plan_sync(index, select_all(index), dir / "repo", {}, "base");
    ASSERT_TRUE(plan) << plan.error().to_string();
    ASSERT_EQ(plan->targets.size(), 2U);
    EXPECT_EQ(plan->duplicate_paths, 2U);
    EXPECT_EQ(plan->to_download, (std::vector<std::size_t>{0, 1}));
}

TEST(Plan, HostileHrefRefusesTheWholeRepository) {
    test::TempDir dir;
    for (const std::string href : {"../../etc/cron.d/evil.rpm", "/etc/passwd", "a\nb.rpm"}) {
        SCOPED_TRACE(href);
        const PackageIndex index = index_of({"Packages/fine.rpm", href});
        const auto plan = plan_sync(index, select_all(index), dir / "repo", {}, "evil-repo");
        ASSERT_FALSE(plan);
        EXPECT_EQ(plan.error().code, ErrorCode::Unsafe);
        EXPECT_EQ(plan.error().subject, "pkg-1.0-1.x86_64");
        EXPECT_NE(plan.error().message.find("repository 'evil-repo'"), std::string::npos);
    }
    EXPECT_FALSE(std::filesystem::exists(dir / "repo"));
}

TEST(Plan, SafeWritePathAdmitsABlobstoreLayoutAndNothingBeyondIt) {
    test::TempDir dir;
    const auto repo = dir / "mirror/al2023/core/x86_64";
    PathPolicy policy;
    policy.safe_write_path = dir / "mirror/blobstore";
    const PackageIndex index = index_of({"../../../blobstore/ab12/pkg.rpm", "Packages/local.rpm"});
    const auto plan = plan_sync(index, select_all(index), repo, policy, "amazonlinux");
    ASSERT_TRUE(plan) << plan.error().to_string();
    ASSERT_EQ(plan->roots.size(), 2U);
    EXPECT_EQ(plan->roots[1], dir / "mirror/blobstore");
    EXPECT_EQ(plan->targets[0].root_index, 1U);
    EXPECT_EQ(plan->targets[0].destination, "ab12/pkg.rpm");
    EXPECT_EQ(plan->targets[1].root_index, 0U);

    const PackageIndex escaping = index_of({"../../../blobstore2/ab12/pkg.rpm"});
    const auto refused = plan_sync(escaping, select_all(escaping), repo, policy, "amazonlinux");
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, ErrorCode::Unsafe);
}

// --flatten-hrefs: an href climbing out is placed inside, marked flattened; two hrefs that land
// on one path while pointing at different files are refused, naming both.
TEST(PlanSync, FlattenPlacesClimbingHrefsInsideAndRefusesCollisions) {
    test::TempDir dir;
    const auto repo = dir / "mirror/amzn";
    PathPolicy policy;
    policy.flatten = true;
    const PackageIndex index =
        index_of({"../../../../../blobstore/ab12/pkg.rpm", "Packages/local.rpm"});
    const auto plan = plan_sync(index, select_all(index), repo, policy, "amzn");
    ASSERT_TRUE(plan) << plan.error().to_string();
    ASSERT_EQ(plan->roots.size(), 1U);
    EXPECT_EQ(plan->targets[0].relative_path, "blobstore/ab12/pkg.rpm");
    EXPECT_EQ(plan->targets[0].root_index, 0U);
    EXPECT_TRUE(plan->targets[0].flattened);
    EXPECT_FALSE(plan->targets[1].flattened);
    EXPECT_EQ(plan->flattened, 1U);

    const PackageIndex colliding =
        index_of({"../blobstore/ab12/pkg.rpm", "blobstore/ab12/pkg.rpm"});
    const auto refused = plan_sync(colliding, select_all(colliding), repo, policy, "amzn");
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, ErrorCode::Unsafe);
    EXPECT_NE(refused.error().message.find("--flatten-hrefs cannot place both"), std::string::npos)
        << refused.error().message;
}

// PathPolicy::file_name_only (dnf's cache: packages/<file name>): every href at its file name,
// none flattened; one href twice is one transfer; two files of one name are refused.
TEST(PlanSync, FileNameOnlyPlacesEveryPackageAtItsFileName) {
    test::TempDir dir;
    const auto repo = dir / "cache/packages";
    PathPolicy policy;
    policy.file_name_only = true;
    const PackageIndex index = index_of({"../../../../../blobstore/ab12/pkg.rpm",
                                         "Packages/l/local.rpm", "./Packages/l/local.rpm"});
    const auto plan = plan_sync(index, select_all(index), repo, policy, "amzn");
    ASSERT_TRUE(plan) << plan.error().to_string();
    ASSERT_EQ(plan->targets.size(), 2U);
    EXPECT_EQ(plan->targets[0].relative_path, "pkg.rpm");
    EXPECT_EQ(plan->targets[1].relative_path, "local.rpm");
    EXPECT_EQ(plan->flattened, 0U);
    EXPECT_EQ(plan->duplicate_paths, 1U);

    const PackageIndex colliding = index_of({"a/pkg.rpm", "b/pkg.rpm"});
    const auto refused = plan_sync(colliding, select_all(colliding), repo, policy, "amzn");
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, ErrorCode::Unsafe);
    EXPECT_NE(refused.error().message.find("one file name cannot hold both"), std::string::npos)
        << refused.error().message;
}

TEST(SyncState, RoundTripsAndDetectsChangedFiles) {
    test::TempDir dir;
    dir.write("repo/Packages/a.rpm", "abc");
    const auto file = stat_for_state(dir / "repo", "Packages/a.rpm");
    ASSERT_TRUE(file);
    EXPECT_EQ(file->size, 3U);
    const SyncState state{std::string(64, 'f'), "arch=x86_64", {*file}};
    const auto path = sync_state_path(dir / "state", dir / "repo");
    EXPECT_EQ(path.parent_path(), dir / "state" / "repos") << "outside the mirror";
    EXPECT_TRUE(path.filename().string().starts_with("repo-")) << path;
    EXPECT_NE(path, sync_state_path(dir / "state", dir / "other" / "repo"));
    ASSERT_TRUE(write_sync_state(path, state));
    EXPECT_FALSE(std::filesystem::exists(dir / "repo" / kLegacyStateFileName));
    const auto read = read_sync_state(path);
    ASSERT_TRUE(read);
    EXPECT_EQ(read->repomd_sha256, state.repomd_sha256);
    EXPECT_EQ(read->options_fingerprint, "arch=x86_64");
    ASSERT_EQ(read->files.size(), 1U);
    EXPECT_EQ(read->files[0].relative_path, "Packages/a.rpm");
    EXPECT_TRUE(store::state_files_unchanged(dir / "repo", *read));

    struct timespec times[2] = {{0, UTIME_OMIT}, {1'000'000, 0}};
    ASSERT_EQ(::utimensat(AT_FDCWD, (dir / "repo/Packages/a.rpm").c_str(), times, 0), 0);
    EXPECT_FALSE(store::state_files_unchanged(dir / "repo", *read)) << "mtime changed";
    const auto restamped = stat_for_state(dir / "repo", "Packages/a.rpm");
    ASSERT_TRUE(restamped);
    const SyncState later{state.repomd_sha256, state.options_fingerprint, {*restamped}};
    EXPECT_TRUE(store::state_files_unchanged(dir / "repo", later));
    // Replaced by a copy with the same size and mtime (cp -p, rsync -t): another inode.
    dir.write("repo/Packages/a.rpm.new", "xyz");
    const struct timespec same_times[2] = {{0, UTIME_OMIT}, {1'000'000, 0}};
    ASSERT_EQ(::utimensat(AT_FDCWD, (dir / "repo/Packages/a.rpm.new").c_str(), same_times, 0), 0);
    std::filesystem::rename(dir / "repo/Packages/a.rpm.new", dir / "repo/Packages/a.rpm");
    EXPECT_FALSE(store::state_files_unchanged(dir / "repo", later))
        << "same size and mtime, new inode";
    std::filesystem::remove(dir / "repo/Packages/a.rpm");
    EXPECT_FALSE(store::state_files_unchanged(dir / "repo", *read)) << "file missing";
}

TEST(SyncState, MetadataFilesRoundTripAndAreAbsentFromOlderStates) {
    test::TempDir dir;
    dir.write("repo/Packages/a.rpm", "abc");
    dir.write("repo/repodata/repomd.xml", "<repomd/>");
    SyncState state{
        std::string(64, 'f'), "options", {*stat_for_state(dir / "repo", "Packages/a.rpm")}};
    state.metadata_files.push_back(*stat_for_state(dir / "repo", "repodata/repomd.xml"));
    const auto path = dir / "state.json";
    ASSERT_TRUE(write_sync_state(path, state));
    const auto read = read_sync_state(path);
    ASSERT_TRUE(read);
    ASSERT_EQ(read->files.size(), 1U);
    ASSERT_EQ(read->metadata_files.size(), 1U);
    EXPECT_EQ(read->metadata_files[0].relative_path, "repodata/repomd.xml");
    EXPECT_EQ(read->metadata_files[0].size, 9U);
    EXPECT_EQ(read->metadata_files[0].inode, state.metadata_files[0].inode);
    // A state written before the metadata was recorded reads as recording none.
    test::TempDir::write_at(path, R"({"version":2,"repomd_sha256":"ab","options":"o","files":[]})");
    const auto older = read_sync_state(path);
    ASSERT_TRUE(older);
    EXPECT_TRUE(older->metadata_files.empty());
}

TEST(SyncState, MissingOrMalformedStateMeansAFullSync) {
    test::TempDir dir;
    EXPECT_FALSE(read_sync_state(dir / "absent.json"));
    for (const std::string text :
         {"", "{", "[]", R"({"version":1})", R"({"version":2,"files":[]})",
          R"({"version":1,"repomd_sha256":"x","options":"","files":[[1]]})"}) {
        SCOPED_TRACE(text);
        EXPECT_FALSE(read_sync_state(dir.write("state.json", text)));
    }
}

}  // namespace
}  // namespace rpmirror
