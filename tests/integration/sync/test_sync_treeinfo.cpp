// --treeinfo: installation trees built here and served by nginx. A productmd 1.x tree (two
// variants and an addon, each its own repository; kernel, initrd, install.img and an EFI binary
// listed in [checksums], one path in upper case) is mirrored whole: .treeinfo byte for byte and
// last, every image verified, every repository mirrored and read by dnf; a second run fetches no
// image. A bad image fails the tree (and .treeinfo is not published) unless --skip-bad-images;
// the older anaconda format (the tree's root is the repository) mirrors too; a .treeinfo naming
// a file outside the tree is refused, a variant outside it is left out with a warning naming
// how to mirror it; without --treeinfo a tree is announced.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "checksum/hasher.hpp"
#include "integration/sync/install_tree.hpp"
#include "integration/sync/sync_fixture.hpp"
#include "rpmirror/checksum/checksum.hpp"

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

    // The older anaconda format (see AnOldStyleTreeMirrorsItsRootRepository): the tree's root
    // is its repository.
    void old_style_tree() {
        repository(tree(), "idx-noarch");
        const std::string repomd_digest =
            hash_bytes(ChecksumType::Sha256, read_file(tree() / "repodata/repomd.xml"));
        TempDir::write_at(
            tree() / ".treeinfo",
            "[general]\nname = Fixture-7\nfamily = Fixture\ntimestamp = 1500000000\n"
            "variant = Server\nversion = 7\npackagedir = Packages\narch = x86_64\n\n"
            "[stage2]\nmainimage = LiveOS/squashfs.img\n\n[images-x86_64]\n"
            "kernel = images/pxeboot/vmlinuz\ninitrd = images/pxeboot/initrd.img\n\n"
            "[checksums]\nimages/pxeboot/vmlinuz = " +
                image("images/pxeboot/vmlinuz", 2000) +
                "\nLiveOS/squashfs.img = " + image("LiveOS/squashfs.img", 4000) +
                "\nimages/pxeboot/initrd.img = " + image("images/pxeboot/initrd.img", 3000) +
                "\nrepodata/repomd.xml = sha256:" + repomd_digest + "\n");
    }

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

    // `rpmirror verify -p <mirror> --repo fl` and `extra`, without the host's configuration.
    CommandResult verify_tree(const std::vector<std::string>& extra = {}) {
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
    const CommandResult sound = verify_tree();
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
    const CommandResult damaged = verify_tree({"--json", (tmp_ / "verify.json").string()});
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
    EXPECT_EQ(verify_tree().exit_code, 0);
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
    const std::size_t stage2 = treeinfo.find("mainimage = images/install.img\n");  // named nowhere
    ASSERT_NE(stage2, std::string::npos);
    treeinfo.erase(stage2, treeinfo.find('\n', stage2) + 1 - stage2);
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
// tree's root is the repository. [checksums] lists the repository's repodata/repomd.xml too, as
// RHEL 7 trees do: the repository's metadata, mirrored as the repository's.
TEST_F(Treeinfo, AnOldStyleTreeMirrorsItsRootRepository) {
    old_style_tree();
    const CommandResult synced = mirror();
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    // With --treeinfo, the tree's repository says nothing of the tree it is part of.
    EXPECT_EQ((synced.out + synced.err).find("part of an installation tree"), std::string::npos)
        << synced.out << synced.err;
    EXPECT_EQ(tree_digests(mirrored()), tree_digests(tree()));
    EXPECT_EQ(dnf_lists(mirrored()), dnf_lists(tree()));
    const CommandResult verified = verify_tree();
    EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;
}

// One owner per key: an image .treeinfo names over a package of the tree's repository is never
// written (the sync fails naming the key and both owners, .treeinfo is not published), and once
// the line is gone --delete leaves the package alone: it was never the images'.
TEST_F(Treeinfo, AnImageNamingARepositorysPackageIsRefusedAndNeverDeleted) {
    repository(tree(), "idx-noarch");
    const std::string head =
        "[general]\nname = Fixture-7\nfamily = Fixture\nversion = 7\narch = x86_64\n"
        "[images-x86_64]\nkernel = images/pxeboot/vmlinuz\n";
    const std::string checksums =
        "[checksums]\nimages/pxeboot/vmlinuz = " + image("images/pxeboot/vmlinuz", 2000) + "\n";
    TempDir::write_at(tree() / ".treeinfo", head + checksums);
    ASSERT_EQ(mirror().exit_code, 0);
    std::string package;
    for (const auto& entry : fs::recursive_directory_iterator(mirrored())) {
        if (entry.path().extension() == ".rpm") {
            package = fs::relative(entry.path(), mirrored()).generic_string();
            break;
        }
    }
    ASSERT_FALSE(package.empty());
    const std::string digest = tree_digests(mirrored()).at(package);

    TempDir::write_at(tree() / ".treeinfo", head + "hostile = " + package + "\n" + checksums);
    const CommandResult refused = mirror();
    EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
    EXPECT_NE(
        refused.err.find("the key " + package + " belongs to the repository at the tree's root"),
        std::string::npos)
        << refused.err;
    EXPECT_NE(refused.err.find("not written for the tree's images"), std::string::npos)
        << refused.err;
    EXPECT_EQ(read_file(mirrored() / ".treeinfo"), head + checksums);  // not published

    TempDir::write_at(tree() / ".treeinfo", head + checksums + "# the line is gone\n");
    const CommandResult deleted = mirror({"--delete"});
    ASSERT_EQ(deleted.exit_code, 0) << deleted.out << deleted.err;
    EXPECT_EQ(deleted.out.find("deleted " + package), std::string::npos) << deleted.out;
    EXPECT_EQ(tree_digests(mirrored()).at(package), digest);
}

// An image [images-*] names without a [checksums] entry (older trees): fetched as the server sends
// it, with a warning; kept while .treeinfo stays the same, fetched again when it changes; `verify`
// finds it there (not verified: nothing to verify it against) or names it missing; a snapshot
// holds it.
TEST_F(Treeinfo, AnImageWithoutAChecksumIsFetchedUnverifiedAndAgainWhenTreeinfoChanges) {
    repository(tree(), "idx-noarch");
    const std::string treeinfo_head =
        "[general]\nname = Fixture-6\nfamily = Fixture\nversion = 6\narch = x86_64\n"
        "[images-x86_64]\nkernel = images/pxeboot/vmlinuz\nboot.iso = images/boot.iso\n"
        "[checksums]\nimages/pxeboot/vmlinuz = " +
        image("images/pxeboot/vmlinuz", 2000) + "\n";
    image("images/boot.iso", 1500);
    TempDir::write_at(tree() / ".treeinfo", treeinfo_head + "# compose 1\n");
    const CommandResult synced = mirror();
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    EXPECT_NE(synced.err.find("images/boot.iso: .treeinfo names it in [images-*]/[stage2] without "
                              "a [checksums] entry: fetched as the server sends it, unverified"),
              std::string::npos)
        << synced.err;
    EXPECT_EQ(read_file(mirrored() / "images/boot.iso"), read_file(tree() / "images/boot.iso"));
    const CommandResult sound = verify_tree();
    EXPECT_EQ(sound.exit_code, 0) << sound.out << sound.err;
    EXPECT_NE(sound.out.find("fl (.treeinfo): OK: 2 images checked, 1 verified"), std::string::npos)
        << sound.out;

    // Again, nothing changed: the image is not fetched.
    std::size_t before = log_size(*server_);
    const CommandResult again = mirror();
    ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
    for (const std::string& uri : uris_since(*server_, before)) {
        EXPECT_NE(uri, "/tree/images/boot.iso");
    }
    EXPECT_EQ(again.err.find("unverified"), std::string::npos) << again.err;

    // A new compose: a new boot.iso behind a changed .treeinfo.
    image("images/boot.iso", 1700);
    TempDir::write_at(tree() / ".treeinfo", treeinfo_head + "# compose 2\n");
    before = log_size(*server_);
    const CommandResult changed = mirror({"--snapshot=two"});
    ASSERT_EQ(changed.exit_code, 0) << changed.out << changed.err;
    const std::vector<std::string> uris = uris_since(*server_, before);
    EXPECT_NE(std::find(uris.begin(), uris.end(), "/tree/images/boot.iso"), uris.end());
    EXPECT_EQ(read_file(mirrored() / "images/boot.iso"), read_file(tree() / "images/boot.iso"));
    EXPECT_EQ(read_file(tmp_ / "mirror/snapshots/fl/two/images/boot.iso"),
              read_file(tree() / "images/boot.iso"));

    fs::remove(mirrored() / "images/boot.iso");
    const CommandResult missing = verify_tree();
    EXPECT_EQ(missing.exit_code, 1) << missing.out << missing.err;
    EXPECT_NE(missing.out.find("images/boot.iso"), std::string::npos) << missing.out;
}

// A tree's snapshot is the whole tree: every repository, every image (hard-linked) and .treeinfo;
// it keeps the old image when upstream replaces it. `diff` of two snapshots of a tree (and of a
// snapshot against the upstream tree's URL) names the changed image and each repository's
// changes; a tree against a repository that is no tree is an error; a damaged image is refused
// by `snapshot create`, which leaves nothing.
TEST_F(Treeinfo, SnapshotsAndDiffCoverTheWholeTree) {
    productmd_tree();
    const CommandResult first = mirror({"--snapshot=one"});
    ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
    const fs::path one = tmp_ / "mirror" / "snapshots" / "fl" / "one";
    EXPECT_EQ(read_file(one / ".treeinfo"), read_file(tree() / ".treeinfo"));
    for (const char* image : {"images/pxeboot/vmlinuz", "images/pxeboot/initrd.img",
                              "images/install.img", "EFI/BOOT/BOOTX64.EFI"}) {
        struct stat live {};
        struct stat kept {};
        ASSERT_EQ(::stat((mirrored() / image).c_str(), &live), 0) << image;
        ASSERT_EQ(::stat((one / image).c_str(), &kept), 0) << image;
        EXPECT_EQ(live.st_ino, kept.st_ino) << image << ": an image is hard-linked";
    }
    for (const char* repo : {"BaseOS", "AppStream", "addons/HighAvailability"}) {
        EXPECT_EQ(tree_digests(one / repo), tree_digests(tree() / repo)) << repo;
        EXPECT_EQ(dnf_lists(one / repo), dnf_lists(tree() / repo)) << repo;
    }
    const std::string old_kernel = read_file(tree() / "images/pxeboot/vmlinuz");

    // Upstream: a new kernel, and one package fewer in AppStream.
    change_tree_upstream(tree(), true, tmp_ / "logs");
    const CommandResult second = mirror({"--snapshot=two", "--delete"});
    ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
    EXPECT_EQ(read_file(one / "images/pxeboot/vmlinuz"), old_kernel);
    EXPECT_EQ(read_file(tmp_ / "mirror/snapshots/fl/two/images/pxeboot/vmlinuz"),
              read_file(tree() / "images/pxeboot/vmlinuz"));

    const auto diff = [&](std::vector<std::string> sides) {
        std::vector<std::string> argv{rpmirror_binary(), "diff", "-p", (tmp_ / "mirror").string()};
        argv.insert(argv.end(), sides.begin(), sides.end());
        return run_to_end(argv, tmp_ / "logs");
    };
    const CommandResult snapshots = diff({"snapshot:fl/one", "snapshot:fl/two"});
    ASSERT_EQ(snapshots.exit_code, 0) << snapshots.out << snapshots.err;
    EXPECT_NE(snapshots.out.find("image changed    images/pxeboot/vmlinuz  (sha256:"),
              std::string::npos)
        << snapshots.out;
    EXPECT_NE(snapshots.out.find("AppStream: removed    "), std::string::npos) << snapshots.out;
    EXPECT_NE(snapshots.out.find("snapshot:fl/one -> snapshot:fl/two: AppStream: 0 added, 1 "
                                 "removed, 0 upgraded, 0 downgraded, 0 changed"),
              std::string::npos)
        << snapshots.out;
    EXPECT_NE(snapshots.out.find("snapshot:fl/one -> snapshot:fl/two: BaseOS: 0 added, 0 removed"),
              std::string::npos)
        << snapshots.out;
    EXPECT_NE(snapshots.out.find("images: 0 added, 0 removed, 1 changed; repositories: 0 added, "
                                 "0 removed"),
              std::string::npos)
        << snapshots.out;

    const CommandResult json = diff({"--json", "snapshot:fl/one", "snapshot:fl/two"});
    ASSERT_EQ(json.exit_code, 0) << json.err;
    const auto document = nlohmann::json::parse(json.out);
    EXPECT_EQ(document.at("tree").at("images").at("changed").size(), 1U) << json.out;
    EXPECT_EQ(document.at("tree").at("images").at("changed")[0].at("path"),
              "images/pxeboot/vmlinuz");
    EXPECT_EQ(document.at("repositories").at("AppStream").at("packages").at("removed").size(), 1U);
    EXPECT_EQ(document.at("empty"), false);

    // The first snapshot against the upstream tree (its URL): the same changes.
    const CommandResult upstream = diff({"snapshot:fl/one", server_->url("/tree/")});
    ASSERT_EQ(upstream.exit_code, 0) << upstream.out << upstream.err;
    EXPECT_NE(upstream.out.find("images: 0 added, 0 removed, 1 changed"), std::string::npos)
        << upstream.out;
    EXPECT_NE(upstream.out.find("AppStream: 0 added, 1 removed"), std::string::npos)
        << upstream.out;
    // The live mirror and its newest snapshot: nothing.
    const CommandResult same = diff({"-q", mirrored().string(), "snapshot:fl/two"});
    ASSERT_EQ(same.exit_code, 0) << same.out << same.err;
    EXPECT_NE(same.out.find("images: 0 added, 0 removed, 0 changed"), std::string::npos)
        << same.out;

    // A tree against a repository that is no tree: an error naming the side.
    const CommandResult mixed = diff({mirrored().string(), (mirrored() / "BaseOS").string()});
    EXPECT_EQ(mixed.exit_code, 1) << mixed.out;
    EXPECT_NE(mixed.err.find("no installation tree here (no .treeinfo)"), std::string::npos)
        << mixed.err;
    EXPECT_NE(mixed.err.find((mirrored() / "BaseOS").string()), std::string::npos) << mixed.err;

    // A damaged image: no snapshot of the tree, nothing left under the name.
    const fs::path initrd = mirrored() / "images/pxeboot/initrd.img";
    std::string bytes = read_file(initrd);
    bytes[10] = static_cast<char>(bytes[10] ^ 0x5a);
    fs::remove(initrd);
    TempDir::write_at(initrd, bytes);
    const CommandResult refused =
        run_to_end({rpmirror_binary(), "snapshot", "create", "-p", (tmp_ / "mirror").string(),
                    "--repo", "fl", "--name", "three"},
                   tmp_ / "logs");
    EXPECT_NE(refused.exit_code, 0) << refused.out;
    EXPECT_NE(refused.err.find("not a complete, verified installation tree"), std::string::npos)
        << refused.err;
    EXPECT_NE(refused.err.find("images/pxeboot/initrd.img"), std::string::npos) << refused.err;
    EXPECT_FALSE(fs::exists(tmp_ / "mirror/snapshots/fl/three"));
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

// A variant whose repository lies outside the tree (as Pulp's fixture tree names
// `[variant-External] repository = ../rpm-signed/`): the tree is mirrored and published without
// it, and a warning names the section, its line and the command that mirrors it where the
// published .treeinfo points (beside the tree); once mirrored there, nothing more is said.
TEST_F(Treeinfo, AVariantOutsideTheTreeIsLeftOutNamingTheCommandThatMirrorsIt) {
    productmd_tree();
    repository(tmp_ / "upstream" / "rpm-signed", "idx-multi");
    std::string treeinfo = read_file(tree() / ".treeinfo");
    const std::string variants = "variants = BaseOS,AppStream\n";
    ASSERT_NE(treeinfo.find(variants), std::string::npos) << treeinfo;
    treeinfo.replace(treeinfo.find(variants), variants.size(),
                     "variants = BaseOS,AppStream,External\n");
    treeinfo +=
        "\n[variant-External]\nid = External\nname = External\npackages = ../rpm-signed/\n"
        "repository = ../rpm-signed/\ntype = variant\nuid = External\n";
    TempDir::write_at(tree() / ".treeinfo", treeinfo);
    const std::size_t line =
        static_cast<std::size_t>(std::count(
            treeinfo.begin(),
            treeinfo.begin() + static_cast<long>(treeinfo.find("repository = ../rpm-signed/")),
            '\n')) +
        1;

    const CommandResult synced = mirror();
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    EXPECT_EQ(read_file(mirrored() / ".treeinfo"), treeinfo);
    for (const char* repo : {"BaseOS", "AppStream", "addons/HighAvailability"}) {
        EXPECT_EQ(tree_digests(mirrored() / repo), tree_digests(tree() / repo)) << repo;
    }
    EXPECT_TRUE(fs::exists(mirrored() / "images/install.img"));
    EXPECT_FALSE(fs::exists(tmp_ / "mirror" / "rpm-signed"));  // nothing written beyond the tree
    const std::string command = "rpmirror sync --repofrompath rpm-signed," +
                                server_->url("/rpm-signed/") + " --repo rpm-signed -p " +
                                (tmp_ / "mirror").string() + " --download-metadata";
    EXPECT_NE(synced.err.find("fl: warning: [variant-External] repository = ../rpm-signed (line " +
                              std::to_string(line) + " of .treeinfo) lies outside the tree"),
              std::string::npos)
        << synced.err;
    EXPECT_NE(synced.err.find(command + " "), std::string::npos) << command << "\n" << synced.err;

    // The command it names mirrors the variant where the published .treeinfo points.
    const CommandResult beside =
        sync({"--repofrompath", "rpm-signed," + server_->url("/rpm-signed/"), "--repo",
              "rpm-signed", "-p", (tmp_ / "mirror").string(), "--download-metadata"});
    ASSERT_EQ(beside.exit_code, 0) << beside.out << beside.err;
    EXPECT_EQ(dnf_lists((mirrored() / "../rpm-signed").lexically_normal()),
              dnf_lists(tmp_ / "upstream" / "rpm-signed"));
    const CommandResult again = mirror();
    ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
    EXPECT_EQ(again.err.find("lies outside the tree"), std::string::npos) << again.err;

    // verify audits the tree it mirrored.
    const CommandResult verified = verify_tree();
    EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;
}

// Without --treeinfo, a repository whose URL serves a .treeinfo is mirrored as a repository (as
// dnf reposync does) and a warning says so, naming --treeinfo, at the mirror's first sync: later
// runs (a no-op, or one that fetches upstream's new metadata) ask nothing more of the server.
TEST_F(Treeinfo, ATreeSyncedWithoutTheOptionIsAnnouncedNamingIt) {
    old_style_tree();
    server_ = &serve(tmp_ / "upstream");
    const auto plain = [&] {
        return sync({"--repofrompath", "fl," + server_->url("/tree/"), "--repo", "fl", "-p",
                     (tmp_ / "mirror").string(), "--download-metadata"});
    };
    const CommandResult first = plain();
    ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
    const std::string note = "fl: warning: " + server_->url("/tree/.treeinfo") +
                             ": the repository is part of an installation tree";
    EXPECT_NE(first.err.find(note), std::string::npos) << first.err;
    EXPECT_NE(first.err.find("--treeinfo"), std::string::npos) << first.err;
    EXPECT_EQ(dnf_lists(mirrored()), dnf_lists(tree()));
    EXPECT_FALSE(fs::exists(mirrored() / ".treeinfo"));
    EXPECT_FALSE(fs::exists(mirrored() / "LiveOS/squashfs.img"));

    std::size_t before = log_size(*server_);
    const CommandResult noop = plain();
    ASSERT_EQ(noop.exit_code, 0) << noop.out << noop.err;
    EXPECT_EQ(noop.err.find("installation tree"), std::string::npos) << noop.err;
    std::vector<std::string> uris = uris_since(*server_, before);
    EXPECT_FALSE(uris.empty());
    for (const std::string& uri : uris) {
        EXPECT_NE(uri, "/tree/.treeinfo");
    }

    // Upstream changes: its new metadata is mirrored, .treeinfo is not asked for again.
    fs::path dropped;
    for (const auto& entry : fs::directory_iterator(tree() / "Packages")) {
        dropped = entry.path();
    }
    ASSERT_FALSE(dropped.empty());
    fs::remove(dropped);
    run_checked({"createrepo_c", "--quiet", "--no-database", "--update", tree().string()},
                tmp_ / "logs");
    before = log_size(*server_);
    const CommandResult changed = plain();
    ASSERT_EQ(changed.exit_code, 0) << changed.out << changed.err;
    EXPECT_EQ(changed.err.find("installation tree"), std::string::npos) << changed.err;
    EXPECT_EQ(dnf_lists(mirrored()), dnf_lists(tree()));
    uris = uris_since(*server_, before);
    EXPECT_NE(std::find(uris.begin(), uris.end(), "/tree/repodata/repomd.xml"), uris.end());
    for (const std::string& uri : uris) {
        EXPECT_NE(uri, "/tree/.treeinfo");
    }

    // A repository without a .treeinfo: not a word.
    repository(tmp_ / "upstream" / "plain", "idx-epoch");
    const CommandResult other = sync({"--repofrompath", "p," + server_->url("/plain/"), "--repo",
                                      "p", "-p", (tmp_ / "mirror").string()});
    ASSERT_EQ(other.exit_code, 0) << other.out << other.err;
    EXPECT_EQ(other.err.find("installation tree"), std::string::npos) << other.err;
}

}  // namespace
}  // namespace rpmirror::test
