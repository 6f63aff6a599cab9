// --treeinfo into a bucket of the real Ceph RADOS Gateway: the productmd tree of
// integration/sync/install_tree.hpp (two variants, an addon, four images) mirrored to
// s3://BUCKET/PREFIX/<repoid>/ whole: every image stored as upstream has it, every repository
// published and read by dnf over the gateway's HTTP, .treeinfo stored last; a second run stores
// nothing; an image .treeinfo stops listing is removed by --delete (never an object rpmirror did
// not store); a bad image fails the tree and .treeinfo is not stored; snapshots and published
// names hold the whole tree; `diff` compares the stored tree with the upstream tree and with a
// tree on disk.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "checksum/hasher.hpp"
#include "integration/s3/s3_sync_fixture.hpp"
#include "integration/sync/install_tree.hpp"
#include "s3/config.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

constexpr const char* kImages[] = {"images/pxeboot/vmlinuz", "images/pxeboot/initrd.img",
                                   "images/install.img", "EFI/BOOT/BOOTX64.EFI"};
constexpr const char* kRepositories[] = {"BaseOS", "AppStream", "addons/HighAvailability"};

class S3Treeinfo : public S3SyncTest {
  protected:
    void SetUp() override {
        S3SyncTest::SetUp();
        if (HasFatalFailure()) {
            return;
        }
        make_productmd_tree(tree(), tmp_ / "logs");
        tree_server_ = std::make_unique<NginxServer>(tmp_ / "trees", tmp_ / "nginx-trees");
    }

    fs::path tree() const { return tmp_ / "trees" / "tree"; }

    CommandResult mirror(std::vector<std::string> extra = {}) {
        std::vector<std::string> args{"-c",
                                      (tmp_ / "empty.conf").string(),
                                      "--reposdir",
                                      (tmp_ / "empty-reposdir").string(),
                                      "--repofrompath",
                                      "fl," + tree_server_->url("/tree/"),
                                      "--repo",
                                      "fl",
                                      "-p",
                                      destination(),
                                      "--download-metadata",
                                      "--treeinfo",
                                      "--s3-acl",
                                      "public-read",
                                      "--json",
                                      (tmp_ / "report.json").string()};
        args.insert(args.end(), extra.begin(), extra.end());
        return run_to_end(rpmirror_sync_argv(args), tmp_ / "logs");
    }

    // Every object of the mirrored tree, by key relative to it.
    std::map<std::string, s3::ListedObject> tree_objects() {
        auto listed = s3::list_mirror(client(), s3::S3Location{bucket(), prefix_ + "/fl/"});
        EXPECT_TRUE(listed) << listed.error().to_string();
        return listed ? *listed : std::map<std::string, s3::ListedObject>{};
    }

    std::string object(const std::string& relative) {
        auto body = client().get_object(bucket(), prefix_ + "/fl/" + relative);
        EXPECT_TRUE(body) << relative << ": " << body.error().to_string();
        return body ? *body : std::string();
    }

    // `dnf repoquery -a` over `baseurl`: its NEVRAs, sorted.
    std::vector<std::string> dnf_lists(const std::string& baseurl) {
        std::vector<std::string> argv = isolated_dnf(tmp_ / ("dnf-" + std::to_string(++runs_)));
        argv.insert(argv.end(), {"--repofrompath=m," + baseurl, "--repo=m", "repoquery", "-a",
                                 "--qf", "%{name}-%{evr}.%{arch}"});
        const CommandResult query = run_to_end(argv, tmp_ / "logs");
        EXPECT_EQ(query.exit_code, 0) << query.err;
        std::vector<std::string> lines = lines_of(query.out);
        std::sort(lines.begin(), lines.end());
        return lines;
    }

    std::unique_ptr<NginxServer> tree_server_;
    int runs_ = 0;
};

