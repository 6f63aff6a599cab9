// --upstream-layout on an Amazon-Linux-shaped upstream built here: releases as GUID directories
// whose primary.xml hrefs climb into one shared blobstore ("../../../../../blobstore/<sha256>/
// <name>.rpm", createrepo_c --location-prefix), a mirror.list per release naming its GUID
// directory, and the client's .repo using mirrorlist= with $releasever. The mirror keeps that
// layout under -p/<repoid>/, fetches each blob once across releases, never replaces a shared
// blob, rewrites each release's mirror.list for --mirror-url, and dnf reads every release
// through the mirror's own mirror.list.
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "checksum/hasher.hpp"
#include "fs/state.hpp"
#include "integration/sync/amazon_layout.hpp"
#include "integration/sync/sync_fixture.hpp"
#include "integration/sync/upstream_layout_fixture.hpp"
#include "rpmirror/checksum/checksum.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

TEST_F(UpstreamLayout, TwoReleasesShareOneBlobstoreAndDnfReadsEachThroughTheMirrorList) {
    const std::size_t before = log_size(*upstream_server_);
    const CommandResult first = mirror("1.0");
    ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
    const CommandResult second = mirror("2.0");
    ASSERT_EQ(second.exit_code, 0) << second.out << second.err;

    // Each blob fetched once: 8 for 1.0, then only the 3 that 2.0 adds.
    const std::vector<std::string> fetched = blob_requests(before);
    EXPECT_EQ(fetched.size(), 11U);
    EXPECT_EQ(std::set<std::string>(fetched.begin(), fetched.end()).size(), fetched.size());
    EXPECT_NE(second.out.find("kept 6"), std::string::npos) << second.out;

    for (const auto& [releasever, guid] : {std::pair{"1.0", "G1"}, std::pair{"2.0", "G2"}}) {
        const std::string path = "al2023/core/guids/" + std::string(guid) + "/x86_64";
        // Upstream's metadata, byte for byte, where upstream has it.
        EXPECT_EQ(tree_digests(mirror_root() / path / "repodata"),
                  tree_digests(upstream() / path / "repodata"))
            << releasever;
        EXPECT_EQ(
            read_file(mirror_root() / "al2023/core/mirrors" / releasever / "x86_64/mirror.list"),
            mirror_server_->url("/") + path + "/\n");
        EXPECT_EQ(dnf_lists(releasever), expected_locations(releasever)) << releasever;
        // An install resolves against the release and fetches its package through the blobstore.
        EXPECT_EQ(dnf_installs(releasever).size(), 1U) << releasever;
    }
    for (const std::string& blob : released_["2.0"]) {
        EXPECT_TRUE(fs::is_regular_file(mirror_root() / "blobstore" / blob)) << blob;
    }
    // Nothing outside -p/<repoid>/.
    std::vector<std::string> top;
    for (const auto& entry : fs::directory_iterator(tmp_ / "mirror")) {
        top.push_back(entry.path().filename().string());
    }
    EXPECT_EQ(top, std::vector<std::string>{"amzn"});

    // A second run of a release is a no-op that asks upstream for no blob.
    const std::size_t again = log_size(*upstream_server_);
    const CommandResult noop = mirror("1.0");
    ASSERT_EQ(noop.exit_code, 0) << noop.out << noop.err;
    EXPECT_NE(noop.out.find("up to date"), std::string::npos) << noop.out;
    EXPECT_TRUE(blob_requests(again).empty());
}

