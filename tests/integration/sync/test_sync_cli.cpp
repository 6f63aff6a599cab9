// `rpmirror sync` end to end: the real binary against nginx serving real repositories built from
// the specs in the tree; assertions on the files, exit codes, output and nginx's access log.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "integration/sync/sync_fixture.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

// The "/Packages/<name>" URIs of `names`, sorted.
std::vector<std::string> uris_of(const std::set<std::string>& names) {
    std::vector<std::string> uris;
    for (const std::string& name : names) {
        uris.push_back("/Packages/" + name);
    }
    return uris;
}

using SyncCli = SyncFixture;

TEST_F(SyncCli, FullSyncMirrorsEveryPackageWithItsChecksumInDnfsLayout) {
    const fs::path upstream = test_repo("sample-repo");
    NginxServer& server = serve(upstream);
    const fs::path mirror = tmp_ / "mirror";

    const CommandResult result = sync(
        {"--repofrompath", "sample," + server.url("/"), "--repo", "sample", "-p", mirror.string()});

    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    // <download-path>/<repoid>/<href>, byte-identical to upstream (so the metadata's sha256).
    EXPECT_EQ(tree_digests(mirror / "sample", kStateFile), package_digests(upstream));
    EXPECT_FALSE(fs::exists(mirror / "sample" / "repodata")) << "no --download-metadata";
    // On a pipe: no progress bar, only the summary line.
    ASSERT_EQ(lines_of(result.out).size(), 1U) << result.out;
    EXPECT_TRUE(result.out.starts_with("sample: downloaded 5 files")) << result.out;
    // Each package was fetched exactly once.
    EXPECT_EQ(package_uris(uris_since(server, 0)), uris_of(package_names(upstream)));
}

TEST_F(SyncCli, LocalRepositoryFromRepofrompathFileUrlIsMirrored) {
    // A file:// baseurl written by the user is legitimate: packages and metadata are copied
    // and verified like downloads.
    const fs::path upstream = test_repo("sample-repo");
    const fs::path mirror = tmp_ / "mirror";

    const CommandResult result =
        sync({"--repofrompath", "local,file://" + upstream.string(), "--repo", "local", "-p",
              mirror.string(), "--download-metadata"});

    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_TRUE(result.out.starts_with("local: downloaded 5 files")) << result.out;
    EXPECT_EQ(tree_digests(mirror / "local", kStateFile), tree_digests(upstream));
}

TEST_F(SyncCli, ResyncOfAnUnchangedMirrorOnlyFetchesRepomd) {
    const fs::path upstream = test_repo("sample-repo");
    NginxServer& server = serve(upstream);
    const fs::path mirror = tmp_ / "mirror";
    const std::vector<std::string> args{
        "--repofrompath", "sample," + server.url("/"), "--repo", "sample", "-p",
        mirror.string(),  "--download-metadata"};
    ASSERT_EQ(sync(args).exit_code, 0);
    const auto first_tree = tree_digests(mirror, kStateFile);
    const std::size_t before = log_size(server);

    const CommandResult again = sync(args);

    EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
    EXPECT_EQ(uris_since(server, before), std::vector<std::string>{"/repodata/repomd.xml"});
    EXPECT_NE(again.out.find("sample: up to date"), std::string::npos) << again.out;
    EXPECT_EQ(tree_digests(mirror, kStateFile), first_tree);
}

TEST_F(SyncCli, ResyncRepairsAMetadataRecordRemovedFromTheMirror) {
    const fs::path upstream = test_repo("sample-repo");
    NginxServer& server = serve(upstream);
    const fs::path mirror = tmp_ / "mirror";
    const std::vector<std::string> args{
        "--repofrompath", "sample," + server.url("/"), "--repo", "sample", "-p",
        mirror.string(),  "--download-metadata"};
    ASSERT_EQ(sync(args).exit_code, 0);
    std::size_t removed = 0;
    for (const auto& entry : fs::directory_iterator(mirror / "sample" / "repodata")) {
        if (entry.path().filename().string().ends_with("-primary.xml.gz")) {
            removed += fs::remove(entry.path()) ? 1 : 0;
        }
    }
    ASSERT_EQ(removed, 1U);
    const std::size_t before = log_size(server);

    const CommandResult again = sync(args);

    EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
    EXPECT_EQ(tree_digests(mirror / "sample", kStateFile), tree_digests(upstream));
    EXPECT_TRUE(package_uris(uris_since(server, before)).empty()) << "packages are kept";
}