TEST_F(S3Treeinfo, AProductmdTreeIsStoredWholeAndDnfReadsEachRepositoryOverTheGateway) {
    const CommandResult synced = mirror();
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    EXPECT_EQ(object(".treeinfo"), read_file(tree() / ".treeinfo"));
    for (const char* image : kImages) {
        EXPECT_EQ(object(image), read_file(tree() / image)) << image;
    }
    const auto objects = tree_objects();
    for (const char* repo : kRepositories) {
        for (const auto& [relative, digest] : tree_digests(tree() / repo)) {
            const auto found = objects.find(std::string(repo) + "/" + relative);
            ASSERT_NE(found, objects.end()) << repo << "/" << relative;
            EXPECT_EQ(hash_bytes(ChecksumType::Sha256, object(std::string(repo) + "/" + relative)),
                      digest)
                << repo << "/" << relative;
        }
        const std::string baseurl =
            cluster().endpoint() + "/" + bucket() + "/" + prefix_ + "/fl/" + repo + "/";
        const std::vector<std::string> listed = dnf_lists(baseurl);
        EXPECT_FALSE(listed.empty()) << repo;
        EXPECT_EQ(listed, dnf_lists("file://" + (tree() / repo).string())) << repo;
    }
    EXPECT_FALSE(objects.contains("repodata/repomd.xml"));  // the root is no repository here

    // Again: nothing fetched, nothing stored.
    const CommandResult again = mirror();
    ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
    EXPECT_EQ(repo_report().at("downloaded").get<std::size_t>(), 0U) << again.out;
    std::size_t packages = 0;
    for (const char* repo : kRepositories) {
        packages += package_digests(tree() / repo).size();
    }
    EXPECT_EQ(repo_report().at("kept").get<std::size_t>(), packages + std::size(kImages))
        << again.out;
    EXPECT_TRUE(repo_report().at("noop").get<bool>()) << again.out;
}

// `verify -p s3://... --repo fl` audits the stored tree whole: its repositories and its images
// against .treeinfo's checksums; an image object replaced by other bytes is a problem naming it.
TEST_F(S3Treeinfo, VerifyAuditsTheStoredTreesRepositoriesAndImages) {
    ASSERT_EQ(mirror().exit_code, 0);
    const auto verify = [&] {
        return run_to_end(
            {rpmirror_binary(), "verify", "-p", destination(), "--repo", "fl", "--no-cache"},
            tmp_ / "logs");
    };
    const CommandResult sound = verify();
    ASSERT_EQ(sound.exit_code, 0) << sound.out << sound.err;
    for (const char* line : {"fl/BaseOS: OK", "fl/AppStream: OK", "fl/addons/HighAvailability: OK",
                             "fl (.treeinfo): OK: 4 images checked, 4 verified"}) {
        EXPECT_NE(sound.out.find(line), std::string::npos) << line << "\n" << sound.out;
    }
    std::string bytes = object("images/install.img");
    bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x5a);
    ASSERT_TRUE(client().put_object(bucket(), prefix_ + "/fl/images/install.img", bytes, {}));
    const CommandResult damaged = verify();
    EXPECT_EQ(damaged.exit_code, 1) << damaged.out << damaged.err;
    EXPECT_NE(damaged.out.find("fl (.treeinfo): 1 problem"), std::string::npos) << damaged.out;
    EXPECT_NE(damaged.out.find("images/install.img"), std::string::npos) << damaged.out;
}

