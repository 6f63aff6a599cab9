// --upstream-layout into a bucket of the real Ceph RADOS Gateway: an Amazon-Linux-shaped upstream
// (integration/sync/amazon_layout.hpp: releases as GUID directories whose hrefs climb into one
// shared blobstore) mirrored to s3://BUCKET/PREFIX/<repoid>/ with upstream's paths. Each blob is
// stored once under the layout root, at the key its href resolves to, and uploaded once across
// releases; every release's mirror.list names the bucket's copy; dnf reads each release over the
// gateway's HTTP through that list; --delete removes a release's own strays but never a blob;
// an href climbing above the layout root is refused before anything is stored.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "checksum/hasher.hpp"
#include "download/download.hpp"
#include "integration/s3/s3_sync_fixture.hpp"
#include "integration/sync/amazon_layout.hpp"
#include "s3/config.hpp"
#include "s3/lease.hpp"
#include "support/http_server.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

class S3UpstreamLayout : public S3SyncTest {
  protected:
    void SetUp() override {
        S3SyncTest::SetUp();
        if (HasFatalFailure()) {
            return;
        }
        blobs_ = make_blobstore(test_repo("index-repo") / "Packages", layout(), tmp_ / "logs");
        ASSERT_GE(blobs_.size(), 11U);
        blobs_.resize(11);  // those the two releases list
        // Release 1.0 lists blobs 0-7, release 2.0 blobs 2-10: six shared.
        released_["1.0"] = {blobs_.begin(), blobs_.begin() + 8};
        released_["2.0"] = {blobs_.begin() + 2, blobs_.begin() + 11};
        make_release(layout(), "G1", released_["1.0"], tmp_.path());
        make_release(layout(), "G2", released_["2.0"], tmp_.path());
        layout_server_ = std::make_unique<NginxServer>(layout(), tmp_ / "nginx-layout");
        for (const auto& [releasever, guid] : {std::pair{"1.0", "G1"}, std::pair{"2.0", "G2"}}) {
            TempDir::write_at(
                layout() / "al2023/core/mirrors" / releasever / "x86_64/mirror.list",
                layout_server_->url("/al2023/core/guids/" + std::string(guid) + "/x86_64/") + "\n");
        }
        TempDir::write_at(tmp_ / "reposd" / "amzn.repo",
                          "[amzn]\nname=Amazon-shaped\nmirrorlist=" +
                              layout_server_->url("/al2023/core/mirrors/") +
                              "$releasever/x86_64/mirror.list\ngpgcheck=0\n");
    }

    fs::path layout() const { return tmp_ / "layout"; }

    // The mirror's root as dnf reaches it: the gateway's plain HTTP, path-style.
    std::string mirror_url() const {
        return cluster().endpoint() + "/" + bucket() + "/" + prefix_ + "/amzn/";
    }

    CommandResult mirror(const std::string& releasever, std::vector<std::string> extra = {}) {
        std::vector<std::string> args{"-c",
                                      (tmp_ / "empty.conf").string(),
                                      "--reposdir",
                                      (tmp_ / "reposd").string(),
                                      "--repo",
                                      "amzn",
                                      "--releasever",
                                      releasever,
                                      "-p",
                                      destination(),
                                      "--download-metadata",
                                      "--upstream-layout",
                                      "--s3-acl",
                                      "public-read",
                                      "--mirror-url",
                                      mirror_url(),
                                      "--json",
                                      (tmp_ / "report.json").string()};
        args.insert(args.end(), extra.begin(), extra.end());
        return run_to_end(rpmirror_sync_argv(args), tmp_ / "logs");
    }

    // Every object below s3://BUCKET/PREFIX/, by key relative to it.
    std::map<std::string, s3::ListedObject> all_objects() {
        auto listed = s3::list_mirror(client(), s3::S3Location{bucket(), prefix_ + "/"});
        EXPECT_TRUE(listed) << listed.error().to_string();
        return listed ? *listed : std::map<std::string, s3::ListedObject>{};
    }