// A release is locked where the sync started (-p/<repoid>, the layout root every release shares,
// so two releases' runs never interleave their blobs or the collection) and at its own directory
// (where verify --repair of the release locks it): either held by another run refuses the sync
// before anything is fetched into the mirror.
TEST_F(UpstreamLayout, AReleaseIsLockedAtTheLayoutRootAndAtItsOwnDirectory) {
    const std::string busy =
        " is being synced by another rpmirror (pid " + std::to_string(::getpid()) + ")";
    for (const fs::path& held : {mirror_root(), mirror_root() / "al2023/core/guids/G1/x86_64"}) {
        auto lock = rpmirror::fs::RunLock::acquire(rpmirror::fs::default_state_dir(), held);
        ASSERT_TRUE(lock.has_value()) << lock.error().to_string();
        const CommandResult refused = mirror("1.0");
        EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
        EXPECT_NE(refused.err.find("repository directory " + held.string() + busy),
                  std::string::npos)
            << refused.err;
        EXPECT_FALSE(fs::exists(mirror_root() / "blobstore")) << held;
        EXPECT_FALSE(fs::exists(mirror_root() / "al2023/core/guids/G1/x86_64/repodata")) << held;
    }
    const CommandResult synced = mirror("1.0");
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    EXPECT_EQ(dnf_lists("1.0"), expected_locations("1.0"));
}

// A repository served at its host's root is the layout root itself: it locks one directory
// (not itself twice under two spellings), mirrors, and its next run is a no-op.
TEST_F(UpstreamLayout, ARepositoryAtItsHostsRootIsTheLayoutRootItself) {
    const NginxServer& root = serve(test_repo("sample-repo"));
    const std::vector<std::string> args{"--repofrompath",
                                        "sample," + root.url("/"),
                                        "--repo",
                                        "sample",
                                        "-p",
                                        (tmp_ / "at-root").string(),
                                        "--download-metadata",
                                        "--upstream-layout"};
    const CommandResult synced = sync(args);
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    EXPECT_EQ(tree_digests(tmp_ / "at-root" / "sample" / "repodata"),
              tree_digests(test_repo("sample-repo") / "repodata"));
    const CommandResult again = sync(args);
    ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
    EXPECT_NE(again.out.find("up to date"), std::string::npos) << again.out;
}

// --releasever given twice: both releases in one run, each blob fetched once.
TEST_F(UpstreamLayout, OneRunMirrorsEveryReleaseGiven) {
    const std::size_t before = log_size(*upstream_server_);
    const CommandResult both = mirror("1.0", {"--releasever", "2.0"});
    ASSERT_EQ(both.exit_code, 0) << both.out << both.err;
    const std::vector<std::string> fetched = blob_requests(before);
    EXPECT_EQ(fetched.size(), 11U);
    EXPECT_EQ(std::set<std::string>(fetched.begin(), fetched.end()).size(), fetched.size());
    for (const char* releasever : {"1.0", "2.0"}) {
        EXPECT_TRUE(fs::is_regular_file(mirror_root() / "al2023/core/mirrors" / releasever /
                                        "x86_64/mirror.list"))
            << releasever;
        EXPECT_EQ(dnf_lists(releasever), expected_locations(releasever)) << releasever;
    }
}

TEST_F(UpstreamLayout, ASharedBlobThatDoesNotMatchIsNeverReplacedAndThePackageFails) {
    ASSERT_EQ(mirror("1.0").exit_code, 0);
    const std::string blob = released_["1.0"][3];
    const fs::path shared = mirror_root() / "blobstore" / blob;
    std::string content = read_file(shared);
    content[content.size() / 2] = static_cast<char>(content[content.size() / 2] ^ 0x5a);
    // Same size, another inode: the no-op and the checksum cache do not vouch for it.
    fs::remove(shared);
    TempDir::write_at(shared, content);
    const auto metadata = tree_digests(mirror_root() / "al2023/core/guids/G2/x86_64");

    const CommandResult synced = mirror("2.0");
    EXPECT_EQ(synced.exit_code, 1) << synced.out << synced.err;
    EXPECT_NE(synced.err.find(shared.string() + " is shared beyond this repository's directory"),
              std::string::npos)
        << synced.err;
    EXPECT_NE(synced.err.find("sha256 " + blob.substr(0, 64)), std::string::npos) << synced.err;
    EXPECT_EQ(read_file(shared), content);  // left as it was
    // Release 2.0's metadata is not published while a blob it lists is wrong.
    EXPECT_EQ(tree_digests(mirror_root() / "al2023/core/guids/G2/x86_64"), metadata);
}

