// --upstream-layout refused where it does not apply: the error that names the option, and
// the combinations refused before anything is written (the fixture: upstream_layout_fixture.hpp).
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

// Amazon Linux's own .repo (its yum-plugin keys, gpgcheck with a local key, $basearch), synced
// as a plain repository: no warning about the file, and one failure for the repository (not
// one per package, not one package's) naming the href and both options that mirror it; nothing
// written.
TEST_F(UpstreamLayout, WithoutTheOptionTheErrorSaysWhichOptionMirrorsIt) {
    TempDir::write_at(tmp_ / "amazon-reposd" / "amazonlinux.repo",
                      "[amazonlinux]\nname=Amazon Linux 2023 repository\nmirrorlist=" +
                          upstream_server_->url("/al2023/core/mirrors/") +
                          "$releasever/$basearch/mirror.list\npriority=10\n"
                          "fastestmirror_enabled=0\nreport_instanceid=yes\n"
                          "gpgkey=file:///etc/pki/rpm-gpg/RPM-GPG-KEY-amazon-linux-2023\n"
                          "gpgcheck=1\nrepo_gpgcheck=0\ntype=rpm\n");
    const CommandResult plain =
        sync({"--reposdir", (tmp_ / "amazon-reposd").string(), "--releasever", "1.0", "--basearch",
              "x86_64", "-p", (tmp_ / "mirror").string(), "--download-metadata"});
    EXPECT_EQ(plain.exit_code, 1) << plain.out << plain.err;
    EXPECT_EQ(plain.err.find("unknown key"), std::string::npos) << plain.err;
    const auto count = [&](const std::string& what) {
        std::size_t found = 0;
        for (std::size_t at = plain.err.find(what); at != std::string::npos;
             at = plain.err.find(what, at + 1)) {
            ++found;
        }
        return found;
    };
    EXPECT_EQ(count("FAILED"), 1U) << plain.err;
    EXPECT_EQ(count("escapes the repository root"), 1U) << plain.err;
    EXPECT_EQ(count("--upstream-layout"), 1U) << plain.err;
    EXPECT_NE(plain.err.find("amazonlinux: FAILED: repository 'amazonlinux': href "
                             "'../../../../../blobstore/"),
              std::string::npos)
        << plain.err;
    EXPECT_NE(plain.err.find("the mirror is left as it was"), std::string::npos) << plain.err;
    EXPECT_NE(plain.err.find("--upstream-layout (upstream's layout kept under -p/amazonlinux/) "
                             "or --flatten-hrefs"),
              std::string::npos)
        << plain.err;
    EXPECT_FALSE(fs::exists(tmp_ / "mirror" / "amazonlinux" / "repodata"));
    EXPECT_FALSE(fs::exists(tmp_ / "mirror" / "blobstore"));
    EXPECT_FALSE(fs::exists(mirror_root() / "blobstore"));
}

TEST_F(UpstreamLayout, BadCombinationsAreRefusedBeforeAnythingIsWritten) {
    const std::string destination = (tmp_ / "mirror").string();
    const std::string repos = (tmp_ / "reposd").string();
    struct Case {
        std::vector<std::string> args;
        std::string message;
    };
    const std::vector<Case> cases{
        {{"--mirror-url", "http://m/"}, "--mirror-url needs --upstream-layout"},
        {{"--releasever", "2.0"}, "several releases are mirrored in one run only with"},
        {{"--upstream-layout", "--mirror-url", "ftp://m/"}, "not an http://, https:// or file:///"},
        {{"--upstream-layout", "--mirror-url", "http:///x"},
         "not an http://, https:// or file:///"},
        {{"--upstream-layout", "--metadata-path", (tmp_ / "meta").string()},
         "--upstream-layout with --metadata-path"},
        {{"--upstream-layout", "--safe-write-path", destination},
         "--upstream-layout with --safe-write-path"},
        {{"--upstream-layout", "--flatten-hrefs"}, "--flatten-hrefs with --upstream-layout"},
        {{"--upstream-layout", "--keep-releases", "2"}, "needs --upstream-layout and --delete"},
        {{"--delete", "--keep-releases", "2"}, "needs --upstream-layout and --delete"},
        {{"--upstream-layout", "--delete", "--keep-releases", "1", "--releasever", "2.0"},
         "2 releases given with --releasever, but only 1 kept"},
        {{"--flatten-hrefs", "--download-metadata", "--upstream-metadata"},
         "--flatten-hrefs with --upstream-metadata"},
    };
    for (const Case& c : cases) {
        std::vector<std::string> args{"--reposdir", repos,       "--repo",       "amzn",
                                      "-p",         destination, "--releasever", "1.0"};
        args.insert(args.end(), c.args.begin(), c.args.end());
        const CommandResult refused = sync(args);
        EXPECT_EQ(refused.exit_code, 2) << refused.err;
        EXPECT_NE(refused.err.find(c.message), std::string::npos) << refused.err;
    }
    // A bucket has no outside for --safe-write-path to allow.
    const CommandResult s3 =
        sync({"--reposdir", repos, "--repo", "amzn", "-p", "s3://bucket/m", "--upstream-layout",
              "--safe-write-path", destination, "--releasever", "1.0"});
    EXPECT_EQ(s3.exit_code, 2) << s3.err;
    EXPECT_NE(s3.err.find("--upstream-layout with --safe-write-path"), std::string::npos) << s3.err;
    EXPECT_FALSE(fs::exists(mirror_root() / "al2023"));
    EXPECT_FALSE(fs::exists(tmp_ / "meta"));
}

}  // namespace
}  // namespace rpmirror::test