// An image upstream's .treeinfo stops listing: kept without --delete, removed by the next run
// with it (after that run's .treeinfo is stored); an object rpmirror did not store stays.
TEST_F(S3Treeinfo, DeleteRemovesImagesTheTreeinfoNoLongerListsButNoOtherObject) {
    ASSERT_EQ(mirror().exit_code, 0);
    const std::string own = prefix_ + "/fl/images/site-local.img";
    ASSERT_TRUE(client().put_object(bucket(), own, "the admin's", {}));
    std::string treeinfo = read_file(tree() / ".treeinfo");
    const std::size_t line = treeinfo.find("\nimages/install.img = ");
    ASSERT_NE(line, std::string::npos);
    treeinfo.erase(line, treeinfo.find('\n', line + 1) - line);
    const std::size_t stage2 = treeinfo.find("mainimage = images/install.img\n");  // named nowhere
    ASSERT_NE(stage2, std::string::npos);
    treeinfo.erase(stage2, treeinfo.find('\n', stage2) + 1 - stage2);
    TempDir::write_at(tree() / ".treeinfo", treeinfo);

    const CommandResult kept = mirror();
    ASSERT_EQ(kept.exit_code, 0) << kept.out << kept.err;
    EXPECT_EQ(object(".treeinfo"), treeinfo);
    EXPECT_TRUE(tree_objects().contains("images/install.img"));

    const CommandResult deleted = mirror({"--delete"});
    ASSERT_EQ(deleted.exit_code, 0) << deleted.out << deleted.err;
    const auto objects = tree_objects();
    EXPECT_FALSE(objects.contains("images/install.img"));
    EXPECT_TRUE(objects.contains("images/site-local.img"));
    EXPECT_TRUE(objects.contains("images/pxeboot/vmlinuz"));
    EXPECT_EQ(repo_report().at("deleted").dump().find("install.img") != std::string::npos, true)
        << repo_report().dump();
}

// A snapshot of the tree in the bucket is the whole tree (every repository, every image and
// .treeinfo, copied inside the store): dnf reads each of its repositories over the gateway, it
// keeps the old kernel when upstream replaces it, a published name is the whole tree too, and
// `diff` of two snapshots names the changed image; an image changed behind rpmirror's back
// refuses the snapshot, naming it, and leaves nothing.
TEST_F(S3Treeinfo, SnapshotsCoverTheWholeTree) {
    const CommandResult first = mirror({"--snapshot=one"});
    ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
    const std::string one = "snapshots/fl/one/";
    const auto stored = [&](const std::string& key) {
        auto body = client().get_object(bucket(), prefix_ + "/" + key);
        EXPECT_TRUE(body) << key << ": " << body.error().to_string();
        return body ? *body : std::string();
    };
    EXPECT_EQ(stored(one + ".treeinfo"), read_file(tree() / ".treeinfo"));
    for (const char* image : kImages) {
        EXPECT_EQ(stored(one + image), read_file(tree() / image)) << image;
    }
    for (const char* repo : kRepositories) {
        const std::string baseurl =
            cluster().endpoint() + "/" + bucket() + "/" + prefix_ + "/" + one + repo + "/";
        const std::vector<std::string> listed = dnf_lists(baseurl);
        EXPECT_FALSE(listed.empty()) << repo;
        EXPECT_EQ(listed, dnf_lists("file://" + (tree() / repo).string())) << repo;
    }
    const std::string old_kernel = read_file(tree() / "images/pxeboot/vmlinuz");
    const std::string old_treeinfo = read_file(tree() / ".treeinfo");

    const std::string treeinfo = change_tree_upstream(tree(), false, tmp_ / "logs");
    ASSERT_EQ(mirror().exit_code, 0);
    const auto snapshot = [&](std::vector<std::string> extra) {
        std::vector<std::string> argv{rpmirror_binary(), "snapshot", "--repo", "fl", "-p",
                                      destination()};
        argv.insert(argv.begin() + 2, extra.front());
        argv.insert(argv.end(), extra.begin() + 1, extra.end());
        return run_to_end(argv, tmp_ / "logs");
    };
    const CommandResult two = snapshot({"create", "--name", "two"});
    ASSERT_EQ(two.exit_code, 0) << two.out << two.err;
    EXPECT_EQ(stored(one + "images/pxeboot/vmlinuz"), old_kernel);
    EXPECT_EQ(stored("snapshots/fl/two/images/pxeboot/vmlinuz"),
              read_file(tree() / "images/pxeboot/vmlinuz"));
    EXPECT_EQ(stored("snapshots/fl/two/.treeinfo"), treeinfo);

    const CommandResult published = snapshot({"publish", "one", "--as", "prod"});
    ASSERT_EQ(published.exit_code, 0) << published.out << published.err;
    EXPECT_EQ(stored("published/prod/fl/.treeinfo"), old_treeinfo);
    EXPECT_EQ(stored("published/prod/fl/images/pxeboot/vmlinuz"), old_kernel);
    const CommandResult diff = run_to_end(
        {rpmirror_binary(), "diff", "-p", destination(), "published:prod/fl", "snapshot:fl/two"},
        tmp_ / "logs");
    ASSERT_EQ(diff.exit_code, 0) << diff.out << diff.err;
    EXPECT_NE(diff.out.find("image changed    images/pxeboot/vmlinuz  (sha256:"), std::string::npos)
        << diff.out;
    EXPECT_NE(diff.out.find("images: 0 added, 0 removed, 1 changed; repositories: 0 added, 0 "
                            "removed"),
              std::string::npos)
        << diff.out;
    // Publishing the newer snapshot under the same name replaces the tree.
    ASSERT_EQ(snapshot({"publish", "two", "--as", "prod"}).exit_code, 0);
    EXPECT_EQ(stored("published/prod/fl/.treeinfo"), treeinfo);
    EXPECT_EQ(stored("published/prod/fl/images/pxeboot/vmlinuz"),
              read_file(tree() / "images/pxeboot/vmlinuz"));

    // An image replaced behind rpmirror's back: no snapshot, nothing left under its name.
    std::string bytes = object("images/install.img");
    bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x5a);
    ASSERT_TRUE(client().put_object(bucket(), prefix_ + "/fl/images/install.img", bytes, {}));
    const CommandResult damaged = snapshot({"create", "--name", "three"});
    EXPECT_NE(damaged.exit_code, 0) << damaged.out;
    EXPECT_NE(damaged.err.find("not a complete, verified installation tree"), std::string::npos)
        << damaged.err;
    EXPECT_NE(damaged.err.find("images/install.img"), std::string::npos) << damaged.err;
    auto three =
        s3::list_mirror(client(), s3::S3Location{bucket(), prefix_ + "/snapshots/fl/three/"});
    ASSERT_TRUE(three) << three.error().to_string();
    EXPECT_TRUE(three->empty());

    // Removing a snapshot removes the whole tree's copy.
    ASSERT_EQ(snapshot({"remove", "one"}).exit_code, 0);
    auto gone = s3::list_mirror(client(), s3::S3Location{bucket(), prefix_ + "/" + one});
    ASSERT_TRUE(gone) << gone.error().to_string();
    EXPECT_TRUE(gone->empty());
}