    std::string object(const std::string& key) {
        auto body = client().get_object(bucket(), prefix_ + "/" + key);
        EXPECT_TRUE(body) << key << ": " << body.error().to_string();
        return body ? *body : std::string();
    }

    // `dnf repoquery -a` of release `releasever` over the gateway, through the bucket's own
    // mirror.list: the packages' locations, sorted.
    std::vector<std::string> dnf_lists(const std::string& releasever) {
        const fs::path work = tmp_ / ("dnf-" + releasever + "-" + std::to_string(++dnf_runs_));
        const CommandResult query =
            dnf_query_locations(work, mirror_url(), releasever, tmp_ / "logs");
        EXPECT_EQ(query.exit_code, 0) << query.out << query.err;
        std::vector<std::string> locations = lines_of(query.out);
        std::sort(locations.begin(), locations.end());
        return locations;
    }

    // The blobs of release `releasever` that are no source package.
    std::vector<std::string> binaries(const std::string& releasever) {
        std::vector<std::string> blobs;
        for (const std::string& blob : released_[releasever]) {
            if (!blob.ends_with(".src.rpm")) {
                blobs.push_back(blob);
            }
        }
        return blobs;
    }

    // `dnf download` of every binary package of release `releasever` over the gateway: the files it
    // fetched through the blobstore, by name.
    std::set<std::string> dnf_downloads(const std::string& releasever) {
        const fs::path work = tmp_ / ("get-" + releasever + "-" + std::to_string(++dnf_runs_));
        std::vector<std::string> argv = dnf_through_mirror_list(work, mirror_url());
        argv.insert(argv.end(),
                    {"--releasever=" + releasever, "--disableplugin=*", "--enableplugin=download",
                     "download", "--destdir=" + (work / "out").string()});
        for (const std::string& blob : binaries(releasever)) {
            argv.push_back(blob.substr(65, blob.size() - 65 - 4));  // the NEVRA
        }
        const CommandResult got = run_to_end(argv, tmp_ / "logs");
        EXPECT_EQ(got.exit_code, 0) << got.out << got.err;
        std::set<std::string> names;
        if (fs::is_directory(work / "out")) {
            for (const auto& entry : fs::directory_iterator(work / "out")) {
                names.insert(entry.path().filename().string());
            }
        }
        return names;
    }

    std::unique_ptr<NginxServer> layout_server_;
    std::vector<std::string> blobs_;
    std::map<std::string, std::vector<std::string>> released_;
    int dnf_runs_ = 0;
};