// A release dropped from the mirror (its GUID directory removed): the next --delete run of any
// release removes exactly the blobs no remaining release lists and rpmirror wrote; a file it did
// not write stays; a repository beneath the root whose metadata cannot be read stops the
// collection (nothing deleted, a warning).
TEST_F(UpstreamLayout, DeleteRemovesExactlyTheBlobsNoReleaseListsAnyMore) {
    ASSERT_EQ(mirror("1.0").exit_code, 0);
    ASSERT_EQ(mirror("2.0").exit_code, 0);
    const fs::path foreign = mirror_root() / "blobstore" / "foreign" / "not-ours.rpm";
    TempDir::write_at(foreign, "an admin's file");
    fs::remove_all(mirror_root() / "al2023/core/guids/G1");
    fs::remove_all(mirror_root() / "al2023/core/mirrors/1.0");

    // First with an unreadable repository beside the releases: nothing deleted.
    TempDir::write_at(mirror_root() / "other" / "repodata" / "repomd.xml", "not xml");
    const CommandResult doubtful = mirror("2.0", {"--delete"});
    ASSERT_EQ(doubtful.exit_code, 0) << doubtful.out << doubtful.err;
    EXPECT_NE(doubtful.err.find("no blob deleted"), std::string::npos) << doubtful.err;
    for (const std::string& blob : released_["1.0"]) {
        EXPECT_TRUE(fs::exists(mirror_root() / "blobstore" / blob)) << blob;
    }
    fs::remove_all(mirror_root() / "other");

    const CommandResult collected = mirror("2.0", {"--delete"});
    ASSERT_EQ(collected.exit_code, 0) << collected.out << collected.err;
    const std::set<std::string> kept(released_["2.0"].begin(), released_["2.0"].end());
    std::size_t gone = 0;
    for (const std::string& blob : released_["1.0"]) {
        const bool listed = kept.contains(blob);
        EXPECT_EQ(fs::exists(mirror_root() / "blobstore" / blob), listed) << blob;
        if (!listed) {
            ++gone;
            // Its blobstore/<sha256>/ directory too.
            EXPECT_FALSE(fs::exists(mirror_root() / "blobstore" / blob.substr(0, 64))) << blob;
        }
    }
    EXPECT_EQ(gone, 2U);
    EXPECT_NE(collected.out.find("deleted 2"), std::string::npos) << collected.out;
    for (const std::string& blob : released_["2.0"]) {
        EXPECT_TRUE(fs::exists(mirror_root() / "blobstore" / blob)) << blob;
    }
    EXPECT_EQ(read_file(foreign), "an admin's file");
    EXPECT_EQ(dnf_lists("2.0"), expected_locations("2.0"));
}

