// dnf reading a repository published in a bucket of the real Ceph RADOS Gateway
// (scripts/ceph-s3) over the gateway's plain HTTP, as a mirror admin serves an s3:// mirror: a
// real createrepo_c repository (scripts/make-sample-repo) uploaded object by object with S3Client
// PUTs under the layout of the design (s3://BUCKET/PREFIX/<relative path>), with
// x-amz-acl: public-read so anonymous clients may read it (what `--s3-acl public-read` sends), then
// real `dnf` with --repofrompath http://ENDPOINT/BUCKET/PREFIX/ lists, downloads and installs
// (--downloadonly) its packages. The same repository uploaded without the ACL is refused to dnf:
// the ACL is what makes the gateway serve it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "integration/s3/ceph_fixture.hpp"
#include "integration/sync/sync_harness.hpp"
#include "rpmirror/s3/s3.hpp"
#include "s3/client.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror::test {
namespace {

class S3Dnf : public CephS3Test {
  protected:
    // Uploads every file of the repository `repo` as PREFIX/<path relative to repo> into the
    // test's bucket, with the canned ACL `acl` ("" = none) and its content type.
    void upload_repo(const std::filesystem::path& repo, const std::string& prefix,
                     const std::string& acl) {
        for (const auto& [relative, digest] : tree_digests(repo)) {
            s3::PutOptions options;
            options.acl = acl;
            options.sha256 = digest;
            options.content_type = relative.ends_with(".rpm")   ? "application/x-rpm"
                                   : relative.ends_with(".xml") ? "text/xml"
                                                                : "application/octet-stream";
            const std::string key = prefix + "/" + relative;
            auto stored = client().put_object(bucket(), key, read_file(repo / relative), options);
            ASSERT_TRUE(stored) << stored.error().to_string();
        }
    }

    // The repository PREFIX of the test's bucket as dnf sees it: a plain HTTP base URL on the
    // gateway (path-style addressing, no credentials).
    std::string http_baseurl(const std::string& prefix) const {
        return cluster().endpoint() + "/" + bucket() + "/" + prefix + "/";
    }

    // dnf, isolated from the host (its own config, reposdir, cache under `work`), with the one
    // repository "s3m" at `baseurl`, no signature check (the sample packages are unsigned) and no
    // plugin but `download` (the host's `local` and `versionlock` would refuse `install`).
    CommandResult dnf(const std::filesystem::path& work, const std::string& baseurl,
                      const std::vector<std::string>& args) {
        std::vector<std::string> argv = isolated_dnf(work);
        // dnf install fails (exit 1, no message but this) when it cannot open its hawkey.log.
        std::filesystem::create_directories(work / "log");
        argv.insert(argv.end(), {"--repofrompath=s3m," + baseurl, "--repo=s3m",
                                 "--setopt=s3m.gpgcheck=0", "--setopt=s3m.skip_if_unavailable=0",
                                 "--disableplugin=*", "--enableplugin=download"});
        argv.insert(argv.end(), args.begin(), args.end());
        return run_to_end(argv, tmp_ / "logs");
    }

    TempDir tmp_;
};

TEST_F(S3Dnf, DnfListsDownloadsAndInstallsFromPublicReadObjectsOverTheGatewaysHttp) {
    const std::filesystem::path repo = test_repo("sample-repo");
    upload_repo(repo, "mirror/sample", "public-read");
    if (HasFatalFailure()) {
        return;
    }
    const std::string baseurl = http_baseurl("mirror/sample");

    // Every package of the repository is listed, from the repodata the gateway served.
    const CommandResult query =
        dnf(tmp_ / "query", baseurl, {"repoquery", "-a", "--qf", "%{name}-%{evr}.%{arch}"});
    ASSERT_EQ(query.exit_code, 0) << query.err;
    std::vector<std::string> listed = lines_of(query.out);
    std::sort(listed.begin(), listed.end());
    std::vector<std::string> expected;
    for (const auto& [path, digest] : package_digests(repo)) {
        const std::string file = std::filesystem::path(path).filename().string();
        expected.push_back(file.substr(0, file.size() - std::string(".rpm").size()));
    }
    EXPECT_EQ(listed, expected);

    // Every package downloads through the gateway, byte for byte the repository's.
    const auto download_work = tmp_ / "download";
    const CommandResult download = dnf(
        download_work, baseurl,
        {"download", "--destdir", (download_work / "downloaded").string(), "rpmirror-sample-*"});
    ASSERT_EQ(download.exit_code, 0) << download.err;
    EXPECT_EQ(prefixed(tree_digests(download_work / "downloaded"), "Packages/"),
              package_digests(repo));

    // An install resolves against the mirror and fetches (and checks) the packages it needs.
    const auto install_work = tmp_ / "install";
    const CommandResult install =
        dnf(install_work, baseurl,
            {"install", "--downloadonly", "--installroot", (install_work / "root").string(),
             "--setopt=keepcache=1", "rpmirror-sample-small"});
    ASSERT_EQ(install.exit_code, 0) << install.out << install.err;
    std::map<std::string, std::string> fetched;
    for (const auto& [path, digest] : tree_digests(install_work)) {
        if (path.ends_with(".rpm")) {
            fetched[std::filesystem::path(path).filename().string()] = digest;
        }
    }
    ASSERT_EQ(fetched.size(), 1U) << install.out;
    EXPECT_EQ(fetched.begin()->second,
              package_digests(repo).at("Packages/rpmirror-sample-small-1.0-1.noarch.rpm"));
}

TEST_F(S3Dnf, WithoutPublicReadTheGatewayRefusesDnf) {
    const std::filesystem::path repo = test_repo("sample-repo");
    upload_repo(repo, "private/sample", "");
    if (HasFatalFailure()) {
        return;
    }
    const std::string baseurl = http_baseurl("private/sample");
    // The gateway answers an anonymous GET of a private object 403 (curl: an independent client).
    const CommandResult status = run_to_end(
        {"curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", baseurl + "repodata/repomd.xml"},
        tmp_ / "logs");
    ASSERT_EQ(status.exit_code, 0) << status.err;
    EXPECT_EQ(status.out, "403");
    const CommandResult query = dnf(tmp_ / "query", baseurl, {"repoquery", "-a"});
    EXPECT_NE(query.exit_code, 0) << query.out;
    EXPECT_NE(query.err.find("Cannot download repomd.xml"), std::string::npos) << query.err;
}

}  // namespace
}  // namespace rpmirror::test