TEST_F(S3UpstreamLayout, TwoReleasesShareOneBlobstoreAndDnfReadsEachOverTheGateway) {
    const CommandResult first = mirror("1.0");
    ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
    EXPECT_EQ(repo_report().at("downloaded").get<std::size_t>(), 8U);
    const CommandResult second = mirror("2.0");
    ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
    // The six blobs 1.0 stored are kept from its record: only 2.0's three new ones fetched.
    EXPECT_EQ(repo_report().at("downloaded").get<std::size_t>(), 3U);
    EXPECT_EQ(repo_report().at("kept").get<std::size_t>(), 6U);

    const auto objects = all_objects();
    // Every blob once, at the key its href resolves to beneath s3://BUCKET/PREFIX/amzn/, and
    // nothing outside amzn/.
    for (const std::string& blob : blobs_) {
        const auto found = objects.find("amzn/blobstore/" + blob);
        ASSERT_NE(found, objects.end()) << blob;
        EXPECT_EQ(found->second.size, fs::file_size(layout() / "blobstore" / blob)) << blob;
    }
    for (const auto& [key, listed] : objects) {
        EXPECT_TRUE(key.starts_with("amzn/")) << key;
        EXPECT_EQ(key.find(".."), std::string::npos) << key;
    }
    for (const auto& [releasever, guid] : {std::pair{"1.0", "G1"}, std::pair{"2.0", "G2"}}) {
        const std::string path = "al2023/core/guids/" + std::string(guid) + "/x86_64";
        // Upstream's metadata, byte for byte, where upstream has it.
        for (const auto& [relative, digest] : tree_digests(layout() / path / "repodata")) {
            EXPECT_EQ(
                hash_bytes(ChecksumType::Sha256, object("amzn/" + path + "/repodata/" + relative)),
                digest)
                << relative;
        }
        EXPECT_EQ(
            object("amzn/al2023/core/mirrors/" + std::string(releasever) + "/x86_64/mirror.list"),
            mirror_url() + path + "/\n");
        std::vector<std::string> expected;
        for (const std::string& blob : released_[releasever]) {
            expected.push_back("../../../../../blobstore/" + blob);
        }
        std::sort(expected.begin(), expected.end());
        EXPECT_EQ(dnf_lists(releasever), expected) << releasever;
        EXPECT_EQ(dnf_downloads(releasever).size(), binaries(releasever).size()) << releasever;
    }

    // A second run of a release is a no-op, and stores nothing: not even its mirror list, which
    // the state records with the metadata (a proxy that forwards everything sees its requests).
    const fs::path work = tmp_ / "proxy";
    fs::create_directories(work);
    const FaultServer proxy =
        FaultServer::proxy(cluster().endpoint(), {{"rules", nlohmann::json::array()}}, work);
    ::setenv("AWS_ENDPOINT_URL", proxy.url().c_str(), 1);
    const CommandResult again = mirror("1.0");
    ::setenv("AWS_ENDPOINT_URL", cluster().endpoint().c_str(), 1);
    ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
    EXPECT_TRUE(repo_report().at("noop").get<bool>()) << again.out;
    EXPECT_EQ(repo_report().at("downloaded").get<std::size_t>(), 0U);
    const std::string list =
        "/" + bucket() + "/" + prefix_ + "/amzn/al2023/core/mirrors/1.0/x86_64/mirror.list";
    EXPECT_FALSE(proxy.requests().empty());
    for (const LoggedRequest& request : proxy.requests_for(list)) {
        EXPECT_NE(request.method, "PUT") << list;
    }
}

// A release's sync holds the lease of the layout root every release shares (-p/<repoid>/: two
// releases' runs never interleave their blobs, the catalogue or the collection) and its own
// (the one verify --repair of the release takes): either held by another worker refuses it
// before anything is stored; both are released at the end.
TEST_F(S3UpstreamLayout, AReleaseHoldsTheLayoutRootsLeaseAndItsOwn) {
    const std::string root = prefix_ + "/amzn/";
    for (const std::string& held : {root, root + "al2023/core/guids/G1/x86_64/"}) {
        auto lease = s3::Lease::acquire(client(), s3::S3Location{bucket(), held}, "other-worker:7",
                                        std::chrono::seconds(600));
        ASSERT_TRUE(lease.has_value()) << lease.error().to_string();
        const CommandResult refused = mirror("1.0");
        EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
        EXPECT_NE(refused.err.find(held + ".rpmirror/lock: being synced by other-worker:7"),
                  std::string::npos)
            << refused.err;
        for (const auto& [key, listed] : all_objects()) {
            EXPECT_TRUE(key.ends_with(".rpmirror/lock")) << held << ": " << key;
        }
    }
    const CommandResult synced = mirror("1.0");
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    std::size_t blobs = 0;
    for (const auto& [key, listed] : all_objects()) {
        EXPECT_FALSE(key.ends_with(".rpmirror/lock")) << key;
        blobs += key.starts_with("amzn/blobstore/") ? 1 : 0;
    }
    EXPECT_EQ(blobs, released_["1.0"].size());
}

// A repository served at its host's root is the layout root itself: one lease (not the same
// key taken twice), and the repository at the root of s3://BUCKET/PREFIX/<repoid>/.
TEST_F(S3UpstreamLayout, ARepositoryAtItsHostsRootIsTheLayoutRootItself) {
    const CommandResult synced = sync({"--download-metadata", "--upstream-layout"});
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    const auto listed = objects();
    EXPECT_TRUE(listed.contains("repodata/repomd.xml"));
    EXPECT_TRUE(listed.contains(kTinyHref));
    const CommandResult again = sync({"--download-metadata", "--upstream-layout"});
    ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
    EXPECT_TRUE(repo_report().at("noop").get<bool>());
}