// --keep-releases N: of the releases rpmirror synced beneath the layout root, the one synced now
// and the N-1 synced most recently stay; the others go (directory, mirror.list, the blobs only
// they listed), and a release rpmirror did not sync stays whatever its age.
TEST_F(UpstreamLayout, KeepReleasesRemovesTheReleasesSyncedLongestAgoAndOnlyTheirBlobs) {
    // Release 3.0 lists 2.0's blobs but its first two.
    release("3.0", "G3", {released_["2.0"].begin() + 2, released_["2.0"].end()});
    TempDir::write_at(upstream() / "al2023/core/mirrors/3.0/x86_64/mirror.list",
                      upstream_server_->url("/al2023/core/guids/G3/x86_64/") + "\n");
    for (const char* releasever : {"1.0", "2.0", "3.0"}) {
        const CommandResult synced = mirror(releasever);
        ASSERT_EQ(synced.exit_code, 0) << releasever << synced.out << synced.err;
    }
    // A release an admin put there by hand: not rpmirror's to remove.
    const fs::path guids = mirror_root() / "al2023/core/guids";
    fs::copy(guids / "G2", guids / "G9", fs::copy_options::recursive);

    const CommandResult pruned = mirror("3.0", {"--delete", "--keep-releases", "2"});
    ASSERT_EQ(pruned.exit_code, 0) << pruned.out << pruned.err;
    EXPECT_FALSE(fs::exists(guids / "G1"));
    EXPECT_FALSE(fs::exists(mirror_root() / "al2023/core/mirrors/1.0"));
    for (const char* kept : {"G2", "G3", "G9"}) {
        EXPECT_TRUE(fs::is_regular_file(guids / kept / "x86_64/repodata/repomd.xml")) << kept;
    }
    EXPECT_NE(pruned.err.find((guids / "G9" / "x86_64").string() +
                              " was not synced by rpmirror with this state directory"),
              std::string::npos)
        << pruned.err;
    const std::set<std::string> listed(released_["2.0"].begin(), released_["2.0"].end());
    std::size_t gone = 0;
    for (const std::string& blob : released_["1.0"]) {
        EXPECT_EQ(fs::exists(mirror_root() / "blobstore" / blob), listed.contains(blob)) << blob;
        gone += listed.contains(blob) ? 0 : 1;
    }
    EXPECT_EQ(gone, 2U);
    for (const std::string& blob : released_["2.0"]) {
        EXPECT_TRUE(fs::exists(mirror_root() / "blobstore" / blob)) << blob;
    }
    EXPECT_EQ(dnf_lists("2.0"), expected_locations("2.0"));
    EXPECT_EQ(dnf_lists("3.0"), expected_locations("3.0"));

    // Keeping one: 3.0 alone (2.0 goes; G9 stays; nothing 3.0 lists goes).
    const CommandResult alone = mirror("3.0", {"--delete", "--keep-releases", "1"});
    ASSERT_EQ(alone.exit_code, 0) << alone.out << alone.err;
    EXPECT_FALSE(fs::exists(guids / "G2"));
    EXPECT_FALSE(fs::exists(mirror_root() / "al2023/core/mirrors/2.0"));
    EXPECT_TRUE(fs::exists(guids / "G9"));
    EXPECT_EQ(dnf_lists("3.0"), expected_locations("3.0"));
}

// A jobs file mirrors several releases into one layout root: `releases = 1.0 2.0 latest` is one
// job per release ("amzn:1.0", ...), each with its $releasever, sharing the blobstore; run three at
// a time, they take the root's lock in turn and each blob is fetched once.
TEST_F(UpstreamLayout, AJobsReleasesKeyMirrorsEveryReleaseIntoOneLayoutRoot) {
    TempDir::write_at(upstream() / "al2023/core/mirrors/latest/x86_64/mirror.list",
                      upstream_server_->url("/al2023/core/guids/G2/x86_64/") + "\n");
    const fs::path conf = tmp_ / "rpmirror.conf";
    TempDir::write_at(
        conf, "[main]\ndestination = " + (tmp_ / "mirror").string() +
                  "\nstate-dir = " + (tmp_ / "jobs-state").string() +
                  "\n[amzn]\nmirrorlist = " + upstream_server_->url("/al2023/core/mirrors/") +
                  "$releasever/x86_64/mirror.list\ngpgcheck = 0\n"
                  "upstream-layout = 1\ndownload-metadata = 1\nmirror-url = " +
                  mirror_server_->url("/") + "\nreleases = 1.0 2.0 latest\n");
    const std::size_t before = log_size(*upstream_server_);
    const CommandResult run = run_to_end(
        rpmirror_sync_argv({"--config-file", conf.string(), "--parallel-jobs", "3", "--json", "-"}),
        tmp_ / "logs");
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
    for (const char* job : {"amzn:1.0", "amzn:2.0", "amzn:latest"}) {
        EXPECT_NE(run.out.find(std::string("\"") + job + "\""), std::string::npos) << job;
    }
    const std::vector<std::string> fetched = blob_requests(before);
    EXPECT_EQ(fetched.size(), 11U);
    EXPECT_EQ(std::set<std::string>(fetched.begin(), fetched.end()).size(), fetched.size());
    EXPECT_EQ(dnf_lists("1.0"), expected_locations("1.0"));
    EXPECT_EQ(dnf_lists("2.0"), expected_locations("2.0"));
    EXPECT_EQ(dnf_lists("latest"), expected_locations("2.0"));

    // Without upstream-layout the releases would be three mirrors in one directory: refused.
    TempDir::write_at(conf, "[main]\ndestination = " + (tmp_ / "other").string() +
                                "\n[amzn]\nbaseurl = http://x/$releasever/\n"
                                "releases = 1.0 2.0\n");
    const CommandResult refused =
        run_to_end(rpmirror_sync_argv({"--config-file", conf.string()}), tmp_ / "logs");
    EXPECT_NE(refused.exit_code, 0);
    EXPECT_NE(refused.err.find("job 'amzn': releases: needs upstream-layout = 1"),
              std::string::npos)
        << refused.err;
    EXPECT_FALSE(fs::exists(tmp_ / "other"));
}