TEST_F(SyncCli, ResyncRepairsMetadataRewrittenInPlaceWithItsSizeAndTimeKept) {
    const fs::path upstream = test_repo("sample-repo");
    NginxServer& server = serve(upstream);
    const fs::path mirror = tmp_ / "mirror";
    const fs::path metadata = tmp_ / "metadata";
    const std::vector<std::string> args{"--repofrompath",
                                        "sample," + server.url("/"),
                                        "--repo",
                                        "sample",
                                        "-p",
                                        mirror.string(),
                                        "--metadata-path",
                                        metadata.string(),
                                        "--download-metadata"};
    ASSERT_EQ(sync(args).exit_code, 0);
    // Every file the sync published, damaged as an admin's tool or a bad disk would, leaving
    // its size and modification time as they were.
    const fs::path live = metadata / "sample" / "repodata";
    auto upstream_metadata = tree_digests(upstream);
    std::erase_if(upstream_metadata,
                  [](const auto& entry) { return !entry.first.starts_with("repodata/"); });
    std::size_t damaged = 0;
    for (const auto& entry : fs::directory_iterator(live)) {
        const auto when = fs::last_write_time(entry.path());
        std::string body = read_file(entry.path());
        ASSERT_FALSE(body.empty());
        body[body.size() / 2] = static_cast<char>(body[body.size() / 2] ^ 0x20);
        TempDir::write_at(entry.path(), body);
        fs::last_write_time(entry.path(), when);
        ++damaged;
        const std::size_t before = log_size(server);

        const CommandResult again = sync(args);

        EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
        EXPECT_EQ(again.out.find("up to date"), std::string::npos)
            << entry.path().filename() << " changed: no no-op\n"
            << again.out;
        EXPECT_EQ(tree_digests(live.parent_path()), upstream_metadata) << entry.path().filename();
        EXPECT_TRUE(package_uris(uris_since(server, before)).empty()) << "packages are kept";
    }
    EXPECT_GE(damaged, 4U);  // repomd.xml and its records
    EXPECT_NE(sync(args).out.find("sample: up to date"), std::string::npos);
}

TEST_F(SyncCli, LocallyCorruptedPackageIsTheOnlyOneDownloadedAgain) {
    const fs::path upstream = test_repo("sample-repo");
    NginxServer& server = serve(upstream);
    const fs::path mirror = tmp_ / "mirror";
    const std::vector<std::string> args{
        "--repofrompath", "sample," + server.url("/"), "--repo", "sample", "-p", mirror.string()};
    ASSERT_EQ(sync(args).exit_code, 0);
    const fs::path victim = mirror / "sample/Packages/rpmirror-sample-medium-1.0-1.noarch.rpm";
    std::string bytes = read_file(victim);
    bytes[bytes.size() / 2] ^= 0x55;  // same size, one byte flipped
    TempDir::write_at(victim, bytes);
    const std::size_t before = log_size(server);

    const CommandResult again = sync(args);

    EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
    EXPECT_EQ(package_uris(uris_since(server, before)),
              std::vector<std::string>{"/Packages/rpmirror-sample-medium-1.0-1.noarch.rpm"});
    EXPECT_EQ(tree_digests(mirror / "sample", kStateFile), package_digests(upstream));
    EXPECT_NE(again.out.find("replaced 1"), std::string::npos) << again.out;
}

