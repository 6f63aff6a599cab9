// An installation tree built here, shared by the --treeinfo tests of a local destination and of
// a bucket: a productmd 1.2 tree with two variants (BaseOS, AppStream) and an addon
// (addons/HighAvailability), each a repository of index-repo packages, and four images listed in
// [checksums] (kernel, initrd, install.img, an EFI binary with an upper-case path).
// Header-only.
#pragma once

#include <filesystem>
#include <string>

#include "checksum/hasher.hpp"
#include "integration/sync/sync_harness.hpp"
#include "rpmirror/checksum/checksum.hpp"

namespace rpmirror::test {

// A repository at `dir` holding the index-repo packages whose file names contain `part`.
inline void make_tree_repository(const std::filesystem::path& dir, const std::string& part,
                                 const std::filesystem::path& logs) {
    std::filesystem::create_directories(dir / "Packages");
    for (const auto& entry :
         std::filesystem::directory_iterator(test_repo("index-repo") / "Packages")) {
        if (entry.path().filename().string().find(part) != std::string::npos) {
            std::filesystem::copy_file(entry.path(), dir / "Packages" / entry.path().filename());
        }
    }
    run_checked({"createrepo_c", "--quiet", "--no-database", dir.string()}, logs);
}

// An image at `relative` in `tree`, `size` bytes of a pattern; returns its "sha256:HEX".
inline std::string make_tree_image(const std::filesystem::path& tree, const std::string& relative,
                                   std::size_t size) {
    std::string content(size, '\0');
    for (std::size_t i = 0; i < size; ++i) {
        content[i] = static_cast<char>((i * 131 + relative.size()) % 251);
    }
    TempDir::write_at(tree / relative, content);
    return "sha256:" + hash_bytes(ChecksumType::Sha256, content);
}

// Upstream changes the tree at `tree`: a new kernel (images/pxeboot/vmlinuz, 3100 bytes, its
// [checksums] line rewritten) and, iff `drop_package`, one package fewer in AppStream (its
// metadata updated). Returns the new .treeinfo.
inline std::string change_tree_upstream(const std::filesystem::path& tree, bool drop_package,
                                        const std::filesystem::path& logs) {
    std::string treeinfo = read_file(tree / ".treeinfo");
    const std::string key = "images/pxeboot/vmlinuz = ";
    const std::size_t at = treeinfo.find(key);
    EXPECT_NE(at, std::string::npos) << treeinfo;
    if (at == std::string::npos) {
        return treeinfo;
    }
    treeinfo.replace(at + key.size(), treeinfo.find('\n', at) - at - key.size(),
                     make_tree_image(tree, "images/pxeboot/vmlinuz", 3100));
    TempDir::write_at(tree / ".treeinfo", treeinfo);
    if (drop_package) {
        std::filesystem::path dropped;
        for (const auto& entry :
             std::filesystem::directory_iterator(tree / "AppStream" / "Packages")) {
            dropped = entry.path();
        }
        EXPECT_FALSE(dropped.empty());
        std::filesystem::remove(dropped);
        run_checked(
            {"createrepo_c", "--quiet", "--no-database", "--update", (tree / "AppStream").string()},
            logs);
    }
    return treeinfo;
}

// The productmd 1.2 tree at `tree`.
inline void make_productmd_tree(const std::filesystem::path& tree,
                                const std::filesystem::path& logs) {
    make_tree_repository(tree / "BaseOS", "idx-epoch", logs);
    make_tree_repository(tree / "AppStream", "idx-noarch", logs);
    make_tree_repository(tree / "addons" / "HighAvailability", "idx-multi-1.10", logs);
    const std::string treeinfo =
        "[header]\ntype = productmd.treeinfo\nversion = 1.2\n\n"
        "[release]\nname = Fixture Linux\nshort = FL\nversion = 9\n\n"
        "[tree]\narch = x86_64\nbuild_timestamp = 1700000000\nplatforms = x86_64\n"
        "variants = BaseOS,AppStream\n\n"
        "[checksums]\nimages/pxeboot/vmlinuz = " +
        make_tree_image(tree, "images/pxeboot/vmlinuz", 3000) + "\nimages/pxeboot/initrd.img = " +
        make_tree_image(tree, "images/pxeboot/initrd.img", 5000) +
        "\nimages/install.img = " + make_tree_image(tree, "images/install.img", 7000) +
        "\nEFI/BOOT/BOOTX64.EFI = " + make_tree_image(tree, "EFI/BOOT/BOOTX64.EFI", 1000) +
        "\n\n[images-x86_64]\nkernel = images/pxeboot/vmlinuz\n"
        "initrd = images/pxeboot/initrd.img\n\n[stage2]\nmainimage = images/install.img\n\n"
        "[variant-BaseOS]\nid = BaseOS\nname = BaseOS\npackages = BaseOS/Packages\n"
        "repository = BaseOS\ntype = variant\nuid = BaseOS\n\n"
        "[variant-AppStream]\nid = AppStream\nname = AppStream\n"
        "packages = AppStream/Packages\nrepository = AppStream\ntype = variant\n"
        "uid = AppStream\n\n"
        "[addon-BaseOS-HighAvailability]\nid = HighAvailability\nname = High Availability\n"
        "parent = BaseOS\npackages = addons/HighAvailability/Packages\n"
        "repository = addons/HighAvailability\ntype = addon\n"
        "uid = BaseOS-HighAvailability\n";
    TempDir::write_at(tree / ".treeinfo", treeinfo);
}

}  // namespace rpmirror::test