// --delete: a release's own stray package goes; a blob goes only once no release beneath the
// root lists it (release 1.0 dropped: its prefix removed), and only a blob rpmirror stored.
TEST_F(S3UpstreamLayout, DeleteRemovesStraysAndExactlyTheBlobsNoReleaseListsAnyMore) {
    ASSERT_EQ(mirror("1.0").exit_code, 0);
    ASSERT_EQ(mirror("2.0").exit_code, 0);
    const std::string stray = prefix_ + "/amzn/al2023/core/guids/G2/x86_64/Packages/stray.rpm";
    ASSERT_TRUE(client().put_object(bucket(), stray, "not a package", {}));
    const std::string foreign = prefix_ + "/amzn/blobstore/0000/not-rpmirrors.rpm";
    ASSERT_TRUE(client().put_object(bucket(), foreign, "the admin's", {}));

    // Without --delete nothing goes; with it, while 1.0 is there, no blob goes either.
    const CommandResult kept = mirror("2.0", {"--delete"});
    ASSERT_EQ(kept.exit_code, 0) << kept.out << kept.err;
    auto objects = all_objects();
    EXPECT_FALSE(objects.contains("amzn/al2023/core/guids/G2/x86_64/Packages/stray.rpm"));
    for (const std::string& blob : blobs_) {
        EXPECT_TRUE(objects.contains("amzn/blobstore/" + blob)) << blob;
    }

    // Release 1.0 dropped: its GUID directory removed from the bucket.
    for (const auto& [key, listed] : objects) {
        if (key.starts_with("amzn/al2023/core/guids/G1/")) {
            ASSERT_TRUE(client().delete_object(bucket(), prefix_ + "/" + key));
        }
    }
    const CommandResult collected = mirror("2.0", {"--delete"});
    ASSERT_EQ(collected.exit_code, 0) << collected.out << collected.err;
    objects = all_objects();
    const std::set<std::string> listed(released_["2.0"].begin(), released_["2.0"].end());
    for (const std::string& blob : blobs_) {
        EXPECT_EQ(objects.contains("amzn/blobstore/" + blob), listed.contains(blob)) << blob;
    }
    EXPECT_TRUE(objects.contains("amzn/blobstore/0000/not-rpmirrors.rpm"));
    EXPECT_EQ(repo_report().at("deleted").size(), blobs_.size() - listed.size())
        << repo_report().dump();
    EXPECT_EQ(dnf_lists("2.0").size(), released_["2.0"].size());
}

// --keep-releases in a bucket: the release synced longest ago goes (its mirror.list, every
// object of its prefix, its lease once released) and then the blobs only it listed; a release
// rpmirror did not sync stays, named in a warning.
TEST_F(S3UpstreamLayout, KeepReleasesRemovesTheReleaseSyncedLongestAgoAndOnlyItsBlobs) {
    ASSERT_EQ(mirror("1.0").exit_code, 0);
    ASSERT_EQ(mirror("2.0").exit_code, 0);
    auto objects = all_objects();
    ASSERT_TRUE(objects.contains("amzn/al2023/core/guids/G1/x86_64/.rpmirror/release"));
    // A release an admin copied in by hand (no record of rpmirror's).
    for (const auto& [key, listed] : objects) {
        const std::string from = "amzn/al2023/core/guids/G2/";
        if (key.starts_with(from) && key.find("/.rpmirror/") == std::string::npos) {
            ASSERT_TRUE(client().copy_object(
                bucket(), prefix_ + "/amzn/al2023/core/guids/G9/" + key.substr(from.size()),
                bucket(), prefix_ + "/" + key));
        }
    }

    const CommandResult pruned = mirror("2.0", {"--delete", "--keep-releases", "1"});
    ASSERT_EQ(pruned.exit_code, 0) << pruned.out << pruned.err;
    EXPECT_NE(pruned.err.find("/amzn/al2023/core/guids/G9/x86_64/ was not synced by rpmirror"),
              std::string::npos)
        << pruned.err;
    objects = all_objects();
    for (const auto& [key, listed] : objects) {
        EXPECT_FALSE(key.starts_with("amzn/al2023/core/guids/G1/")) << key;
    }
    EXPECT_FALSE(objects.contains("amzn/al2023/core/mirrors/1.0/x86_64/mirror.list"));
    EXPECT_TRUE(objects.contains("amzn/al2023/core/mirrors/2.0/x86_64/mirror.list"));
    EXPECT_TRUE(objects.contains("amzn/al2023/core/guids/G9/x86_64/repodata/repomd.xml"));
    const std::set<std::string> listed(released_["2.0"].begin(), released_["2.0"].end());
    for (const std::string& blob : blobs_) {
        EXPECT_EQ(objects.contains("amzn/blobstore/" + blob), listed.contains(blob)) << blob;
    }
    EXPECT_EQ(dnf_lists("2.0").size(), released_["2.0"].size());
}

