// parse_treeinfo (metadata/treeinfo.hpp): what --treeinfo reads from an installation tree's
// .treeinfo.
#include <gtest/gtest.h>

#include <string>

#include "metadata/treeinfo.hpp"

namespace rpmirror {
namespace {

const std::string kFakeSha256(64, 'a');

TEST(ParseTreeinfo, ProductmdVariantsAddonsAndChecksumsKeepingTheirCase) {
    const std::string text =
        "[header]\ntype = productmd.treeinfo\nversion = 1.2\n\n[checksums]\n"
        "images/pxeboot/vmlinuz = sha256:" +
        std::string(64, 'A') + "\nEFI/BOOT/BOOTX64.EFI = md5:" + std::string(32, 'b') +
        "\nimages/pxeboot/vmlinuz = sha256:" + kFakeSha256 +
        "\n\n[variant-BaseOS]\nrepository = BaseOS\n[variant-Everything]\nrepository = .\n"
        "[addon-BaseOS-HA]\nrepository = ./addons/HA/\n[variant-Again]\nrepository = BaseOS\n"
        "[images-x86_64]\nkernel = images/pxeboot/vmlinuz\n";
    auto tree = parse_treeinfo(text, "t/.treeinfo");
    ASSERT_TRUE(tree) << tree.error().to_string();
    ASSERT_EQ(tree->files.size(), 2U);  // the second vmlinuz line is a duplicate
    EXPECT_EQ(tree->files[0].path, "images/pxeboot/vmlinuz");
    EXPECT_EQ(tree->files[0].digest, kFakeSha256);  // lower-cased
    EXPECT_EQ(tree->files[1].path, "EFI/BOOT/BOOTX64.EFI");
    EXPECT_EQ(tree->files[1].type, ChecksumType::Md5);
    EXPECT_EQ(tree->repositories, (std::vector<std::string>{"BaseOS", "", "addons/HA"}));
    EXPECT_TRUE(tree->unchecksummed_images.empty());
}

// [images-*] and [stage2] files without a [checksums] entry are listed apart (not mirrored);
// one that is no safe path inside the tree is passed over, not refused.
TEST(ParseTreeinfo, ImagesWithoutAChecksumAreListedApart) {
    auto tree = parse_treeinfo(
        "[images-x86_64]\nkernel = images/pxeboot/vmlinuz\nboot.iso = images/boot.iso\n"
        "[images-xen]\nkernel = images/pxeboot/vmlinuz\n[stage2]\nmainimage = images/install.img\n"
        "[images-bad]\nx = ../../etc/passwd\n[checksums]\nimages/pxeboot/vmlinuz = sha256:" +
            kFakeSha256 + "\n",
        "t/.treeinfo");
    ASSERT_TRUE(tree) << tree.error().to_string();
    ASSERT_EQ(tree->files.size(), 1U);
    EXPECT_EQ(tree->unchecksummed_images,
              (std::vector<std::string>{"images/boot.iso", "images/install.img"}));
}

TEST(ParseTreeinfo, TheOlderFormatsGeneralRepositoryOrTheRootWhenNoneIsNamed) {
    auto named = parse_treeinfo("[general]\nfamily = X\nrepository = os\n", "t");
    ASSERT_TRUE(named);
    EXPECT_EQ(named->repositories, (std::vector<std::string>{"os"}));
    auto none = parse_treeinfo("[general]\nfamily = X\npackagedir = Packages\n", "t");
    ASSERT_TRUE(none);
    EXPECT_EQ(none->repositories, (std::vector<std::string>{""}));
    EXPECT_TRUE(none->files.empty());
}

// RHEL 7 trees list each repository's repodata/repomd.xml in [checksums]: the repositories'
// metadata, kept apart from the images (each repository publishes its own).
TEST(ParseTreeinfo, RepositoryMetadataInChecksumsIsNoImage) {
    auto tree = parse_treeinfo("[checksums]\nrepodata/repomd.xml = sha256:" + kFakeSha256 +
                                   "\naddons/HA/repodata/repomd.xml = sha256:" + kFakeSha256 +
                                   "\nLiveOS/squashfs.img = sha256:" + kFakeSha256 +
                                   "\n[general]\nfamily = X\n[addon-HA]\nrepository = addons/HA\n"
                                   "[variant-Server]\nrepository = .\n",
                               "t/.treeinfo");
    ASSERT_TRUE(tree) << tree.error().to_string();
    ASSERT_EQ(tree->files.size(), 1U);
    EXPECT_EQ(tree->files[0].path, "LiveOS/squashfs.img");
    EXPECT_EQ(tree->repository_metadata,
              (std::vector<std::string>{"repodata/repomd.xml", "addons/HA/repodata/repomd.xml"}));
    EXPECT_EQ(tree->repositories, (std::vector<std::string>{"addons/HA", ""}));
}

// A variant or addon whose repository climbs out of the tree (Pulp's fixture tree has
// `[variant-External] repository = ../rpm-signed/`) is listed apart, lexically normal, with its
// section and line: not one of the tree's repositories, and not the tree's root either.
TEST(ParseTreeinfo, ARepositoryOutsideTheTreeIsListedApartWithItsSectionAndLine) {
    auto tree = parse_treeinfo(
        "[variant-Server]\nrepository = .\n[variant-External]\nid = External\n"
        "repository = ../rpm-signed/\n[addon-Server-X]\nrepository = a/../../../other/os\n"
        "[variant-Again]\nrepository = ../rpm-signed\n",
        "t/.treeinfo");
    ASSERT_TRUE(tree) << tree.error().to_string();
    EXPECT_EQ(tree->repositories, (std::vector<std::string>{""}));
    ASSERT_EQ(tree->outside_repositories.size(), 2U);
    EXPECT_EQ(tree->outside_repositories[0].section, "variant-External");
    EXPECT_EQ(tree->outside_repositories[0].path, "../rpm-signed");
    EXPECT_EQ(tree->outside_repositories[0].line, 5U);
    EXPECT_EQ(tree->outside_repositories[1].section, "addon-Server-X");
    EXPECT_EQ(tree->outside_repositories[1].path, "../../other/os");
    EXPECT_EQ(tree->outside_repositories[1].line, 7U);

    auto only = parse_treeinfo("[variant-External]\nrepository = ../rpm-signed/\n", "t");
    ASSERT_TRUE(only) << only.error().to_string();
    EXPECT_TRUE(only->repositories.empty());
    ASSERT_EQ(only->outside_repositories.size(), 1U);
}

TEST(ParseTreeinfo, BadChecksumsAndPathsOutsideTheTreeNameTheirLine) {
    const auto expect_refused = [](const std::string& text, const std::string& why) {
        auto tree = parse_treeinfo(text, "t/.treeinfo");
        ASSERT_FALSE(tree) << text;
        EXPECT_EQ(tree.error().code, ErrorCode::BadInput);
        EXPECT_EQ(tree.error().subject, "t/.treeinfo");
        EXPECT_NE(tree.error().message.find(why), std::string::npos) << tree.error().message;
    };
    expect_refused("[checksums]\nimages/a = " + kFakeSha256 + "\n", "line 2");
    expect_refused("[checksums]\nimages/a = rot13:abc\n", "line 2");
    expect_refused("[checksums]\nimages/a = sha256:xyz\n", "is not TYPE:HEX");
    expect_refused("[checksums]\n../a = sha256:" + kFakeSha256 + "\n", "line 2");
    expect_refused("[checksums]\n/etc/a = sha256:" + kFakeSha256 + "\n", "absolute");
    // A repository may lie outside the tree (listed apart), but not be the tree's parent, nor
    // climb by an unsafe path.
    expect_refused("[x]\n\n[variant-A]\nrepository = ../\n", "line 4");
    expect_refused("[variant-A]\nrepository = ../%2e%2e/x\n", "line 2");
    expect_refused("[variant-A]\nrepository = /srv/x\n", "absolute");
    expect_refused("no section\n", "");
    expect_refused("[checksums]\nBaseOS/.repodata.staging-x/a = sha256:" + kFakeSha256 + "\n",
                   "names 'BaseOS/.repodata.staging-x/a', which rpmirror owns");
    expect_refused("[checksums]\n.treeinfo = sha256:" + kFakeSha256 + "\n", "which rpmirror owns");
    // An image without a checksum is written too: the same names are refused for it, in a
    // bucket as on disk (a lease object written by an image would lock every later sync out).
    expect_refused("[images-x86_64]\nlockimg = .rpmirror/lock\n",
                   "line 2: [images-x86_64] lockimg names '.rpmirror/lock', which rpmirror owns");
    expect_refused("[stage2]\nmainimage = BaseOS/.rpmirror/state.json\n", "which rpmirror owns");
    expect_refused("[images-x86_64]\nboot = images/.boot.iso.part\n", "which rpmirror owns");
    expect_refused("[images-x86_64]\nmeta = addons/HA/repodata/repomd.xml\n",
                   "which rpmirror owns");
}

}  // namespace
}  // namespace rpmirror