TEST_F(SyncCli, NewUpstreamRevisionWithTheSamePackagesFetchesOnlyMetadata) {
    const fs::path upstream = copy_repo(test_repo("sample-repo"), tmp_ / "upstream");
    NginxServer& server = serve(upstream);
    const fs::path mirror = tmp_ / "mirror";
    const std::vector<std::string> args{
        "--repofrompath", "sample," + server.url("/"), "--repo", "sample", "-p",
        mirror.string(),  "--download-metadata"};
    ASSERT_EQ(sync(args).exit_code, 0);
    recreate_repo(upstream, "1704153600", tmp_ / "logs");
    const std::size_t before = log_size(server);

    const CommandResult again = sync(args);

    EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
    EXPECT_TRUE(package_uris(uris_since(server, before)).empty());
    EXPECT_NE(again.out.find("kept 5"), std::string::npos) << again.out;
    EXPECT_EQ(tree_digests(mirror / "sample", kStateFile), tree_digests(upstream));
}

TEST_F(SyncCli, PackageDeletedUpstreamIsRemovedWithDeleteAndNothingElseIs) {
    const fs::path upstream = copy_repo(test_repo("sample-repo"), tmp_ / "upstream");
    NginxServer& server = serve(upstream);
    const fs::path mirror = tmp_ / "mirror";
    const fs::path repo = mirror / "sample";
    std::vector<std::string> args{
        "--repofrompath", "sample," + server.url("/"), "--repo", "sample", "-p",
        mirror.string(),  "--download-metadata"};
    ASSERT_EQ(sync(args).exit_code, 0);

    const std::string gone = "rpmirror-sample-tiny-1.0-1.noarch.rpm";
    fs::remove(upstream / "Packages" / gone);
    recreate_repo(upstream, "1704153600", tmp_ / "logs");
    // Things --delete must never touch: a non-rpm file, a symlink named *.rpm pointing outside,
    // a directory symlink leading outside with an *.rpm in it, and an *.rpm under repodata/.
    const fs::path outside = tmp_ / "outside";
    TempDir::write_at(outside / "victim.rpm", "precious");
    TempDir::write_at(outside / "dir" / "stale.rpm", "precious too");
    TempDir::write_at(repo / "Packages" / "README.txt", "notes");
    fs::create_symlink(outside / "victim.rpm", repo / "Packages" / "link.rpm");
    fs::create_directory_symlink(outside / "dir", repo / "linked-dir");

    // Without --delete nothing goes.
    ASSERT_EQ(sync(args).exit_code, 0);
    EXPECT_TRUE(fs::exists(repo / "Packages" / gone));

    args.push_back("--delete");
    const CommandResult result = sync(args);

    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_FALSE(fs::exists(repo / "Packages" / gone));
    EXPECT_NE((result.out + result.err).find("Packages/" + gone), std::string::npos)
        << "each removal is logged:\n"
        << result.out << result.err;
    for (const std::string& name : package_names(upstream)) {
        EXPECT_EQ(read_file(repo / "Packages" / name), read_file(upstream / "Packages" / name));
    }
    EXPECT_EQ(read_file(repo / "Packages" / "README.txt"), "notes");
    EXPECT_TRUE(fs::is_symlink(repo / "Packages" / "link.rpm"));
    EXPECT_EQ(read_file(outside / "victim.rpm"), "precious");
    EXPECT_EQ(read_file(outside / "dir" / "stale.rpm"), "precious too");
    EXPECT_EQ(read_file(repo / "repodata" / "repomd.xml"),
              read_file(upstream / "repodata" / "repomd.xml"));
}

TEST_F(SyncCli, DeleteOnANoopResyncStillRemovesPackagesNoLongerSelected) {
    const fs::path upstream = test_repo("sample-repo");
    NginxServer& server = serve(upstream);
    const fs::path mirror = tmp_ / "mirror";
    std::vector<std::string> args{
        "--repofrompath", "sample," + server.url("/"), "--repo", "sample", "-p", mirror.string()};
    ASSERT_EQ(sync(args).exit_code, 0);
    const fs::path stray = TempDir::write_at(mirror / "sample/Packages/stray-1-1.noarch.rpm", "x");
    args.push_back("--delete");

    const CommandResult result = sync(args);

    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_FALSE(fs::exists(stray));
    EXPECT_EQ(tree_digests(mirror / "sample", kStateFile), package_digests(upstream));
}

