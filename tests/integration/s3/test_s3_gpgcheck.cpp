// `rpmirror sync --gpgcheck` into s3:// (a real Ceph RADOS Gateway): every package is judged in
// the spool before it is uploaded, with the verdicts and dnf's words of a local --gpgcheck; a
// package with a verdict against it never reaches the bucket (and leaves it, if it was there);
// stored packages no check vouches for are judged once, without being uploaded again.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "integration/s3/s3_sync_fixture.hpp"
#include "s3/config.hpp"
#include "support/signing.hpp"

namespace rpmirror::test {
namespace {

class S3GpgcheckTest : public S3SyncTest {
  protected:
    void SetUp() override {
        S3SyncTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) {
            return;
        }
        if (!signing_tools_available()) {
            GTEST_FAIL() << "/usr/bin/gpg or /usr/bin/rpmsign not found; scripts/deps installs "
                            "them (Debian packages gpg, rpm)";
        }
    }

    // Signs upstream_'s packages: tiny by the good key, small by a key the repository does not
    // list, medium not at all, docs by the key that expired after it signed, data by the good
    // key with one payload byte changed afterwards (only the signature can tell); new metadata.
    void make_upstream_mixed() {
        test_keys().sign_rpm(Signer::Good, upstream_ / kTinyHref);
        test_keys().sign_rpm(Signer::Other, upstream_ / kSmallHref);
        test_keys().sign_rpm(Signer::Expired, upstream_ / kDocsHref);
        test_keys().sign_rpm(Signer::Good, upstream_ / kDataHref);
        std::string bytes = read_file(upstream_ / kDataHref);
        bytes[bytes.size() - 100] = static_cast<char>(bytes[bytes.size() - 100] ^ 0x55);
        TempDir::write_at(upstream_ / kDataHref, bytes);
        recreate_repo(upstream_, "1704067200", tmp_ / "logs");
        revisions_ = {upstream_};
    }

    void make_upstream_signed() {
        for (const std::string& package :
             {kTinyHref, kSmallHref, kMediumHref, kDocsHref, kDataHref}) {
            test_keys().sign_rpm(Signer::Good, upstream_ / package);
        }
        recreate_repo(upstream_, "1704067200", tmp_ / "logs");
    }

    // The options of a checked sync: gpgcheck on for the --repofrompath repository, its keys.
    static std::vector<std::string> checked(std::vector<std::string> extra = {}) {
        std::vector<std::string> args{"--gpgcheck", "--gpgcheck-keys=repo", "--download-metadata",
                                      "--setopt=sample.gpgcheck=1",
                                      "--setopt=sample.gpgkey=file://" +
                                          test_keys().key_file(Signer::Good).string() + " file://" +
                                          test_keys().key_file(Signer::Expired).string()};
        args.insert(args.end(), extra.begin(), extra.end());
        return args;
    }

    // The package URIs nginx served so far.
    std::vector<std::string> package_requests() const {
        std::vector<std::string> uris;
        for (const nlohmann::json& entry : server_->access_log()) {
            const std::string uri = entry.value("uri", "");
            if (uri.starts_with("/Packages/")) {
                uris.push_back(uri);
            }
        }
        return uris;
    }

