// Clients other than dnf read what rpmirror makes: openSUSE's zypper (libzypp: its own
// downloader, its own rpm-md parser, its own check of repomd.xml.asc), Debian's zypper unpacked
// privately (scripts/fetch-zypper), refreshes, lists and downloads over HTTP from a full mirror,
// a filtered one with rewritten metadata, a signed one (and refuses it once tampered with), a
// snapshot, and an Amazon-shaped mirror (--upstream-layout); createrepo_c's mergerepo_c and
// libsolv's repomdxml2solv/rpmmd2solv read the mirror too. What zypper lists is compared with
// what dnf lists from the same mirror.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "integration/sync/sync_fixture.hpp"
#include "support/signing.hpp"
#include "support/zypper.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

class Zypper : public SyncFixture {
  protected:
    void SetUp() override {
        SyncFixture::SetUp();
        zypper_ = zypper_binary();
        ASSERT_TRUE(fs::exists(zypper_)) << zypper_;
    }

    // Runs zypper non-interactively in its own root `root` (its repositories, cache, rpm
    // database), with `args`.
    CommandResult zypper(const fs::path& root, const std::vector<std::string>& args) {
        std::vector<std::string> argv{zypper_.string(), "--root", root.string(),
                                      "--non-interactive"};
        argv.insert(argv.end(), args.begin(), args.end());
        return run_to_end(argv, tmp_ / "logs");
    }

    // A fresh zypper root with the repository `url` as "mir" (signature checks on iff `gpg`),
    // refreshed. Returns the refresh.
    CommandResult add_and_refresh(const fs::path& root, const std::string& url, bool gpg) {
        fs::create_directories(root);
        std::vector<std::string> add{"addrepo", "-f"};
        if (!gpg) {
            add.insert(add.begin(), "--no-gpg-checks");
        } else {
            add.push_back("-g");
        }
        add.insert(add.end(), {url, "mir"});
        const CommandResult added = zypper(root, add);
        EXPECT_EQ(added.exit_code, 0) << added.out << added.err;
        std::vector<std::string> refresh;
        if (!gpg) {
            refresh.push_back("--no-gpg-checks");
        }
        refresh.push_back("refresh");
        return zypper(root, refresh);
    }

    // "name-evr.arch" of every package `zypper packages -r mir` lists, sorted.
    std::vector<std::string> zypper_lists(const fs::path& root) {
        const CommandResult listed = zypper(root, {"--no-gpg-checks", "packages", "-r", "mir"});
        EXPECT_EQ(listed.exit_code, 0) << listed.out << listed.err;
        std::vector<std::string> packages;
        for (const std::string& line : lines_of(listed.out)) {
            // "S | Repository | Name | Version | Arch"
            std::vector<std::string> columns;
            std::size_t start = 0;
            while (true) {
                const std::size_t bar = line.find('|', start);
                std::string column = line.substr(start, bar - start);
                column.erase(0, column.find_first_not_of(' '));
                column.erase(column.find_last_not_of(' ') + 1);
                columns.push_back(column);
                if (bar == std::string::npos) {
                    break;
                }
                start = bar + 1;
            }
            if (columns.size() == 5 && columns[1] == "mir") {
                packages.push_back(columns[2] + "-" + columns[3] + "." + columns[4]);
            }
        }
        std::sort(packages.begin(), packages.end());
        return packages;
    }

    // "name-evr.arch" of every binary package dnf lists from the repository at `url` for this
    // machine's architectures (x86_64, i686, noarch: zypper lists no other), sorted.
    std::vector<std::string> dnf_lists(const std::string& url) {
        std::vector<std::string> argv = isolated_dnf(tmp_ / ("dnf-" + std::to_string(++runs_)));
        argv.insert(argv.end(), {"--repofrompath=m," + url, "--repo=m", "repoquery", "-a", "--qf",
                                 "%{name}-%{evr}.%{arch}"});
        const CommandResult query = run_to_end(argv, tmp_ / "logs");
        EXPECT_EQ(query.exit_code, 0) << query.err;
        std::vector<std::string> packages;
        for (const std::string& line : lines_of(query.out)) {
            if (line.ends_with(".x86_64") || line.ends_with(".i686") || line.ends_with(".noarch")) {
                packages.push_back(line);
            }
        }
        std::sort(packages.begin(), packages.end());
        return packages;
    }