TEST_F(SyncCli, DeleteRemovesWhatTheFiltersNoLongerSelect) {
    NginxServer& server = serve(test_repo("index-repo"));
    const fs::path mirror = tmp_ / "mirror";
    ASSERT_EQ(sync({"--repofrompath", "idx," + server.url("/"), "--repo", "idx", "-p",
                    mirror.string(), "--download-metadata"})
                  .exit_code,
              0);
    ASSERT_EQ(package_names(mirror / "idx").size(), 13U);
    const std::vector<std::string> base{
        "--repofrompath", "idx," + server.url("/"), "--repo", "idx", "-p",
        mirror.string(),  "--download-metadata"};
    const auto with = [&base](std::vector<std::string> extra) {
        extra.insert(extra.begin(), base.begin(), base.end());
        return extra;
    };
    const std::string primary = read_file(mirror / "idx/repodata/repomd.xml");

    // Mistakes are refused before anything changes, exit 2: an architecture neither rpm nor the
    // repository knows (with or without --delete), and a --delete that would empty the mirror.
    for (const auto& typo : {with({"-a", "x86-64", "--delete"}), with({"-a", "x86-64"})}) {
        const CommandResult refused = sync(typo);
        EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
        EXPECT_NE(
            refused.err.find(
                "--arch x86-64: no such architecture: rpm does not know it and "
                "no package of the repository has it (it has: aarch64, i686, noarch, src, x86_64)"),
            std::string::npos)
            << refused.err;
    }
    const CommandResult emptied = sync(with({"-a", "s390x", "--delete"}));
    EXPECT_EQ(emptied.exit_code, 2) << emptied.out << emptied.err;
    EXPECT_NE(emptied.err.find("--delete refused: the mirror holds 13 packages and this run "
                               "selects 0 of the repository's 13, so it would delete every one"),
              std::string::npos)
        << emptied.err;
    EXPECT_EQ(package_names(mirror / "idx").size(), 13U);
    EXPECT_EQ(read_file(mirror / "idx/repodata/repomd.xml"), primary);

    const CommandResult result = sync({"--repofrompath", "idx," + server.url("/"), "--repo", "idx",
                                       "-p", mirror.string(), "--delete", "--source"});

    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_EQ(package_names(mirror / "idx"),
              (std::set<std::string>{"rpmirror-idx-multi-1.10-1.src.rpm",
                                     "rpmirror-idx-noarch-1.0-1.src.rpm"}));
    EXPECT_NE(result.out.find("idx: deleted Packages/rpmirror-idx-noarch-1.0^git1-1.noarch.rpm"),
              std::string::npos)
        << result.out;

    // Told so, it empties the mirror.
    const CommandResult forced = sync(with({"-a", "s390x", "--delete", "--force-delete"}));
    EXPECT_EQ(forced.exit_code, 0) << forced.out << forced.err;
    EXPECT_TRUE(package_names(mirror / "idx").empty());
}

TEST_F(SyncCli, SignatureOfRepomdIsMirroredAndFetchedWithRepomd) {
    const fs::path upstream = copy_repo(test_repo("sample-repo"), tmp_ / "upstream");
    const std::string signature = "-----BEGIN PGP SIGNATURE-----\nnot checked\n";
    TempDir::write_at(upstream / "repodata" / "repomd.xml.asc", signature);
    NginxServer& server = serve(upstream);
    const fs::path mirror = tmp_ / "mirror";

    const CommandResult result = sync({"--repofrompath", "sample," + server.url("/"), "--repo",
                                       "sample", "-p", mirror.string(), "--download-metadata"});

    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_EQ(read_file(mirror / "sample" / "repodata" / "repomd.xml.asc"), signature);
    // Same revision as repomd.xml: asked for right after it, before any package.
    const auto uris = uris_since(server, 0);
    ASSERT_GE(uris.size(), 2U);
    EXPECT_EQ(uris[0], "/repodata/repomd.xml");
    EXPECT_EQ(uris[1], "/repodata/repomd.xml.asc");
}

