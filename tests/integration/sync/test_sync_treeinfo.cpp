// --treeinfo: installation trees built here and served by nginx. A productmd 1.x tree (two
// variants and an addon, each its own repository; kernel, initrd, install.img and an EFI binary
// listed in [checksums], one path in upper case) is mirrored whole: .treeinfo byte for byte and
// last, every image verified, every repository mirrored and read by dnf; a second run fetches no
// image. A bad image fails the tree (and .treeinfo is not published) unless --skip-bad-images;
// the older anaconda format (the tree's root is the repository) mirrors too; a .treeinfo naming
// a path outside the tree is refused.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "integration/sync/install_tree.hpp"
#include "integration/sync/sync_fixture.hpp"
#include "rpmirror/checksum.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

class Treeinfo : public SyncFixture {
  protected:
    void repository(const fs::path& dir, const std::string& part) {
        make_tree_repository(dir, part, tmp_ / "logs");
    }

    std::string image(const std::string& relative, std::size_t size) {
        return make_tree_image(tree(), relative, size);
    }

    void productmd_tree() { make_productmd_tree(tree(), tmp_ / "logs"); }

    fs::path tree() const { return tmp_ / "upstream" / "tree"; }
    fs::path mirrored() const { return tmp_ / "mirror" / "fl"; }

    CommandResult mirror(std::vector<std::string> extra = {}) {
        if (server_ == nullptr) {
            server_ = &serve(tmp_ / "upstream");
        }
        std::vector<std::string> args{
            "--repofrompath",           "fl," + server_->url("/tree/"), "--repo",    "fl", "-p",
            (tmp_ / "mirror").string(), "--download-metadata",          "--treeinfo"};
        args.insert(args.end(), extra.begin(), extra.end());
        return sync(args);
    }

    // `dnf repoquery -a` over the mirrored repository at `dir` (file://): its NEVRAs, sorted.
    std::vector<std::string> dnf_lists(const fs::path& dir) {
        std::vector<std::string> argv = isolated_dnf(tmp_ / ("dnf-" + std::to_string(++runs_)));
        argv.insert(argv.end(), {"--repofrompath=m,file://" + dir.string(), "--repo=m", "repoquery",
                                 "-a", "--qf", "%{name}-%{evr}.%{arch}"});
        const CommandResult query = run_to_end(argv, tmp_ / "logs");
        EXPECT_EQ(query.exit_code, 0) << query.err;
        std::vector<std::string> lines = lines_of(query.out);
        std::sort(lines.begin(), lines.end());
        return lines;
    }

    NginxServer* server_ = nullptr;
    int runs_ = 0;
};

TEST_F(Treeinfo, AProductmdTreeIsMirroredWholeAndTreeinfoLast) {
    productmd_tree();
    const CommandResult synced = mirror();
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    EXPECT_EQ(read_file(mirrored() / ".treeinfo"), read_file(tree() / ".treeinfo"));
    for (const char* image : {"images/pxeboot/vmlinuz", "images/pxeboot/initrd.img",
                              "images/install.img", "EFI/BOOT/BOOTX64.EFI"}) {
        EXPECT_EQ(read_file(mirrored() / image), read_file(tree() / image)) << image;
    }
    for (const char* repo : {"BaseOS", "AppStream", "addons/HighAvailability"}) {
        EXPECT_EQ(tree_digests(mirrored() / repo), tree_digests(tree() / repo)) << repo;
        EXPECT_EQ(dnf_lists(mirrored() / repo), dnf_lists(tree() / repo)) << repo;
        EXPECT_FALSE(dnf_lists(mirrored() / repo).empty()) << repo;
    }
    EXPECT_FALSE(fs::exists(mirrored() / "repodata"));  // the root is no repository here
    // Each repository of the tree is audited as a repository of the tree's directory.
    const CommandResult verified = run_to_end(
        {rpmirror_binary(), "verify", "-p", mirrored().string(), "--repo", "BaseOS", "-c",
         (tmp_ / "empty.conf").string(), "--reposdir", (tmp_ / "empty-reposdir").string()},
        tmp_ / "logs");
    EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;

    // Again: nothing changed, no image or package fetched.
    const std::size_t before = log_size(*server_);
    const CommandResult again = mirror();
    ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
    for (const std::string& uri : uris_since(*server_, before)) {
        EXPECT_TRUE(uri == "/tree/.treeinfo" || uri.ends_with("/repodata/repomd.xml")) << uri;
    }
}