    // zypper downloads the best candidate of every name of `packages` ("name-evr.arch") into
    // its cache: one .rpm per name, its checksum checked by zypper.
    void expect_downloads(const fs::path& root, const std::vector<std::string>& packages) {
        std::set<std::string> names;
        for (const std::string& package : packages) {
            std::string name = package.substr(0, package.rfind('.'));
            name = name.substr(0, name.rfind('-'));
            name = name.substr(0, name.rfind('-'));
            names.insert(name);
        }
        ASSERT_FALSE(names.empty());
        std::vector<std::string> args{"--no-gpg-checks", "download"};
        args.insert(args.end(), names.begin(), names.end());
        const CommandResult downloaded = zypper(root, args);
        EXPECT_EQ(downloaded.exit_code, 0) << downloaded.out << downloaded.err;
        // Beneath its root: where hrefs climb, zypper's cache path climbs with them.
        std::size_t files = 0;
        for (const auto& entry : fs::recursive_directory_iterator(root)) {
            files += entry.path().extension() == ".rpm" ? 1 : 0;
        }
        EXPECT_EQ(files, names.size()) << downloaded.out;
    }

    CommandResult mirror(const std::vector<std::string>& extra,
                         const std::vector<std::string>& env = {}) {
        if (upstream_server_ == nullptr) {
            upstream_server_ = &serve(test_repo("index-repo"));
        }
        std::vector<std::string> args{"-c",
                                      (tmp_ / "empty.conf").string(),
                                      "--reposdir",
                                      (tmp_ / "empty-reposdir").string(),
                                      "--repofrompath",
                                      "idx," + upstream_server_->url("/"),
                                      "--repo",
                                      "idx",
                                      "-p",
                                      (tmp_ / "mirror").string(),
                                      "--download-metadata",
                                      "--state-dir",
                                      (tmp_ / "state").string()};
        args.insert(args.end(), extra.begin(), extra.end());
        std::vector<std::string> argv{"env"};
        argv.insert(argv.end(), env.begin(), env.end());
        const std::vector<std::string> sync_argv = rpmirror_sync_argv(args);
        argv.insert(argv.end(), sync_argv.begin(), sync_argv.end());
        return run_to_end(argv, tmp_ / "logs");
    }

    // The mirror's directory served over HTTP (started once).
    std::string mirror_url(const std::string& path) {
        if (mirror_server_ == nullptr) {
            fs::create_directories(tmp_ / "mirror");
            mirror_server_ = &serve(tmp_ / "mirror");
        }
        return mirror_server_->url(path);
    }

    fs::path zypper_;
    NginxServer* upstream_server_ = nullptr;
    NginxServer* mirror_server_ = nullptr;
    int runs_ = 0;
};

TEST_F(Zypper, RefreshesListsAndDownloadsAFullMirror) {
    const CommandResult synced = mirror({});
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    const std::string url = mirror_url("/idx/");
    const CommandResult refreshed = add_and_refresh(tmp_ / "zroot", url, false);
    ASSERT_EQ(refreshed.exit_code, 0) << refreshed.out << refreshed.err;
    const std::vector<std::string> listed = zypper_lists(tmp_ / "zroot");
    EXPECT_EQ(listed, dnf_lists(url));
    EXPECT_GE(listed.size(), 8U);
    expect_downloads(tmp_ / "zroot", listed);
}

TEST_F(Zypper, ListsExactlyWhatAFilteredMirrorHolds) {
    const CommandResult synced = mirror({"-a", "x86_64,noarch"});
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    const std::string url = mirror_url("/idx/");
    const CommandResult refreshed = add_and_refresh(tmp_ / "zroot", url, false);
    ASSERT_EQ(refreshed.exit_code, 0) << refreshed.out << refreshed.err;
    const std::vector<std::string> listed = zypper_lists(tmp_ / "zroot");
    EXPECT_EQ(listed, dnf_lists(url));
    for (const std::string& package : listed) {
        EXPECT_TRUE(package.ends_with(".x86_64") || package.ends_with(".noarch")) << package;
    }
    expect_downloads(tmp_ / "zroot", listed);
}