    // The line of `err` about package `nevra` ("sample: NEVRA: ..."), empty iff none.
    static std::string line_for(const std::string& err, const std::string& nevra) {
        for (const std::string& line : lines_of(err)) {
            if (line.starts_with("sample: " + nevra)) {
                return line;
            }
        }
        return {};
    }
};

TEST_F(S3GpgcheckTest, PackagesWithAVerdictAgainstThemNeverReachTheBucket) {
    make_upstream_mixed();
    const CommandResult result = sync(checked());
    EXPECT_EQ(result.exit_code, 1) << result.err;
    const auto listed = objects();
    EXPECT_TRUE(listed.contains(kTinyHref));
    // Signed by a key that expired after it signed: no verdict, uploaded (and an error).
    EXPECT_TRUE(listed.contains(kDocsHref));
    for (const std::string& removed : {kSmallHref, kMediumHref, kDataHref}) {
        EXPECT_FALSE(listed.contains(removed)) << removed;
    }
    EXPECT_NE(line_for(result.err, "rpmirror-sample-medium-1.0-1.noarch")
                  .find("Removing rpmirror-sample-medium-1.0-1.noarch.rpm: Package "
                        "rpmirror-sample-medium-1.0-1.noarch.rpm is not signed ("),
              std::string::npos)
        << result.err;
    EXPECT_NE(line_for(result.err, "rpmirror-sample-small-1.0-1.noarch")
                  .find("signed with key 0x" + test_keys().key_id(Signer::Other)),
              std::string::npos)
        << result.err;
    EXPECT_NE(line_for(result.err, "rpmirror-sample-data-1.0-1.noarch").find("bad signature"),
              std::string::npos)
        << result.err;
    EXPECT_NE(line_for(result.err, "rpmirror-sample-docs-1.0-1.noarch")
                  .find("signature not checked, file kept: "),
              std::string::npos)
        << result.err;
    EXPECT_EQ(line_for(result.err, "rpmirror-sample-tiny-1.0-1.noarch"), "");
    // Metadata that lists them is not published.
    EXPECT_FALSE(listed.contains("repodata/repomd.xml"));
    const nlohmann::json report = repo_report();
    EXPECT_EQ(report.at("signatures_checked").get<std::size_t>(), 5u);
    EXPECT_EQ(report.at("failed").get<std::size_t>(), 4u);
}

TEST_F(S3GpgcheckTest, StoredPackagesAreJudgedOnceAndNeverUploadedAgain) {
    make_upstream_mixed();
    ASSERT_EQ(sync({"--download-metadata"}).exit_code, 0);
    const auto before = objects();
    ASSERT_TRUE(before.contains(kMediumHref));
    auto published = client().get_object(bucket(), key("repodata/repomd.xml"));
    ASSERT_TRUE(published) << published.error().to_string();

    const CommandResult result = sync(checked());
    EXPECT_EQ(result.exit_code, 1) << result.err;
    const auto after = objects();
    // Kept as they were (same ETag: not uploaded again), or deleted on a verdict.
    EXPECT_EQ(after.at(kTinyHref).etag, before.at(kTinyHref).etag);
    EXPECT_EQ(after.at(kDocsHref).etag, before.at(kDocsHref).etag);
    for (const std::string& removed : {kSmallHref, kMediumHref, kDataHref}) {
        EXPECT_FALSE(after.contains(removed)) << removed;
    }
    EXPECT_NE(result.err.find("Removing rpmirror-sample-small-1.0-1.noarch.rpm: "),
              std::string::npos)
        << result.err;
    const nlohmann::json report = repo_report();
    // Fetched again to be judged: that traffic is reported.
    EXPECT_EQ(report.at("kept").get<std::size_t>(), 0u);
    EXPECT_EQ(report.at("signatures_checked").get<std::size_t>(), 5u);
    EXPECT_EQ(report.at("downloaded").get<std::size_t>(), 5u);
    // The published metadata stays as it was.
    auto still = client().get_object(bucket(), key("repodata/repomd.xml"));
    ASSERT_TRUE(still) << still.error().to_string();
    EXPECT_EQ(*still, *published);
    auto state = s3::load_state(client(), s3::S3Location{bucket(), prefix_ + "/sample/"});
    ASSERT_TRUE(state && *state);
    EXPECT_FALSE((*state)->objects.contains(kSmallHref));
    EXPECT_EQ((*state)->signatures_checked, "");
}

TEST_F(S3GpgcheckTest, ACheckedMirrorIsANoopAndItsCheckedPackagesAreNotFetchedAgain) {
    make_upstream_signed();
    const CommandResult first = sync(checked());
    ASSERT_EQ(first.exit_code, 0) << first.err;
    EXPECT_EQ(repo_report().at("signatures_checked").get<std::size_t>(), 5u);
    EXPECT_EQ(package_requests().size(), 5u);
    expect_published_complete("after the checked sync");

    const CommandResult again = sync(checked());
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_TRUE(repo_report().at("noop").get<bool>()) << again.out;

    // A new revision of the same packages: what the state says was checked is not fetched again.
    recreate_repo(upstream_, "2", tmp_ / "logs");
    revisions_ = {upstream_};
    const auto objects_before = objects();
    const CommandResult revised = sync(checked());
    ASSERT_EQ(revised.exit_code, 0) << revised.err;
    EXPECT_EQ(package_requests().size(), 5u);
    EXPECT_EQ(repo_report().at("kept").get<std::size_t>(), 5u);
    EXPECT_EQ(objects().at(kTinyHref).etag, objects_before.at(kTinyHref).etag);
    expect_published_complete("after the new revision");

    // A run without --gpgcheck that uploads a package leaves the state unvouched: the next
    // checked run judges every package again.
    ASSERT_TRUE(client().delete_object(bucket(), key(kTinyHref)));
    ASSERT_EQ(sync({"--download-metadata"}).exit_code, 0);
    const std::size_t served = package_requests().size();
    const CommandResult rechecked = sync(checked());
    ASSERT_EQ(rechecked.exit_code, 0) << rechecked.err;
    EXPECT_EQ(package_requests().size(), served + 5);
    EXPECT_EQ(repo_report().at("signatures_checked").get<std::size_t>(), 5u);
}

}  // namespace
}  // namespace rpmirror::test