// `verify -p <mirror> --repo <tree>` audits the whole tree: each repository it names, and its
// images against .treeinfo's checksums; a damaged image (same size, another inode: no cache
// vouches for it) and a missing one are problems naming the file, exit 1.
TEST_F(Treeinfo, VerifyAuditsATreesRepositoriesAndItsImages) {
    productmd_tree();
    ASSERT_EQ(mirror().exit_code, 0);
    const auto verify = [&](std::vector<std::string> extra = {}) {
        std::vector<std::string> argv{rpmirror_binary(),
                                      "verify",
                                      "-p",
                                      (tmp_ / "mirror").string(),
                                      "--repo",
                                      "fl",
                                      "-c",
                                      (tmp_ / "empty.conf").string(),
                                      "--reposdir",
                                      (tmp_ / "empty-reposdir").string()};
        argv.insert(argv.end(), extra.begin(), extra.end());
        return run_to_end(argv, tmp_ / "logs");
    };
    const CommandResult sound = verify();
    ASSERT_EQ(sound.exit_code, 0) << sound.out << sound.err;
    for (const char* repo : {"fl/BaseOS: OK", "fl/AppStream: OK", "fl/addons/HighAvailability: OK",
                             "fl (.treeinfo): OK: 4 images checked, 4 verified"}) {
        EXPECT_NE(sound.out.find(repo), std::string::npos) << repo << "\n" << sound.out;
    }

    const fs::path vmlinuz = mirrored() / "images/pxeboot/vmlinuz";
    std::string bytes = read_file(vmlinuz);
    bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x5a);
    fs::remove(vmlinuz);
    TempDir::write_at(vmlinuz, bytes);
    fs::remove(mirrored() / "EFI/BOOT/BOOTX64.EFI");
    const CommandResult damaged = verify({"--json", (tmp_ / "verify.json").string()});
    EXPECT_EQ(damaged.exit_code, 1) << damaged.out << damaged.err;
    EXPECT_NE(damaged.out.find("fl (.treeinfo): 2 problems"), std::string::npos) << damaged.out;
    EXPECT_NE(damaged.out.find("images/pxeboot/vmlinuz"), std::string::npos) << damaged.out;
    EXPECT_NE(damaged.out.find("checksum mismatch"), std::string::npos) << damaged.out;
    EXPECT_NE(damaged.out.find("EFI/BOOT/BOOTX64.EFI"), std::string::npos) << damaged.out;
    EXPECT_NE(damaged.out.find("fl/BaseOS: OK"), std::string::npos) << damaged.out;
    const auto report = nlohmann::json::parse(read_file(tmp_ / "verify.json"));
    bool found = false;
    for (const auto& repository : report.at("repositories")) {
        if (repository.at("repo") == "fl (.treeinfo)") {
            found = true;
            EXPECT_EQ(repository.at("images"), 4);
            EXPECT_EQ(repository.at("problems").size(), 2U);
        }
    }
    EXPECT_TRUE(found) << report.dump();

    // A sync of the tree puts them back; verify is sound again.
    ASSERT_EQ(mirror().exit_code, 0);
    EXPECT_EQ(verify().exit_code, 0);
}

// An image upstream's .treeinfo stops listing: kept without --delete, removed by the next run
// with it (after that run's .treeinfo is in place); a file rpmirror did not write stays.
TEST_F(Treeinfo, DeleteRemovesImagesTheTreeinfoNoLongerLists) {
    productmd_tree();
    ASSERT_EQ(mirror().exit_code, 0);
    TempDir::write_at(mirrored() / "images" / "admin-notes.img", "mine");
    std::string treeinfo = read_file(tree() / ".treeinfo");
    const std::size_t line = treeinfo.find("images/install.img = ");
    ASSERT_NE(line, std::string::npos);
    treeinfo.erase(line, treeinfo.find('\n', line) + 1 - line);
    TempDir::write_at(tree() / ".treeinfo", treeinfo);

    const CommandResult kept = mirror();
    ASSERT_EQ(kept.exit_code, 0) << kept.out << kept.err;
    EXPECT_EQ(read_file(mirrored() / ".treeinfo"), treeinfo);
    EXPECT_TRUE(fs::exists(mirrored() / "images/install.img"));

    const CommandResult deleted = mirror({"--delete"});
    ASSERT_EQ(deleted.exit_code, 0) << deleted.out << deleted.err;
    EXPECT_FALSE(fs::exists(mirrored() / "images/install.img"));
    EXPECT_TRUE(fs::exists(mirrored() / "images/pxeboot/vmlinuz"));
    EXPECT_EQ(read_file(mirrored() / "images" / "admin-notes.img"), "mine");
    for (const char* repo : {"BaseOS", "AppStream", "addons/HighAvailability"}) {
        EXPECT_EQ(tree_digests(mirrored() / repo), tree_digests(tree() / repo)) << repo;
    }
}