// Amazon Linux's `latest` names a new GUID every few days. Synced daily with --keep-releases 2,
// the mirror holds the last two releases `latest` named, its own `latest` mirror.list names the
// newest, and the blobs only the dropped release listed are gone.
TEST_F(UpstreamLayout, ALatestThatMovesKeepsTheLastTwoReleasesItNamed) {
    const auto point_latest = [&](const std::string& guid) {
        TempDir::write_at(upstream() / "al2023/core/mirrors/latest/x86_64/mirror.list",
                          upstream_server_->url("/al2023/core/guids/" + guid + "/x86_64/") + "\n");
    };
    const std::vector<std::string> keep{"--delete", "--keep-releases", "2"};
    point_latest("G2");
    const CommandResult first = mirror("latest", keep);
    ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
    release("3.0", "G3", {released_["2.0"].begin() + 2, released_["2.0"].end()});
    point_latest("G3");
    const CommandResult second = mirror("latest", keep);
    ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
    std::vector<std::string> g4(released_["2.0"].begin() + 4, released_["2.0"].end());
    g4.push_back(released_["1.0"][0]);
    release("4.0", "G4", g4);
    point_latest("G4");
    const CommandResult third = mirror("latest", keep);
    ASSERT_EQ(third.exit_code, 0) << third.out << third.err;

    const fs::path guids = mirror_root() / "al2023/core/guids";
    EXPECT_FALSE(fs::exists(guids / "G2"));
    EXPECT_TRUE(fs::is_regular_file(guids / "G3/x86_64/repodata/repomd.xml"));
    EXPECT_TRUE(fs::is_regular_file(guids / "G4/x86_64/repodata/repomd.xml"));
    EXPECT_EQ(read_file(mirror_root() / "al2023/core/mirrors/latest/x86_64/mirror.list"),
              mirror_server_->url("/") + "al2023/core/guids/G4/x86_64/\n");
    for (const std::string& blob : released_["2.0"]) {
        const bool listed = std::find(released_["3.0"].begin(), released_["3.0"].end(), blob) !=
                                released_["3.0"].end() ||
                            std::find(g4.begin(), g4.end(), blob) != g4.end();
        EXPECT_EQ(fs::exists(mirror_root() / "blobstore" / blob), listed) << blob;
    }
    EXPECT_TRUE(fs::exists(mirror_root() / "blobstore" / released_["1.0"][0]));
    EXPECT_EQ(dnf_lists("latest"), expected_locations("4.0"));
}