TEST_F(SyncCli, StagingDirectoriesLeftByAKilledRunAreRemoved) {
    const fs::path upstream = test_repo("sample-repo");
    NginxServer& server = serve(upstream);
    const fs::path mirror = tmp_ / "mirror";
    const fs::path stale =
        TempDir::write_at(mirror / "sample" / ".repodata.staging-AbC123" / "primary.xml.gz", "x");

    const CommandResult result = sync({"--repofrompath", "sample," + server.url("/"), "--repo",
                                       "sample", "-p", mirror.string(), "--download-metadata"});

    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_FALSE(fs::exists(stale.parent_path()));
    EXPECT_EQ(tree_digests(mirror / "sample", kStateFile), tree_digests(upstream));
}

TEST_F(SyncCli, NewestOnlyKeepsTheNewestOfEachNameAndArch) {
    NginxServer& server = serve(test_repo("index-repo"));
    const fs::path mirror = tmp_ / "mirror";

    const CommandResult result =
        sync({"--repofrompath", "idx," + server.url("/"), "--repo", "idx", "-p", mirror.string(),
              "--newest-only", "--download-metadata", "--upstream-metadata"});

    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    // With --upstream-metadata the published metadata is upstream's, listing 13 packages: the
    // user is told.
    EXPECT_NE(result.err.find("idx: warning: the published metadata is upstream's: it lists 6"),
              std::string::npos)
        << result.err;
    EXPECT_EQ(package_names(mirror / "idx"),
              (std::set<std::string>{
                  "rpmirror-idx-epoch-1.0-1.x86_64.rpm",  // 1:1.0 beats 5.0
                  "rpmirror-idx-multi-1.0-1.i686.rpm", "rpmirror-idx-multi-1.10-1.src.rpm",
                  "rpmirror-idx-multi-1.10-1.x86_64.rpm",  // 1.10 beats 1.9
                  "rpmirror-idx-multi-1.9-1.aarch64.rpm", "rpmirror-idx-noarch-1.0-1.src.rpm",
                  "rpmirror-idx-noarch-1.0^git1-1.noarch.rpm",  // ^ sorts after, ~ before
              }));
}

TEST_F(SyncCli, ArchTakesRepeatedOptionsAndCommaListsWithoutImplyingNoarch) {
    NginxServer& server = serve(test_repo("index-repo"));
    const fs::path mirror = tmp_ / "mirror";

    const CommandResult result =
        sync({"--repofrompath", "idx," + server.url("/"), "--repo", "idx", "-p", mirror.string(),
              "--arch", "aarch64,i686", "-a", "noarch"});

    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_EQ(package_names(mirror / "idx"), (std::set<std::string>{
                                                 "rpmirror-idx-multi-1.0-1.aarch64.rpm",
                                                 "rpmirror-idx-multi-1.0-1.i686.rpm",
                                                 "rpmirror-idx-multi-1.9-1.aarch64.rpm",
                                                 "rpmirror-idx-noarch-1.0-1.noarch.rpm",
                                                 "rpmirror-idx-noarch-1.0^git1-1.noarch.rpm",
                                                 "rpmirror-idx-noarch-1.0~rc1-1.noarch.rpm",
                                             }));

    const fs::path x86_only = tmp_ / "x86";
    ASSERT_EQ(sync({"--repofrompath", "idx," + server.url("/"), "--repo", "idx", "-p",
                    x86_only.string(), "--arch", "x86_64"})
                  .exit_code,
              0);
    EXPECT_EQ(package_names(x86_only / "idx"), (std::set<std::string>{
                                                   "rpmirror-idx-epoch-1.0-1.x86_64.rpm",
                                                   "rpmirror-idx-epoch-5.0-1.x86_64.rpm",
                                                   "rpmirror-idx-multi-1.0-1.x86_64.rpm",
                                                   "rpmirror-idx-multi-1.10-1.x86_64.rpm",
                                                   "rpmirror-idx-multi-1.9-1.x86_64.rpm",
                                               }));
}