// A filtered mirror signed with --sign-key: zypper, trusting the key through its rpm database,
// checks repomd.xml.asc on refresh; once repomd.xml is changed it refuses the repository.
TEST_F(Zypper, ChecksTheSignatureOfASignedMirrorAndRefusesATamperedOne) {
    if (!signing_tools_available()) {
        GTEST_FAIL() << "gpg and rpmsign are needed (scripts/deps)";
    }
    const CommandResult synced =
        mirror({"-a", "x86_64,noarch", "--sign-key", test_keys().key_id(Signer::Good)},
               {"GNUPGHOME=" + test_keys().home().string()});
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    ASSERT_TRUE(fs::exists(tmp_ / "mirror/idx/repodata/repomd.xml.asc"));
    const fs::path root = tmp_ / "zroot";
    fs::create_directories(root);
    run_checked(
        {"rpm", "--root", root.string(), "--import", test_keys().key_file(Signer::Good).string()},
        tmp_ / "logs");
    const std::string url = mirror_url("/idx/");
    const CommandResult refreshed = add_and_refresh(root, url, true);
    ASSERT_EQ(refreshed.exit_code, 0) << refreshed.out << refreshed.err;
    EXPECT_EQ(zypper_lists(root), dnf_lists(url));

    std::string repomd = read_file(tmp_ / "mirror/idx/repodata/repomd.xml");
    const std::size_t revision = repomd.find("<revision>");
    ASSERT_NE(revision, std::string::npos);
    repomd.insert(revision + std::string("<revision>").size(), "tampered-");
    TempDir::write_at(tmp_ / "mirror/idx/repodata/repomd.xml", repomd);
    const CommandResult refused = zypper(root, {"refresh", "-f"});
    EXPECT_NE(refused.exit_code, 0) << refused.out;
    EXPECT_NE((refused.out + refused.err).find("Signature verification failed"), std::string::npos)
        << refused.out << refused.err;
}

TEST_F(Zypper, ReadsASnapshot) {
    const CommandResult synced = mirror({"--snapshot=s1"});
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    ASSERT_TRUE(fs::exists(tmp_ / "mirror/snapshots/idx/s1/repodata/repomd.xml"));
    const std::string url = mirror_url("/snapshots/idx/s1/");
    const CommandResult refreshed = add_and_refresh(tmp_ / "zroot", url, false);
    ASSERT_EQ(refreshed.exit_code, 0) << refreshed.out << refreshed.err;
    const std::vector<std::string> listed = zypper_lists(tmp_ / "zroot");
    EXPECT_EQ(listed, dnf_lists(mirror_url("/idx/")));
    expect_downloads(tmp_ / "zroot", listed);
}