// --keep-releases killed at every rename and unlink (the sync's own, the mirror.list's, the
// release's rename out of the layout, the blobs'): a mirror.list never names a release that is
// gone, a release still there still has every blob it lists, the kept release is untouched, and
// the next run finishes the removal (nothing left under the removing name; a kill between an
// unlink and the rmdir of its emptied parent may leave that empty directory).
TEST_F(UpstreamLayout, KeepReleasesKilledAtEveryStepLeavesNoBrokenReleaseAndTheNextRunFinishes) {
    const std::set<std::string> kept(released_["2.0"].begin(), released_["2.0"].end());
    const auto metadata = tree_digests(upstream() / "al2023/core/guids/G2/x86_64/repodata");
    int boxes = 0;
    fs::path box;
    const auto run = [&](const std::string& releasever, const std::string& fault, bool prune) {
        std::vector<std::string> extra{"--mirror-url", "http://mirror.example/"};
        if (prune) {
            extra.insert(extra.end(), {"--delete", "--keep-releases", "1"});
        }
        return in_box(box, releasever, fault, extra);
    };
    int kills = 0;
    for (const std::string op : {"unlink", "rename"}) {
        for (int call = 1; call < 40; ++call) {
            box = tmp_ / ("keep-box-" + std::to_string(++boxes));
            ASSERT_EQ(run("1.0", "", false).exit_code, 0);
            ASSERT_EQ(run("2.0", "", false).exit_code, 0);
            const std::string fault = "kill:" + op + ":" + std::to_string(call);
            const CommandResult killed = run("2.0", fault, true);
            if (killed.exit_code == 0) {
                break;  // fewer than `call` such operations: nothing left to kill
            }
            ASSERT_EQ(killed.exit_code, 128 + SIGKILL) << fault << killed.out << killed.err;
            ++kills;
            const fs::path root = box / "mirror/amzn";
            const fs::path g1 = root / "al2023/core/guids/G1/x86_64";
            const bool g1_there = fs::exists(g1 / "repodata/repomd.xml");
            if (fs::exists(root / "al2023/core/mirrors/1.0/x86_64/mirror.list")) {
                EXPECT_TRUE(g1_there) << fault << ": the mirror.list names a release that is gone";
            }
            for (const std::string& blob : released_["1.0"]) {
                if (g1_there || kept.contains(blob)) {
                    EXPECT_TRUE(fs::is_regular_file(root / "blobstore" / blob))
                        << fault << ": " << blob;
                }
            }
            for (const std::string& blob : kept) {
                EXPECT_EQ(hash_bytes(ChecksumType::Sha256, read_file(root / "blobstore" / blob)),
                          blob.substr(0, 64))
                    << fault;
            }
            EXPECT_EQ(tree_digests(root / "al2023/core/guids/G2/x86_64/repodata"), metadata)
                << fault;

            const CommandResult finished = run("2.0", "", true);
            ASSERT_EQ(finished.exit_code, 0) << fault << finished.out << finished.err;
            // (A kill between an unlink and its parent's rmdir may leave empty directories.)
            EXPECT_FALSE(fs::exists(root / "al2023/core/guids/G1/x86_64")) << fault;
            EXPECT_FALSE(fs::exists(root / "al2023/core/mirrors/1.0/x86_64/mirror.list")) << fault;
            for (const auto& entry : fs::directory_iterator(root)) {
                EXPECT_FALSE(entry.path().filename().string().starts_with(".rpmirror-removing"))
                    << fault << ": " << entry.path();
            }
            for (const std::string& blob : released_["1.0"]) {
                EXPECT_EQ(fs::exists(root / "blobstore" / blob), kept.contains(blob))
                    << fault << ": " << blob;
            }
        }
    }
    std::cout << "[ figures  ] SIGKILL points of --keep-releases survived: " << kills << '\n';
    EXPECT_GE(kills, 4) << "the removal made fewer operations than expected";
}