TEST_F(S3UpstreamLayout, AnHrefClimbingAboveTheLayoutRootIsRefusedBeforeAnythingIsStored) {
    // Release 3.0's hrefs climb one directory more than the layout has.
    const fs::path out = layout() / "al2023/core/guids/G3/x86_64";
    fs::create_directories(out);
    const fs::path pkglist = TempDir::write_at(tmp_ / "pkglist-G3", blobs_[0] + "\n");
    run_checked({"createrepo_c", "--quiet", "--no-database", "--pkglist", pkglist.string(),
                 "--location-prefix", "../../../../../../blobstore/", "--outputdir", out.string(),
                 (layout() / "blobstore").string()},
                tmp_ / "logs");
    TempDir::write_at(layout() / "al2023/core/mirrors/3.0/x86_64/mirror.list",
                      layout_server_->url("/al2023/core/guids/G3/x86_64/") + "\n");

    const CommandResult refused = mirror("3.0");
    EXPECT_NE(refused.exit_code, 0) << refused.out;
    EXPECT_NE(refused.err.find("escapes"), std::string::npos) << refused.err;
    EXPECT_NE(refused.err.find("../../../../../../blobstore/" + blobs_[0]), std::string::npos)
        << refused.err;
    for (const auto& [key, listed] : all_objects()) {
        EXPECT_TRUE(key.find("/.rpmirror/") != std::string::npos) << key << " was stored";
    }
}

}  // namespace
}  // namespace rpmirror::test

