// S3SyncTest: `rpmirror sync -p s3://BUCKET/PREFIX` from a real repository (rpmbuild +
// createrepo_c) served by real nginx into a real Ceph RADOS Gateway; each test gets a prefix of
// its own. Shared by the S3 sync test files.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "integration/s3/ceph_fixture.hpp"
#include "integration/sync/sync_harness.hpp"
#include "metadata/metadata.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "s3/config.hpp"
#include "s3/mirror_state.hpp"
#include "support/nginx.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror::test {

class S3SyncTest : public CephS3Test {
  protected:
    void SetUp() override {
        CephS3Test::SetUp();
        if (!nginx_available()) {
            GTEST_FAIL() << kNginxMissing;
        }
        for (const auto& [name, value] : cluster().env()) {
            ::setenv(name.c_str(), value.c_str(), 1);
        }
        std::filesystem::create_directories(tmp_ / "empty-reposdir");
        TempDir::write_at(tmp_ / "empty.conf", "[main]\n");
        // A prefix of its own: a bucket outlives a run of the tests.
        prefix_ = "run-" + std::to_string(::getpid()) + "-" + std::to_string(++runs_);
        upstream_ = copy_repo(test_repo("sample-repo"), tmp_ / "upstream");
        server_ = std::make_unique<NginxServer>(upstream_, tmp_ / "nginx");
        repo_url_ = server_->url("/");
        revisions_ = {upstream_};
    }

    // "s3://BUCKET/PREFIX"
    std::string destination() const { return "s3://" + bucket() + "/" + prefix_; }
    // The key of `relative` in the mirrored repository "sample".
    std::string key(const std::string& relative) const { return prefix_ + "/sample/" + relative; }

    CommandResult sync(std::vector<std::string> extra, const std::string& fault = {}) {
        return sync_to(destination(), std::move(extra), fault);
    }

    // Runs `rpmirror sync` of the repository "sample" to `s3_url` with `extra` options, and the
    // test seam RPMIRROR_FAULT=`fault` iff it is not empty.
    CommandResult sync_to(const std::string& s3_url, std::vector<std::string> extra,
                          const std::string& fault = {}) {
        if (!fault.empty()) {
            ::setenv("RPMIRROR_FAULT", fault.c_str(), 1);
        }
        CommandResult result = run_to_end(sync_argv(s3_url, std::move(extra)), tmp_ / "logs");
        ::unsetenv("RPMIRROR_FAULT");
        return result;
    }

    // The command line of `rpmirror sync` of "sample" to `s3_url` with `extra`, its JSON report
    // written to `report` (default: where repo_report() reads it).
    std::vector<std::string> sync_argv(const std::string& s3_url, std::vector<std::string> extra,
                                       std::filesystem::path report = {}) {
        if (report.empty()) {
            report = tmp_ / "report.json";
        }
        std::vector<std::string> args{"-c",
                                      (tmp_ / "empty.conf").string(),
                                      "--reposdir",
                                      (tmp_ / "empty-reposdir").string(),
                                      "--repofrompath",
                                      "sample," + repo_url_,
                                      "--repo",
                                      "sample",
                                      "-p",
                                      s3_url,
                                      "--json",
                                      report.string()};
        args.insert(args.end(), extra.begin(), extra.end());
        return rpmirror_sync_argv(args);
    }

    nlohmann::json repo_report() const {
        return nlohmann::json::parse(read_file(tmp_ / "report.json")).at("repositories").at(0);
    }

    // Every object of the mirrored repository, by key relative to it.
    std::map<std::string, s3::ListedObject> objects() {
        s3::S3Location repo{bucket(), prefix_ + "/sample/"};
        auto listed = s3::list_mirror(client(), repo);
        EXPECT_TRUE(listed) << listed.error().to_string();
        return listed ? *listed : std::map<std::string, s3::ListedObject>{};
    }

    // Asserts the publish guarantee: iff repodata/repomd.xml is in the bucket, every record it
    // lists is there with its size, and every package of `upstream` too.
    void expect_published_complete(const std::string& when) {
        const auto listed = objects();
        const auto repomd = listed.find("repodata/repomd.xml");
        if (repomd == listed.end()) {
            return;
        }
        auto body = client().get_object(bucket(), key("repodata/repomd.xml"));
        ASSERT_TRUE(body) << body.error().to_string();
        auto parsed = parse_repomd(*body, "repomd.xml");
        ASSERT_TRUE(parsed) << when;
        for (const RepomdRecord& record : parsed->records) {
            const auto found = listed.find(record.location_href);
            ASSERT_NE(found, listed.end()) << when << ": " << record.location_href;
            if (record.size) {
                EXPECT_EQ(found->second.size, *record.size) << when << ": " << record.location_href;
            }
        }
        // The packages of the upstream revision whose repomd.xml is published.
        std::filesystem::path revision;
        for (const std::filesystem::path& candidate : revisions_) {
            if (read_file(candidate / "repodata" / "repomd.xml") == *body) {
                revision = candidate;
            }
        }
        ASSERT_FALSE(revision.empty()) << when << ": the published repomd.xml is no upstream's";
        for (const auto& [path, digest] : package_digests(revision)) {
            const auto found = listed.find(path);
            ASSERT_NE(found, listed.end()) << when << ": " << path;
            EXPECT_EQ(found->second.size, std::filesystem::file_size(revision / path))
                << when << ": " << path;
        }
    }

    // Builds a real 12 MiB package (incompressible, stored uncompressed) into upstream_'s
    // Packages/ and makes a new revision ("2") of upstream_'s metadata. Returns its path
    // relative to the repository.
    std::string add_big_package() {
        const std::filesystem::path top = tmp_ / "rpmbuild";
        const auto spec = TempDir::write_at(
            tmp_ / "big.spec",
            "Name: rpmirror-big\nVersion: 1.0\nRelease: 1\nSummary: big\nLicense: MIT\n"
            "BuildArch: noarch\n%description\nbig\n%install\nmkdir -p %{buildroot}/usr/share/big\n"
            "head -c 12582912 /dev/urandom > %{buildroot}/usr/share/big/blob\n"
            "%files\n/usr/share/big/blob\n");
        run_checked({"rpmbuild", "--quiet", "-bb", "--define", "_topdir " + top.string(),
                     "--define", "_binary_payload w0.ufdio", spec.string()},
                    tmp_ / "logs");
        const std::string name = "rpmirror-big-1.0-1.noarch.rpm";
        std::filesystem::copy_file(top / "RPMS" / "noarch" / name, upstream_ / "Packages" / name);
        recreate_repo(upstream_, "2", tmp_ / "logs");
        return "Packages/" + name;
    }

    TempDir tmp_;
    std::string prefix_;
    std::filesystem::path upstream_;
    std::unique_ptr<NginxServer> server_;
    std::string repo_url_;  // where sync() mirrors from
    // The upstream revisions a published repomd.xml may be (expect_published_complete).
    std::vector<std::filesystem::path> revisions_;
    static inline int runs_ = 0;
};

}  // namespace rpmirror::test