// An href that climbs out of the release's directory and straight back in
// ("../x86_64/Packages/a.rpm") names a package of the release itself: placed there, kept by
// --delete (which once took it for a stray: its key differed from the listed one), and a no-op
// the next time.
TEST_F(UpstreamLayout, AnHrefClimbingBackIntoItsOwnDirectoryIsAPackageOfTheRelease) {
    const fs::path out = upstream() / "al2023/core/guids/G3/x86_64";
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(test_repo("index-repo") / "Packages")) {
        if (entry.path().extension() == ".rpm" && names.size() < 3) {
            fs::create_directories(out / "Packages");
            fs::copy_file(entry.path(), out / "Packages" / entry.path().filename());
            names.push_back(entry.path().filename().string());
        }
    }
    ASSERT_EQ(names.size(), 3U);
    std::sort(names.begin(), names.end());
    run_checked({"createrepo_c", "--quiet", "--no-database", "--location-prefix",
                 "../x86_64/Packages/", "--outputdir", out.string(), (out / "Packages").string()},
                tmp_ / "logs");
    TempDir::write_at(upstream() / "al2023/core/mirrors/3.0/x86_64/mirror.list",
                      upstream_server_->url("/al2023/core/guids/G3/x86_64/") + "\n");

    for (int run = 1; run <= 2; ++run) {
        const CommandResult synced = mirror("3.0", {"--delete"});
        ASSERT_EQ(synced.exit_code, 0) << run << synced.out << synced.err;
        if (run == 1) {
            EXPECT_NE(synced.out.find("deleted 0,"), std::string::npos) << synced.out;
        } else {
            EXPECT_NE(synced.out.find("up to date"), std::string::npos) << synced.out;
        }
        const fs::path packages = mirror_root() / "al2023/core/guids/G3/x86_64/Packages";
        for (const std::string& name : names) {
            EXPECT_EQ(read_file(packages / name), read_file(out / "Packages" / name))
                << run << " " << name;
        }
    }
    std::vector<std::string> expected;
    for (const std::string& name : names) {
        expected.push_back("../x86_64/Packages/" + name);
    }
    EXPECT_EQ(dnf_lists("3.0"), expected);
}

// --flatten-hrefs: one release as a self-contained repository at -p/<repoid>/: the blobs inside
// it, primary.xml rewritten to name them there; dnf reads and downloads from it, verify passes,
// a second run is a no-op.
TEST_F(UpstreamLayout, FlattenHrefsMakesASelfContainedRepository) {
    const std::vector<std::string> args{"--reposdir",
                                        (tmp_ / "reposd").string(),
                                        "--repo",
                                        "amzn",
                                        "--releasever",
                                        "1.0",
                                        "-p",
                                        (tmp_ / "flat").string(),
                                        "--download-metadata",
                                        "--flatten-hrefs"};
    const CommandResult synced = sync(args);
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    const fs::path repo = tmp_ / "flat" / "amzn";
    std::vector<std::string> expected;
    for (const std::string& blob : released_["1.0"]) {
        EXPECT_TRUE(fs::is_regular_file(repo / "blobstore" / blob)) << blob;
        expected.push_back("blobstore/" + blob);
    }
    std::sort(expected.begin(), expected.end());
    const fs::path work = tmp_ / "dnf-flat";
    std::vector<std::string> query = isolated_dnf(work);
    query.insert(query.end(), {"--repofrompath=f,file://" + repo.string(), "--repo=f", "repoquery",
                               "-a", "--qf", "%{location}"});
    const CommandResult listed = run_to_end(query, tmp_ / "logs");
    ASSERT_EQ(listed.exit_code, 0) << listed.err;
    std::vector<std::string> locations = lines_of(listed.out);
    std::sort(locations.begin(), locations.end());
    EXPECT_EQ(locations, expected);
    std::vector<std::string> download = isolated_dnf(tmp_ / "dnf-flat-download");
    download.insert(download.end(),
                    {"--repofrompath=f,file://" + repo.string(), "--repo=f", "download",
                     "--destdir", (tmp_ / "downloaded").string(), "rpmirror-idx-epoch"});
    const CommandResult downloaded = run_to_end(download, tmp_ / "logs");
    EXPECT_EQ(downloaded.exit_code, 0) << downloaded.out << downloaded.err;
    EXPECT_FALSE(fs::is_empty(tmp_ / "downloaded"));
    const CommandResult verified = run_to_end(
        {rpmirror_binary(), "verify", "-p", (tmp_ / "flat").string(), "-c",
         (tmp_ / "empty.conf").string(), "--reposdir", (tmp_ / "empty-reposdir").string()},
        tmp_ / "logs");
    EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;
    const CommandResult again = sync(args);
    ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
    EXPECT_NE(again.out.find("up to date"), std::string::npos) << again.out;
}