namespace rpmirror::test {
namespace {

// Release 2.0 lists a blob release 1.0 stored with other content (upstream rewrote it): the
// object is shared with 1.0 and never replaced; that package fails and 2.0 is not published.
TEST_F(S3UpstreamLayout, ASharedBlobStoredWithOtherContentIsNeverReplacedAndThePackageFails) {
    ASSERT_EQ(mirror("1.0").exit_code, 0);
    const std::string blob = released_["1.0"][3];
    const std::string key = prefix_ + "/amzn/blobstore/" + blob;
    auto before = client().head_object(bucket(), key);
    ASSERT_TRUE(before) << before.error().to_string();
    // Upstream's blob becomes another package's bytes, and release 2.0 is made again from it.
    fs::copy_file(layout() / "blobstore" / blobs_[0], layout() / "blobstore" / blob,
                  fs::copy_options::overwrite_existing);
    fs::remove_all(layout() / "al2023/core/guids/G2");
    make_release(layout(), "G2", released_["2.0"], tmp_.path());

    const CommandResult synced = mirror("2.0");
    EXPECT_EQ(synced.exit_code, 1) << synced.out << synced.err;
    EXPECT_NE(synced.err.find("s3://" + bucket() + "/" + key +
                              " is shared beyond this repository's directory and holds "),
              std::string::npos)
        << synced.err;
    EXPECT_NE(synced.err.find("this repository lists: not replaced"), std::string::npos)
        << synced.err;
    auto after = client().head_object(bucket(), key);
    ASSERT_TRUE(after) << after.error().to_string();
    EXPECT_EQ(after->etag, before->etag);  // left as it was
    EXPECT_FALSE(all_objects().contains("amzn/al2023/core/guids/G2/x86_64/repodata/repomd.xml"));
}

// A blob no rpmirror state records (another tool's object, or one of a run killed before it
// recorded its state) is judged by its content, as a file on disk is: one holding other bytes is
// never replaced and its package fails; one holding the listed package is kept (not stored
// again) and recorded.
TEST_F(S3UpstreamLayout, AnUnrecordedBlobIsJudgedByItsContentNeverOverwritten) {
    const std::string wrong = released_["1.0"][3];
    const std::string right = released_["1.0"][4];
    const std::string wrong_key = prefix_ + "/amzn/blobstore/" + wrong;
    const std::string right_key = prefix_ + "/amzn/blobstore/" + right;
    ASSERT_TRUE(client().put_object(bucket(), wrong_key, "an admin's bytes", {}));
    ASSERT_TRUE(
        client().put_object(bucket(), right_key, read_file(layout() / "blobstore" / right), {}));
    auto planted = client().head_object(bucket(), right_key);
    ASSERT_TRUE(planted) << planted.error().to_string();

    const CommandResult failed = mirror("1.0");
    EXPECT_EQ(failed.exit_code, 1) << failed.out << failed.err;
    EXPECT_NE(failed.err.find("s3://" + bucket() + "/" + wrong_key +
                              " is shared beyond this repository's directory and holds 16 bytes"),
              std::string::npos)
        << failed.err;
    // Neither judged blob was fetched: 8 packages, the planted copy kept, the other failed.
    EXPECT_EQ(repo_report().at("downloaded").get<std::size_t>(), 6U) << failed.out;
    EXPECT_EQ(object("amzn/blobstore/" + wrong), "an admin's bytes");
    EXPECT_FALSE(all_objects().contains("amzn/al2023/core/guids/G1/x86_64/repodata/repomd.xml"));

    // The admin's object gone, the release completes, fetching only that package; the planted
    // copy is kept as it is.
    ASSERT_TRUE(client().delete_object(bucket(), wrong_key));
    const CommandResult synced = mirror("1.0");
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    EXPECT_EQ(repo_report().at("downloaded").get<std::size_t>(), 1U) << synced.out;
    auto kept = client().head_object(bucket(), right_key);
    ASSERT_TRUE(kept) << kept.error().to_string();
    EXPECT_EQ(kept->etag, planted->etag);
    EXPECT_EQ(object("amzn/blobstore/" + wrong), read_file(layout() / "blobstore" / wrong));
    EXPECT_EQ(dnf_lists("1.0").size(), released_["1.0"].size());
}

}  // namespace
}  // namespace rpmirror::test

namespace rpmirror::test {
namespace {

// --s3-acl dropped on one release re-applies "private" to that release's own objects, never to
// a blob other releases serve: anonymous clients of release 1.0 still read it.
TEST_F(S3UpstreamLayout, AnAclChangeOnOneReleaseLeavesTheSharedBlobsAlone) {
    ASSERT_EQ(mirror("1.0").exit_code, 0);
    ASSERT_EQ(mirror("2.0").exit_code, 0);
    const CommandResult private_run = run_to_end(
        rpmirror_sync_argv({"-c", (tmp_ / "empty.conf").string(), "--reposdir",
                            (tmp_ / "reposd").string(), "--repo", "amzn", "--releasever", "2.0",
                            "-p", destination(), "--download-metadata", "--upstream-layout"}),
        tmp_ / "logs");
    ASSERT_EQ(private_run.exit_code, 0) << private_run.out << private_run.err;
    // A blob both releases list, and 2.0's own repomd.xml, read anonymously over the gateway.
    const std::string shared = released_["1.0"][4];
    ASSERT_NE(std::find(released_["2.0"].begin(), released_["2.0"].end(), shared),
              released_["2.0"].end());
    EXPECT_TRUE(fetch_document(mirror_url() + "blobstore/" + shared, DownloadOptions{}));
    EXPECT_FALSE(fetch_document(mirror_url() + "al2023/core/guids/G2/x86_64/repodata/repomd.xml",
                                DownloadOptions{}));
    EXPECT_EQ(dnf_lists("1.0").size(), released_["1.0"].size());
}

}  // namespace
}  // namespace rpmirror::test
