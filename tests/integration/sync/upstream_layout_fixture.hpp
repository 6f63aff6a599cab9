// UpstreamLayout: an Amazon-Linux-shaped upstream (releases as GUID directories sharing one
// blobstore, a mirror.list per release) served by nginx, and the helpers its tests share.
#pragma once

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
#include "rpmirror/checksum/checksum.hpp"

namespace rpmirror::test {

namespace fs = std::filesystem;

class UpstreamLayout : public SyncFixture {
  protected:
    void SetUp() override {
        SyncFixture::SetUp();
        // The blobstore: every package of index-repo at blobstore/<sha256>/<name>.rpm.
        const std::vector<std::string> blobs =
            make_blobstore(test_repo("index-repo") / "Packages", upstream(), tmp_ / "logs");
        ASSERT_GE(blobs.size(), 11U);
        // Release 1.0 lists blobs 0-7, release 2.0 blobs 2-10: six shared.
        release("1.0", "G1", {blobs.begin(), blobs.begin() + 8});
        release("2.0", "G2", {blobs.begin() + 2, blobs.begin() + 11});
        upstream_server_ = &serve(upstream());
        for (const auto& [releasever, guid] : {std::pair{"1.0", "G1"}, std::pair{"2.0", "G2"}}) {
            TempDir::write_at(
                upstream() / "al2023/core/mirrors" / releasever / "x86_64/mirror.list",
                upstream_server_->url("/al2023/core/guids/" + std::string(guid) + "/x86_64/") +
                    "\n");
        }
        TempDir::write_at(tmp_ / "reposd" / "amzn.repo",
                          "[amzn]\nname=Amazon-shaped\nmirrorlist=" +
                              upstream_server_->url("/al2023/core/mirrors/") +
                              "$releasever/x86_64/mirror.list\ngpgcheck=0\n");
        fs::create_directories(mirror_root());
        mirror_server_ = &serve(mirror_root());
    }

    fs::path upstream() const { return tmp_ / "upstream"; }
    fs::path mirror_root() const { return tmp_ / "mirror" / "amzn"; }

    // A release: a GUID directory whose metadata lists `blobs` by hrefs climbing to the root.
    void release(const std::string& releasever, const std::string& guid,
                 const std::vector<std::string>& blobs) {
        make_release(upstream(), guid, blobs, tmp_.path());
        released_[releasever] = blobs;
    }

    CommandResult mirror(const std::string& releasever, std::vector<std::string> extra = {}) {
        std::vector<std::string> args{"--reposdir",
                                      (tmp_ / "reposd").string(),
                                      "--repo",
                                      "amzn",
                                      "--releasever",
                                      releasever,
                                      "-p",
                                      (tmp_ / "mirror").string(),
                                      "--download-metadata",
                                      "--upstream-layout",
                                      "--mirror-url",
                                      mirror_server_->url("/")};
        args.insert(args.end(), extra.begin(), extra.end());
        return sync(args);
    }

    // The blob GETs upstream saw since entry `skip` of its log, sorted.
    std::vector<std::string> blob_requests(std::size_t skip) {
        return package_uris(uris_since(*upstream_server_, skip), "/blobstore/");
    }

    // `dnf repoquery -a` of release `releasever` through the mirror's own mirror.list.
    std::vector<std::string> dnf_lists(const std::string& releasever) {
        const fs::path work = tmp_ / ("dnf-" + releasever + "-" + std::to_string(++dnf_runs_));
        const CommandResult query =
            dnf_query_locations(work, mirror_server_->url("/"), releasever, tmp_ / "logs");
        EXPECT_EQ(query.exit_code, 0) << query.out << query.err;
        std::vector<std::string> locations = lines_of(query.out);
        std::sort(locations.begin(), locations.end());
        return locations;
    }

    // `dnf install --downloadonly` of the first x86_64 or noarch package release `releasever`
    // lists (its NEVRA), through the mirror's own mirror.list, into a root of its own: the .rpm
    // files it fetched, by name.
    std::vector<std::string> dnf_installs(const std::string& releasever) {
        std::string nevra;
        for (const std::string& blob : released_[releasever]) {
            if (blob.ends_with(".x86_64.rpm") || blob.ends_with(".noarch.rpm")) {
                nevra = blob.substr(65, blob.size() - 65 - 4);  // after "<sha256>/", no ".rpm"
                break;
            }
        }
        EXPECT_FALSE(nevra.empty()) << "release " << releasever << " lists no installable package";
        const fs::path work = tmp_ / ("install-" + releasever + "-" + std::to_string(++dnf_runs_));
        std::vector<std::string> argv = dnf_through_mirror_list(work, mirror_server_->url("/"));
        argv.insert(argv.end(),
                    {"--releasever=" + releasever, "--disableplugin=*", "install", "--downloadonly",
                     "--installroot", (work / "root").string(), "--setopt=keepcache=1", nevra});
        const CommandResult install = run_to_end(argv, tmp_ / "logs");
        EXPECT_EQ(install.exit_code, 0) << install.out << install.err;
        std::vector<std::string> fetched;
        for (const auto& entry : fs::recursive_directory_iterator(work)) {
            if (entry.path().extension() == ".rpm") {
                fetched.push_back(entry.path().filename().string());
            }
        }
        return fetched;
    }

    // Syncs release `releasever` into the box `box` (its own -p and state directory) with
    // RPMIRROR_FAULT=`fault` ("" = none) and `extra` options.
    CommandResult in_box(const fs::path& box, const std::string& releasever,
                         const std::string& fault, const std::vector<std::string>& extra) {
        std::vector<std::string> args{"-c",
                                      (tmp_ / "empty.conf").string(),
                                      "--reposdir",
                                      (tmp_ / "reposd").string(),
                                      "--repo",
                                      "amzn",
                                      "--releasever",
                                      releasever,
                                      "-p",
                                      (box / "mirror").string(),
                                      "--download-metadata",
                                      "--upstream-layout",
                                      "--state-dir",
                                      (box / "state").string()};
        args.insert(args.end(), extra.begin(), extra.end());
        std::vector<std::string> argv{"env", "RPMIRROR_FAULT=" + fault};
        const std::vector<std::string> sync_argv = rpmirror_sync_argv(args);
        argv.insert(argv.end(), sync_argv.begin(), sync_argv.end());
        return run_to_end(argv, tmp_ / "logs");
    }

    std::vector<std::string> expected_locations(const std::string& releasever) {
        std::vector<std::string> locations;
        for (const std::string& blob : released_[releasever]) {
            locations.push_back("../../../../../blobstore/" + blob);
        }
        std::sort(locations.begin(), locations.end());
        return locations;
    }

    NginxServer* upstream_server_ = nullptr;
    NginxServer* mirror_server_ = nullptr;
    std::map<std::string, std::vector<std::string>> released_;
    int dnf_runs_ = 0;
};

}  // namespace rpmirror::test