// The collection killed (SIGKILL, the I/O fault seam) before each unlink, create, write and rename
// it makes: every blob the remaining release lists is still there and intact, its metadata too,
// an admin's file untouched; and an unarmed run then finishes the collection.
TEST_F(UpstreamLayout, KilledAtEveryStepOfTheCollectionNothingListedIsLostAndTheNextRunFinishes) {
    const std::set<std::string> kept(released_["2.0"].begin(), released_["2.0"].end());
    const auto metadata = tree_digests(upstream() / "al2023/core/guids/G2/x86_64/repodata");
    // One fresh box per kill (the catalogue vouches for files by inode and times: a copy of a
    // mirror is not the mirror): both releases mirrored, release 1.0 dropped, an admin's file.
    int boxes = 0;
    fs::path box;
    const auto run = [&](const std::string& releasever, const std::string& fault, bool remove) {
        return in_box(box, releasever, fault,
                      remove ? std::vector<std::string>{"--delete"} : std::vector<std::string>{});
    };
    const auto fresh_box = [&] {
        box = tmp_ / ("box-" + std::to_string(++boxes));
        EXPECT_EQ(run("1.0", "", false).exit_code, 0);
        EXPECT_EQ(run("2.0", "", false).exit_code, 0);
        fs::remove_all(box / "mirror/amzn/al2023/core/guids/G1");
        TempDir::write_at(box / "mirror/amzn/blobstore/foreign/not-ours.rpm", "an admin's file");
    };
    int kills = 0;
    for (const std::string op : {"unlink", "create", "write", "rename"}) {
        for (int call = 1; call < 50; ++call) {
            fresh_box();
            const std::string fault = "kill:" + op + ":" + std::to_string(call);
            const CommandResult killed = run("2.0", fault, true);
            if (killed.exit_code == 0) {
                break;  // fewer than `call` such operations: nothing left to kill
            }
            ASSERT_EQ(killed.exit_code, 128 + SIGKILL) << fault << killed.out << killed.err;
            ++kills;
            const fs::path root = box / "mirror/amzn";
            for (const std::string& blob : kept) {
                const fs::path file = root / "blobstore" / blob;
                ASSERT_TRUE(fs::is_regular_file(file)) << fault << ": " << blob;
                EXPECT_EQ(hash_bytes(ChecksumType::Sha256, read_file(file)), blob.substr(0, 64))
                    << fault;
            }
            EXPECT_EQ(tree_digests(root / "al2023/core/guids/G2/x86_64/repodata"), metadata)
                << fault;
            EXPECT_EQ(read_file(root / "blobstore/foreign/not-ours.rpm"), "an admin's file")
                << fault;
            const CommandResult finished = run("2.0", "", true);
            ASSERT_EQ(finished.exit_code, 0) << fault << finished.out << finished.err;
            for (const std::string& blob : released_["1.0"]) {
                EXPECT_EQ(fs::exists(root / "blobstore" / blob), kept.contains(blob))
                    << fault << ": " << blob;
            }
            EXPECT_EQ(read_file(root / "blobstore/foreign/not-ours.rpm"), "an admin's file");
        }
    }
    std::cout << "[ figures  ] SIGKILL points of the collection survived: " << kills << '\n';
    EXPECT_GE(kills, 4) << "the collection made fewer operations than expected";
}

}  // namespace
}  // namespace rpmirror::test