// An image [images-*] names without a [checksums] entry: stored as the server sent it (the store
// checks the upload against the digest it arrived with), kept by the next run, found by `verify`,
// copied by a snapshot.
TEST_F(S3Treeinfo, AnImageWithoutAChecksumIsStoredUnverifiedAndSnapshotted) {
    std::string treeinfo = read_file(tree() / ".treeinfo");
    const std::string section = "[images-x86_64]\n";
    const std::size_t at = treeinfo.find(section);
    ASSERT_NE(at, std::string::npos);
    treeinfo.insert(at + section.size(), "boot.iso = images/boot.iso\n");
    TempDir::write_at(tree() / ".treeinfo", treeinfo);
    make_tree_image(tree(), "images/boot.iso", 2500);

    const CommandResult synced = mirror();
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    EXPECT_NE(synced.err.find("images/boot.iso: .treeinfo names it"), std::string::npos)
        << synced.err;
    EXPECT_EQ(object("images/boot.iso"), read_file(tree() / "images/boot.iso"));
    const CommandResult again = mirror();
    ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
    EXPECT_EQ(repo_report().at("downloaded").get<std::size_t>(), 0U) << again.out;
    EXPECT_TRUE(repo_report().at("noop").get<bool>()) << again.out;

    const CommandResult verified =
        run_to_end({rpmirror_binary(), "verify", "-p", destination(), "--repo", "fl", "--no-cache"},
                   tmp_ / "logs");
    ASSERT_EQ(verified.exit_code, 0) << verified.out << verified.err;
    EXPECT_NE(verified.out.find("fl (.treeinfo): OK: 5 images checked, 4 verified"),
              std::string::npos)
        << verified.out;
    const CommandResult snapshot = run_to_end({rpmirror_binary(), "snapshot", "create", "--repo",
                                               "fl", "-p", destination(), "--name", "one"},
                                              tmp_ / "logs");
    ASSERT_EQ(snapshot.exit_code, 0) << snapshot.out << snapshot.err;
    auto copied = client().get_object(bucket(), prefix_ + "/snapshots/fl/one/images/boot.iso");
    ASSERT_TRUE(copied) << copied.error().to_string();
    EXPECT_EQ(*copied, read_file(tree() / "images/boot.iso"));
}