TEST_F(SyncCli, SourceSelectsOnlySourcePackagesAndOverridesArch) {
    NginxServer& server = serve(test_repo("index-repo"));
    const fs::path mirror = tmp_ / "mirror";

    const CommandResult result = sync({"--repofrompath", "idx," + server.url("/"), "--repo", "idx",
                                       "-p", mirror.string(), "--source", "--arch", "x86_64"});

    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_EQ(package_names(mirror / "idx"),
              (std::set<std::string>{"rpmirror-idx-multi-1.10-1.src.rpm",
                                     "rpmirror-idx-noarch-1.0-1.src.rpm"}));
}

TEST_F(SyncCli, MinBuildtimeKeepsPackagesBuiltOnOrAfterTheDate) {
    NginxServer& server = serve(test_repo("index-repo"));
    const fs::path mirror = tmp_ / "mirror";

    const CommandResult result = sync({"--repofrompath", "idx," + server.url("/"), "--repo", "idx",
                                       "-p", mirror.string(), "--min-buildtime", "2024-02-01"});

    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_EQ(package_names(mirror / "idx"), (std::set<std::string>{
                                                 "rpmirror-idx-epoch-1.0-1.x86_64.rpm",
                                                 "rpmirror-idx-multi-1.10-1.src.rpm",
                                                 "rpmirror-idx-multi-1.10-1.x86_64.rpm",
                                                 "rpmirror-idx-multi-1.9-1.aarch64.rpm",
                                                 "rpmirror-idx-multi-1.9-1.x86_64.rpm",
                                                 "rpmirror-idx-noarch-1.0-1.noarch.rpm",
                                                 "rpmirror-idx-noarch-1.0-1.src.rpm",
                                                 "rpmirror-idx-noarch-1.0^git1-1.noarch.rpm",
                                             }));
}

TEST_F(SyncCli, NorepopathPutsTheRepositoryDirectlyUnderTheDownloadPath) {
    const fs::path upstream = test_repo("sample-repo");
    NginxServer& server = serve(upstream);
    const fs::path mirror = tmp_ / "mirror";

    const CommandResult result =
        sync({"--repofrompath", "sample," + server.url("/"), "--repo", "sample", "-p",
              mirror.string(), "--norepopath", "--download-metadata"});

    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_EQ(package_digests(mirror), package_digests(upstream));
    EXPECT_EQ(read_file(mirror / "repodata" / "repomd.xml"),
              read_file(upstream / "repodata" / "repomd.xml"));
    EXPECT_FALSE(fs::exists(mirror / "sample"));
}

TEST_F(SyncCli, NorepopathWithTwoRepositoriesFailsBeforeAnythingIsFetched) {
    NginxServer& server = serve(test_repo("sample-repo"));
    const fs::path mirror = tmp_ / "mirror";

    const CommandResult result =
        sync({"--repofrompath", "one," + server.url("/"), "--repofrompath",
              "two," + server.url("/"), "-p", mirror.string(), "--norepopath"});

    // dnf 4 reposync's message and exit status.
    EXPECT_EQ(result.exit_code, 1);
    EXPECT_EQ(result.err, "Error: Can't use --norepopath with multiple repositories\n");
    EXPECT_FALSE(fs::exists(mirror));
    EXPECT_EQ(log_size(server), 0U) << "nothing is fetched";
}

TEST_F(SyncCli, MetadataPathHoldsRepodataAndDownloadPathThePackages) {
    const fs::path upstream = test_repo("sample-repo");
    NginxServer& server = serve(upstream);
    const fs::path packages = tmp_ / "packages";
    const fs::path metadata = tmp_ / "metadata";

    const CommandResult result =
        sync({"--repofrompath", "sample," + server.url("/"), "--repo", "sample", "-p",
              packages.string(), "--metadata-path", metadata.string(), "--download-metadata"});

    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_EQ(tree_digests(packages / "sample", kStateFile), package_digests(upstream));
    EXPECT_EQ(tree_digests(metadata / "sample"),
              prefixed(tree_digests(upstream / "repodata"), "repodata/"));
    EXPECT_FALSE(fs::exists(packages / "sample" / "repodata"));
}

