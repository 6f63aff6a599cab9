// `rpmirror verify` and `--repair` of a filtered mirror in a bucket (a real Ceph RADOS Gateway):
// the selection the sync recorded in the state object is what is audited and what the repair
// syncs, so a filtered mirror stays filtered and its rewritten metadata stays true; and
// --keep-versions into a bucket, audited the same way; and a repair given no source, from the one
// the mirror recorded.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "integration/s3/s3_sync_fixture.hpp"
#include "support/signing.hpp"

namespace rpmirror::test {
namespace {

class S3RepairTest : public S3SyncTest {
  protected:
    CommandResult verify(std::vector<std::string> extra) {
        std::vector<std::string> argv{rpmirror_binary(), "verify", "-p", destination()};
        argv.insert(argv.end(), extra.begin(), extra.end());
        return run_to_end(argv, tmp_ / "logs");
    }

    // A mirror of the sample repository without its data package (excludepkgs), with metadata
    // rewritten for the four packages it holds.
    void sync_filtered() {
        const CommandResult synced =
            sync({"--download-metadata", "--setopt=sample.excludepkgs=rpmirror-sample-data"});
        ASSERT_EQ(synced.exit_code, 0) << synced.err;
        const auto listed = objects();
        ASSERT_FALSE(listed.contains(kDataHref));
        ASSERT_TRUE(listed.contains(kTinyHref));
    }
};

// --keep-versions into a bucket, as on disk: the newest N EVRs of every name.arch of a
// repository with five versions of each (scripts/make-versions-test-repo), the metadata
// rewritten to list exactly them; going from 3 to 2 with --delete removes exactly the oldest
// kept, and verify audits the new selection against the new metadata.
TEST_F(S3RepairTest, KeepVersionsMirrorsTheNewestNAndDeleteRemovesExactlyTheOlderOnes) {
    NginxServer versions(test_repo("versions-repo"), tmp_ / "nginx-versions");
    repo_url_ = versions.url("/");
    const auto packages = [&] {
        std::set<std::string> names;
        for (const auto& [key, listed] : objects()) {
            if (key.starts_with("Packages/")) {
                names.insert(key.substr(std::string("Packages/").size()));
            }
        }
        return names;
    };
    const std::set<std::string> two{"alpha-2.0-2.x86_64.rpm", "alpha-2.0-1.x86_64.rpm",
                                    "beta-0.5-1.noarch.rpm",  "beta-0.4-1.noarch.rpm",
                                    "gamma-1.0-1.x86_64.rpm", "gamma-8.0-1.x86_64.rpm"};
    std::set<std::string> three = two;
    three.insert({"alpha-1.10-1.x86_64.rpm", "beta-0.3-1.noarch.rpm", "gamma-7.0-1.x86_64.rpm"});

    const CommandResult first = sync({"--download-metadata", "--keep-versions", "3"});
    ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
    EXPECT_EQ(packages(), three);
    const CommandResult second = sync({"--download-metadata", "--keep-versions", "2", "--delete"});
    ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
    EXPECT_FALSE(repo_report().at("noop").get<bool>());
    EXPECT_EQ(packages(), two);
    EXPECT_EQ(repo_report().at("deleted").size(), 3U) << repo_report().dump();
    auto published = client().get_object(bucket(), key("repodata/repomd.xml"));
    ASSERT_TRUE(published) << published.error().to_string();
    EXPECT_NE(*published, read_file(test_repo("versions-repo") / "repodata" / "repomd.xml"));
    // What the rewritten metadata lists is exactly what the bucket holds.
    const CommandResult audited = verify({"--all-packages", "--no-cache"});
    EXPECT_EQ(audited.exit_code, 0) << audited.out << audited.err;
    EXPECT_NE(audited.out.find("sample: OK: 6 packages"), std::string::npos) << audited.out;
}

TEST_F(S3RepairTest, VerifyAuditsTheSelectionTheSyncRecorded) {
    sync_filtered();
    const CommandResult verified = verify({});
    EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;
    EXPECT_NE(verified.out.find("sample: selection: "), std::string::npos) << verified.out;
    EXPECT_NE(verified.out.find("(recorded by sync)"), std::string::npos) << verified.out;
    EXPECT_NE(verified.out.find("sample: OK: 4 packages"), std::string::npos) << verified.out;
}

TEST_F(S3RepairTest, ARepairOfAFilteredMirrorKeepsItFiltered) {
    sync_filtered();
    auto published = client().get_object(bucket(), key("repodata/repomd.xml"));
    ASSERT_TRUE(published) << published.error().to_string();
    ASSERT_NE(*published, read_file(upstream_ / "repodata" / "repomd.xml"));
    ASSERT_TRUE(client().delete_object(bucket(), key(kTinyHref)));

    const CommandResult repaired = verify({"--repair", "--repofrompath", "sample," + repo_url_});
    EXPECT_EQ(repaired.exit_code, 0) << repaired.out << repaired.err;
    EXPECT_NE(repaired.out.find("sample: after repair: OK"), std::string::npos) << repaired.out;
    const auto listed = objects();
    EXPECT_TRUE(listed.contains(kTinyHref)) << "the missing package was not uploaded again";
    EXPECT_FALSE(listed.contains(kDataHref)) << "the repair uploaded what the selection leaves out";
    // The published metadata is still the filtered mirror's: it lists exactly what is there.
    auto republished = client().get_object(bucket(), key("repodata/repomd.xml"));
    ASSERT_TRUE(republished) << republished.error().to_string();
    EXPECT_NE(*republished, read_file(upstream_ / "repodata" / "repomd.xml"));
    const CommandResult all = verify({"--all-packages", "--no-cache"});
    EXPECT_EQ(all.exit_code, 0) << all.out << all.err;
    EXPECT_NE(all.out.find("sample: OK: 4 packages"), std::string::npos) << all.out;
}

// A bucket's mirror remembers its source (.rpmirror/source.repo beside its state object): a
// repair given none uses it, and keeps the mirror filtered; a damaged record is named with its
// line and nothing is changed.
TEST_F(S3RepairTest, ARepairGivenNoSourceUsesTheOneTheMirrorRecorded) {
    sync_filtered();
    auto record = client().get_object(bucket(), key(".rpmirror/source.repo"));
    ASSERT_TRUE(record) << record.error().to_string();
    EXPECT_NE(record->find("baseurl=" + repo_url_), std::string::npos) << *record;
    EXPECT_NE(record->find("excludepkgs=rpmirror-sample-data"), std::string::npos) << *record;
    ASSERT_TRUE(client().delete_object(bucket(), key(kTinyHref)));
    const std::vector<std::string> no_source{"-c", (tmp_ / "empty.conf").string(), "--reposdir",
                                             (tmp_ / "empty-reposdir").string()};

    ASSERT_TRUE(
        client().put_object(bucket(), key(".rpmirror/source.repo"), *record + "retries=many\n"));
    std::vector<std::string> args = no_source;
    args.push_back("--repair");
    const CommandResult refused = verify(args);
    EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
    const std::size_t lines =
        static_cast<std::size_t>(std::count(record->begin(), record->end(), '\n'));
    EXPECT_NE(
        refused.out.find("sample: repair: FAILED: " + destination() +
                         "/sample/.rpmirror/source.repo: line " + std::to_string(lines + 1) + ":"),
        std::string::npos)
        << refused.out;
    EXPECT_FALSE(objects().contains(kTinyHref)) << "nothing is changed";

    ASSERT_TRUE(client().put_object(bucket(), key(".rpmirror/source.repo"), *record));
    const CommandResult repaired = verify(args);
    EXPECT_EQ(repaired.exit_code, 0) << repaired.out << repaired.err;
    EXPECT_NE(repaired.out.find("sample: source: recorded in " + destination() +
                                "/sample/.rpmirror/source.repo"),
              std::string::npos)
        << repaired.out;
    EXPECT_NE(repaired.out.find("sample: after repair: OK"), std::string::npos) << repaired.out;
    const auto listed = objects();
    EXPECT_TRUE(listed.contains(kTinyHref)) << "the missing package was not uploaded again";
    EXPECT_FALSE(listed.contains(kDataHref)) << "the repair uploaded what the selection leaves out";
}

// The whole case: a public-read, filtered, signed mirror, repaired, stays public (an
// anonymous GET), filtered (dnf lists its four packages through the gateway) and signed (gpg
// verifies the new repomd.xml.asc with the key the sync signed with).
TEST_F(S3RepairTest, ARepairedPublicFilteredSignedMirrorStaysAllThree) {
    if (!signing_tools_available()) {
        GTEST_FAIL() << "/usr/bin/gpg or /usr/bin/rpmsign not found; scripts/deps installs them";
    }
    ::setenv("GNUPGHOME", test_keys().home().c_str(), 1);
    const CommandResult synced =
        sync({"--download-metadata", "--setopt=sample.excludepkgs=rpmirror-sample-data", "--s3-acl",
              "public-read", "--sign-key", test_keys().key_id(Signer::Good)});
    ASSERT_EQ(synced.exit_code, 0) << synced.err;
    ASSERT_TRUE(objects().contains("repodata/repomd.xml.asc"));
    ASSERT_TRUE(client().delete_object(bucket(), key(kTinyHref)));

    const CommandResult repaired = verify({"--repair", "--repofrompath", "sample," + repo_url_});
    ::unsetenv("GNUPGHOME");
    ASSERT_EQ(repaired.exit_code, 0) << repaired.out << repaired.err;
    const auto listed = objects();
    EXPECT_FALSE(listed.contains(kDataHref));
    ASSERT_TRUE(listed.contains("repodata/repomd.xml.asc")) << repaired.out << repaired.err;

    // Public: anonymous GETs of the re-uploaded package and of the new index.
    const std::string base = cluster().endpoint() + "/" + bucket() + "/" + key("");
    for (const std::string& relative : {kTinyHref, std::string("repodata/repomd.xml")}) {
        const CommandResult status =
            run_to_end({"curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", base + relative},
                       tmp_ / "logs");
        ASSERT_EQ(status.exit_code, 0) << status.err;
        EXPECT_EQ(status.out, "200") << relative << " is not public-read";
    }
    // Signed: the signature verifies the index it sits beside.
    auto repomd = client().get_object(bucket(), key("repodata/repomd.xml"));
    auto signature = client().get_object(bucket(), key("repodata/repomd.xml.asc"));
    ASSERT_TRUE(repomd && signature);
    const auto repomd_file = TempDir::write_at(tmp_ / "check" / "repomd.xml", *repomd);
    const auto signature_file = TempDir::write_at(tmp_ / "check" / "repomd.xml.asc", *signature);
    const CommandResult verified =
        run_to_end({kGpgBinary, "--homedir", test_keys().home().string(), "--verify",
                    signature_file.string(), repomd_file.string()},
                   tmp_ / "logs");
    EXPECT_EQ(verified.exit_code, 0) << verified.err;
    // Filtered: dnf, reading the mirror through the gateway, sees the four packages.
    std::vector<std::string> argv = isolated_dnf(tmp_ / "dnf");
    std::filesystem::create_directories(tmp_ / "dnf" / "log");
    argv.insert(argv.end(), {"--repofrompath=s3m," + base, "--repo=s3m", "--setopt=s3m.gpgcheck=0",
                             "--setopt=s3m.skip_if_unavailable=0", "--disableplugin=*", "repoquery",
                             "-a", "--qf", "%{name}"});
    const CommandResult query = run_to_end(argv, tmp_ / "logs");
    ASSERT_EQ(query.exit_code, 0) << query.err;
    std::vector<std::string> names = lines_of(query.out);
    std::sort(names.begin(), names.end());
    EXPECT_EQ(names, (std::vector<std::string>{"rpmirror-sample-docs", "rpmirror-sample-medium",
                                               "rpmirror-sample-small", "rpmirror-sample-tiny"}));
}

}  // namespace
}  // namespace rpmirror::test