// `diff` of the tree in the bucket: against the upstream tree (its URL) after upstream changed a
// kernel and dropped a package, against a copy of the tree on disk, and against itself; a prefix
// holding a repository but no tree, against a tree, is no tree.
TEST_F(S3Treeinfo, DiffComparesTheStoredTreeWithAnotherTree) {
    ASSERT_EQ(mirror().exit_code, 0);
    const fs::path copy = tmp_ / "copy";
    fs::copy(tree(), copy, fs::copy_options::recursive);
    const std::string stored = destination() + "/fl";
    const auto diff = [&](std::vector<std::string> sides) {
        std::vector<std::string> argv{rpmirror_binary(), "diff"};
        argv.insert(argv.end(), sides.begin(), sides.end());
        return run_to_end(argv, tmp_ / "logs");
    };
    const CommandResult same = diff({stored, copy.string()});
    ASSERT_EQ(same.exit_code, 0) << same.out << same.err;
    EXPECT_NE(same.out.find("images: 0 added, 0 removed, 0 changed; repositories: 0 added, 0 "
                            "removed"),
              std::string::npos)
        << same.out;
    EXPECT_NE(same.out.find("AppStream: 0 added, 0 removed, 0 upgraded"), std::string::npos)
        << same.out;

    change_tree_upstream(tree(), true, tmp_ / "logs");
    const CommandResult changed = diff({stored, tree_server_->url("/tree/")});
    ASSERT_EQ(changed.exit_code, 0) << changed.out << changed.err;
    EXPECT_NE(changed.out.find("image changed    images/pxeboot/vmlinuz  (sha256:"),
              std::string::npos)
        << changed.out;
    EXPECT_NE(changed.out.find("AppStream: removed    "), std::string::npos) << changed.out;
    EXPECT_NE(changed.out.find("images: 0 added, 0 removed, 1 changed"), std::string::npos)
        << changed.out;

    // A prefix holding a repository, no tree.
    const CommandResult repository = diff({destination() + "/fl/BaseOS", copy.string()});
    EXPECT_EQ(repository.exit_code, 1) << repository.out << repository.err;
    EXPECT_NE(repository.err.find("no installation tree here (no .treeinfo)"), std::string::npos)
        << repository.err;
}

TEST_F(S3Treeinfo, ABadImageFailsTheTreeAndTreeinfoIsNotStored) {
    TempDir::write_at(tree() / "images/install.img", "not what .treeinfo says");
    const CommandResult failed = mirror();
    EXPECT_EQ(failed.exit_code, 1) << failed.out << failed.err;
    EXPECT_NE(failed.err.find("images/install.img"), std::string::npos) << failed.err;
    EXPECT_NE(failed.err.find("sha256 mismatch: expected "), std::string::npos) << failed.err;
    EXPECT_NE(failed.err.find(".treeinfo not published"), std::string::npos) << failed.err;
    const auto objects = tree_objects();
    EXPECT_FALSE(objects.contains(".treeinfo"));
    EXPECT_FALSE(objects.contains("images/install.img"));
    EXPECT_TRUE(objects.contains("images/pxeboot/vmlinuz"));  // the good ones are kept
}

}  // namespace
}  // namespace rpmirror::test