// An Amazon-shaped upstream (a release whose hrefs climb into a blobstore beside it) mirrored
// with --upstream-layout: zypper follows the climbing hrefs on the mirror over HTTP; and with
// --flatten-hrefs, a plain repository zypper reads from a file:// URL.
TEST_F(Zypper, ReadsAnUpstreamLayoutMirror) {
    const fs::path upstream = tmp_ / "amazon";
    for (const auto& [path, digest] : package_digests(test_repo("index-repo"))) {
        const fs::path blob = upstream / "blobstore" / digest / fs::path(path).filename();
        fs::create_directories(blob.parent_path());
        fs::copy_file(test_repo("index-repo") / path, blob);
    }
    const fs::path release = upstream / "core/guids/G/x86_64";
    fs::create_directories(release);
    run_checked(
        {"createrepo_c", "--quiet", "--no-database", "--location-prefix", "../../../../blobstore/",
         "--outputdir", release.string(), (upstream / "blobstore").string()},
        tmp_ / "logs");
    NginxServer& amazon = serve(upstream);
    const CommandResult synced =
        sync({"--repofrompath", "amzn," + amazon.url("/core/guids/G/x86_64/"), "--repo", "amzn",
              "-p", (tmp_ / "mirror").string(), "--download-metadata", "--upstream-layout",
              "--state-dir", (tmp_ / "state").string()});
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    const std::string url = mirror_url("/amzn/core/guids/G/x86_64/");
    const CommandResult refreshed = add_and_refresh(tmp_ / "zroot", url, false);
    ASSERT_EQ(refreshed.exit_code, 0) << refreshed.out << refreshed.err;
    const std::vector<std::string> listed = zypper_lists(tmp_ / "zroot");
    EXPECT_EQ(listed, dnf_lists(url));
    expect_downloads(tmp_ / "zroot", listed);

    // The same release flattened (--flatten-hrefs): a plain repository, read over file:// too.
    const CommandResult flattened =
        sync({"--repofrompath", "flat," + amazon.url("/core/guids/G/x86_64/"), "--repo", "flat",
              "-p", (tmp_ / "mirror").string(), "--download-metadata", "--flatten-hrefs",
              "--state-dir", (tmp_ / "state").string()});
    ASSERT_EQ(flattened.exit_code, 0) << flattened.out << flattened.err;
    const std::string flat_url = "file://" + (tmp_ / "mirror" / "flat").string();
    const CommandResult flat_refreshed = add_and_refresh(tmp_ / "zroot-flat", flat_url, false);
    ASSERT_EQ(flat_refreshed.exit_code, 0) << flat_refreshed.out << flat_refreshed.err;
    const std::vector<std::string> flat_listed = zypper_lists(tmp_ / "zroot-flat");
    EXPECT_EQ(flat_listed, listed);
    expect_downloads(tmp_ / "zroot-flat", flat_listed);
}

// createrepo_c's mergerepo_c merges a full and a filtered mirror; libsolv's repomdxml2solv and
// rpmmd2solv read the mirror's metadata (dumpsolv counts the packages).
TEST_F(Zypper, MergerepoAndLibsolvReadTheMirror) {
    ASSERT_EQ(mirror({}).exit_code, 0);
    const CommandResult filtered =
        run_to_end(rpmirror_sync_argv({"-c", (tmp_ / "empty.conf").string(), "--reposdir",
                                       (tmp_ / "empty-reposdir").string(), "--repofrompath",
                                       "idx," + upstream_server_->url("/"), "--repo", "idx", "-p",
                                       (tmp_ / "filtered").string(), "--download-metadata", "-a",
                                       "noarch", "--state-dir", (tmp_ / "state").string()}),
                   tmp_ / "logs");
    ASSERT_EQ(filtered.exit_code, 0) << filtered.err;
    const CommandResult merged =
        run_to_end({"mergerepo_c", "--repo", "file://" + (tmp_ / "mirror/idx").string(), "--repo",
                    "file://" + (tmp_ / "filtered/idx").string(), "-o", (tmp_ / "merged").string()},
                   tmp_ / "logs");
    ASSERT_EQ(merged.exit_code, 0) << merged.out << merged.err;
    EXPECT_TRUE(fs::exists(tmp_ / "merged/repodata/repomd.xml"));

    const fs::path repodata = tmp_ / "mirror/idx/repodata";
    const CommandResult repomd =
        run_to_end({"sh", "-c", "repomdxml2solv < \"$0\" > \"$1\"",
                    (repodata / "repomd.xml").string(), (tmp_ / "repomd.solv").string()},
                   tmp_ / "logs");
    EXPECT_EQ(repomd.exit_code, 0) << repomd.err;
    EXPECT_GT(fs::file_size(tmp_ / "repomd.solv"), 0U);
    const CommandResult primary = run_to_end(
        {"sh", "-c", "gzip -dc < \"$0\" | rpmmd2solv > \"$1\" && dumpsolv \"$1\"",
         only_file_ending(repodata, "-primary.xml.gz").string(), (tmp_ / "primary.solv").string()},
        tmp_ / "logs");
    ASSERT_EQ(primary.exit_code, 0) << primary.err;
    std::size_t solvables = 0;
    for (const std::string& line : lines_of(primary.out)) {
        solvables += line.starts_with("solvable ") ? 1 : 0;
    }
    EXPECT_EQ(solvables, package_digests(test_repo("index-repo")).size());
}

}  // namespace
}  // namespace rpmirror::test