TEST_F(SyncCli, UrlsPrintsEveryPackageUrlAndDownloadsNothing) {
    const fs::path upstream = test_repo("index-repo");
    NginxServer& server = serve(upstream);
    const fs::path mirror = tmp_ / "mirror";

    const CommandResult result = sync({"--repofrompath", "idx," + server.url("/"), "--repo", "idx",
                                       "-p", mirror.string(), "--urls", "--source"});

    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    const std::vector<std::string> printed = lines_of(result.out);
    EXPECT_EQ(std::set<std::string>(printed.begin(), printed.end()),
              (std::set<std::string>{server.url("/Packages/rpmirror-idx-multi-1.10-1.src.rpm"),
                                     server.url("/Packages/rpmirror-idx-noarch-1.0-1.src.rpm")}))
        << result.out;
    EXPECT_TRUE(package_uris(uris_since(server, 0)).empty());
    EXPECT_FALSE(fs::exists(mirror)) << "-u writes nothing to the download path";
}

TEST_F(SyncCli, OneUnreachableRepositoryDoesNotStopTheOther) {
    const fs::path upstream = test_repo("sample-repo");
    NginxServer& server = serve(upstream);
    const fs::path mirror = tmp_ / "mirror";
    const std::string dead_url = "http://127.0.0.1:" + std::to_string(pick_free_port()) + "/";

    const CommandResult result = sync({"--repofrompath", "dead," + dead_url, "--repofrompath",
                                       "sample," + server.url("/"), "-p", mirror.string(), "--repo",
                                       "dead", "--repo", "sample", "--setopt=dead.retries=1"});

    EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
    EXPECT_EQ(tree_digests(mirror / "sample", kStateFile), package_digests(upstream));
    EXPECT_NE(result.err.find(dead_url + "repodata/repomd.xml"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("dead: FAILED"), std::string::npos) << result.err;
    EXPECT_NE(result.out.find("sample: downloaded 5 files"), std::string::npos) << result.out;
}

TEST_F(SyncCli, JsonReportHasTheSameFactsAsTheSummary) {
    const fs::path upstream = test_repo("sample-repo");
    NginxServer& server = serve(upstream);
    const fs::path mirror = tmp_ / "mirror";
    std::uint64_t total_bytes = 0;
    for (const auto& entry : fs::directory_iterator(upstream / "Packages")) {
        total_bytes += entry.file_size();
    }

    const CommandResult result =
        sync({"--repofrompath", "sample," + server.url("/"), "--repo", "sample", "-p",
              mirror.string(), "--download-metadata", "--json", "-"});

    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    const auto report = nlohmann::json::parse(result.out, nullptr, false);
    ASSERT_FALSE(report.is_discarded()) << "stdout is only the JSON report:\n" << result.out;
    EXPECT_EQ(report["exit_code"], 0);
    ASSERT_EQ(report["repositories"].size(), 1U);
    const auto& repo = report["repositories"][0];
    EXPECT_EQ(repo["repo"], "sample");
    EXPECT_EQ(repo["ok"], true);
    EXPECT_EQ(repo["upstream_packages"], 5);
    EXPECT_EQ(repo["selected"], 5);
    EXPECT_EQ(repo["downloaded"], 5);
    EXPECT_EQ(repo["bytes_downloaded"], total_bytes);
    EXPECT_EQ(repo["kept"], 0);
    EXPECT_EQ(repo["failed"], 0);
    EXPECT_EQ(repo["metadata_published"], true);
    EXPECT_EQ(repo["noop"], false);
    EXPECT_NE(result.err.find("sample: downloaded 5 files"), std::string::npos) << result.err;

    // To a file, on a no-op.
    const fs::path json_file = tmp_ / "report.json";
    const CommandResult again =
        sync({"--repofrompath", "sample," + server.url("/"), "--repo", "sample", "-p",
              mirror.string(), "--download-metadata", "--json", json_file.string()});
    ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
    const auto noop = nlohmann::json::parse(read_file(json_file), nullptr, false);
    ASSERT_FALSE(noop.is_discarded());
    EXPECT_EQ(noop["repositories"][0]["noop"], true);
    EXPECT_EQ(noop["repositories"][0]["kept"], 5);
    EXPECT_EQ(noop["repositories"][0]["downloaded"], 0);
}

TEST_F(SyncCli, UnknownRepositoryPatternIsAUsageError) {
    NginxServer& server = serve(test_repo("sample-repo"));

    const CommandResult result = sync({"--repofrompath", "sample," + server.url("/"), "--repo",
                                       "nosuchrepo*", "-p", (tmp_ / "mirror").string()});

    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find("nosuchrepo*"), std::string::npos) << result.err;
    EXPECT_FALSE(fs::exists(tmp_ / "mirror"));
}