// -u: .treeinfo, its images and every repository's packages, as URLs; nothing written.
TEST_F(Treeinfo, UrlsListTheTreeAndEveryRepositoryAndWriteNothing) {
    productmd_tree();
    const CommandResult listed = mirror({"-u"});
    ASSERT_EQ(listed.exit_code, 0) << listed.out << listed.err;
    const std::string base = server_->url("/tree/");
    for (const std::string& url :
         {base + ".treeinfo", base + "images/install.img", base + "EFI/BOOT/BOOTX64.EFI"}) {
        EXPECT_NE(listed.out.find(url + "\n"), std::string::npos) << url << "\n" << listed.out;
    }
    // --download-metadata: each repository's records too.
    for (const char* repo : {"BaseOS", "AppStream", "addons/HighAvailability"}) {
        EXPECT_NE(listed.out.find(base + repo + "/repodata/"), std::string::npos) << repo;
    }
    std::size_t packages = 0;
    for (const std::string& line : lines_of(listed.out)) {
        packages += line.ends_with(".rpm") ? 1 : 0;
    }
    std::size_t expected = 0;
    for (const char* repo : {"BaseOS", "AppStream", "addons/HighAvailability"}) {
        expected += package_digests(tree() / repo).size();
    }
    EXPECT_EQ(packages, expected) << listed.out;
    EXPECT_FALSE(fs::exists(tmp_ / "mirror"));
}

TEST_F(Treeinfo, ABadImageFailsTheTreeAndTreeinfoIsNotPublishedUnlessSkipped) {
    productmd_tree();
    TempDir::write_at(tree() / "images/install.img", "not what .treeinfo says");
    const CommandResult failed = mirror();
    EXPECT_EQ(failed.exit_code, 1) << failed.out << failed.err;
    EXPECT_NE(failed.err.find("images/install.img"), std::string::npos) << failed.err;
    EXPECT_NE(failed.err.find("sha256 mismatch: expected "), std::string::npos) << failed.err;
    EXPECT_NE(failed.err.find(".treeinfo not published"), std::string::npos) << failed.err;
    EXPECT_FALSE(fs::exists(mirrored() / ".treeinfo"));
    EXPECT_FALSE(fs::exists(mirrored() / "images/install.img"));
    EXPECT_TRUE(fs::exists(mirrored() / "images/pxeboot/vmlinuz"));  // the good ones are kept

    const CommandResult skipped = mirror({"--skip-bad-images"});
    EXPECT_EQ(skipped.exit_code, 0) << skipped.out << skipped.err;
    EXPECT_NE(skipped.err.find("images/install.img left out (--skip-bad-images)"),
              std::string::npos)
        << skipped.err;
    EXPECT_EQ(read_file(mirrored() / ".treeinfo"), read_file(tree() / ".treeinfo"));
    EXPECT_FALSE(fs::exists(mirrored() / "images/install.img"));
}

// The older anaconda format: [general], [images-*], [stage2], [checksums]; no variants, so the
// tree's root is the repository.
TEST_F(Treeinfo, AnOldStyleTreeMirrorsItsRootRepository) {
    repository(tree(), "idx-noarch");
    TempDir::write_at(
        tree() / ".treeinfo",
        "[general]\nname = Fixture-7\nfamily = Fixture\ntimestamp = 1500000000\n"
        "variant = Server\nversion = 7\npackagedir = Packages\narch = x86_64\n\n"
        "[stage2]\nmainimage = LiveOS/squashfs.img\n\n[images-x86_64]\n"
        "kernel = images/pxeboot/vmlinuz\ninitrd = images/pxeboot/initrd.img\n\n"
        "[checksums]\nimages/pxeboot/vmlinuz = " +
            image("images/pxeboot/vmlinuz", 2000) +
            "\nLiveOS/squashfs.img = " + image("LiveOS/squashfs.img", 4000) +
            "\nimages/pxeboot/initrd.img = " + image("images/pxeboot/initrd.img", 3000) + "\n");
    const CommandResult synced = mirror();
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    EXPECT_EQ(tree_digests(mirrored()), tree_digests(tree()));
    EXPECT_EQ(dnf_lists(mirrored()), dnf_lists(tree()));
}

TEST_F(Treeinfo, ATreeinfoNamingAPathOutsideTheTreeIsRefused) {
    productmd_tree();
    TempDir::write_at(tree() / ".treeinfo",
                      "[checksums]\n../outside = sha256:" + std::string(64, 'a') + "\n");
    const CommandResult refused = mirror();
    EXPECT_NE(refused.exit_code, 0) << refused.out;
    EXPECT_NE(refused.err.find("line 2"), std::string::npos) << refused.err;
    EXPECT_NE(refused.err.find(".treeinfo"), std::string::npos) << refused.err;
    EXPECT_FALSE(fs::exists(mirrored() / ".treeinfo"));

    const CommandResult lonely = sync({"--repofrompath", "fl,http://127.0.0.1:9/", "--repo", "fl",
                                       "-p", (tmp_ / "mirror").string(), "--skip-bad-images"});
    EXPECT_EQ(lonely.exit_code, 2) << lonely.err;
    EXPECT_NE(lonely.err.find("--skip-bad-images needs --treeinfo"), std::string::npos)
        << lonely.err;
}

}  // namespace
}  // namespace rpmirror::test