TEST_F(SyncCli, UnreachableRepositoryIsAnErrorNamingItsUrl) {
    const std::string dead_url = "http://127.0.0.1:" + std::to_string(pick_free_port()) + "/base/";

    const CommandResult result = sync({"--repofrompath", "dead," + dead_url, "--repo", "dead", "-p",
                                       (tmp_ / "mirror").string(), "--setopt=retries=1"});

    EXPECT_EQ(result.exit_code, 1);
    EXPECT_NE(result.err.find(dead_url + "repodata/repomd.xml"), std::string::npos) << result.err;
}

TEST_F(SyncCli, ReposyncIsAnAliasOfSync) {
    const fs::path upstream = test_repo("sample-repo");
    NginxServer& server = serve(upstream);
    const fs::path mirror = tmp_ / "mirror";

    const CommandResult result =
        run_to_end({rpmirror_binary(), "reposync", "-c", (tmp_ / "empty.conf").string(),
                    "--reposdir", (tmp_ / "empty-reposdir").string(), "--repofrompath",
                    "sample," + server.url("/"), "-p", mirror.string(), "-q"},
                   tmp_ / "logs");

    expect_no_sanitizer_report(result.err);
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out, "") << "-q prints nothing on success";
    EXPECT_EQ(tree_digests(mirror / "sample", kStateFile), package_digests(upstream));
}

TEST_F(SyncCli, AMistypedCommandIsNamedWithTheNearestOneAndUsageNamesTheProgram) {
    // dnf: "No such command: synk"; CLI11 alone said only "A subcommand is required".
    const CommandResult typo = run_to_end({rpmirror_binary(), "synk", "-p", "x"}, tmp_ / "logs");
    EXPECT_EQ(typo.exit_code, 2);
    EXPECT_EQ(typo.err, "rpmirror: no such command: synk; did you mean 'sync'?\n");
    const CommandResult unknown = run_to_end({rpmirror_binary(), "frobnicate"}, tmp_ / "logs");
    EXPECT_EQ(unknown.exit_code, 2);
    EXPECT_EQ(unknown.err, "rpmirror: no such command: frobnicate (rpmirror --help lists them)\n");
    // An alias is a command: it runs (here its help).
    const CommandResult alias =
        run_to_end({rpmirror_binary(), "reposync", "--help"}, tmp_ / "logs");
    EXPECT_EQ(alias.exit_code, 0) << alias.err;
    // Usage names the program, not the path it was started by.
    EXPECT_NE(alias.out.find("Usage: rpmirror sync [OPTIONS]"), std::string::npos) << alias.out;
    EXPECT_EQ(alias.out.find(rpmirror_binary()), std::string::npos) << alias.out;
}

TEST_F(SyncCli, NoRepositoryAtAllIsAnErrorThatSaysWhereRepositoriesComeFrom) {
    const CommandResult result = sync({"-p", (tmp_ / "mirror").string()});
    EXPECT_EQ(result.exit_code, 2) << result.out << result.err;
    EXPECT_NE(result.err.find("rpmirror: no repository to mirror: none is enabled"),
              std::string::npos)
        << result.err;
    EXPECT_FALSE(fs::exists(tmp_ / "mirror"));
}

}  // namespace
}  // namespace rpmirror::test
