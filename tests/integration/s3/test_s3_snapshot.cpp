// Snapshots of a mirror in a bucket (a real Ceph RADOS Gateway): `sync --snapshot`, `snapshot
// create|list|publish|remove` and --keep-snapshots on s3://, copies made inside the store, a
// published name switched in the sync's order, and a mirror that changed since its sync refused.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "integration/s3/s3_sync_fixture.hpp"
#include "s3/config.hpp"

namespace rpmirror::test {
namespace {

class S3SnapshotTest : public S3SyncTest {
  protected:
    CommandResult snapshot(const std::string& action, std::vector<std::string> extra) {
        std::vector<std::string> argv{rpmirror_binary(), "snapshot", action,       "--repo",
                                      "sample",          "-p",       destination()};
        argv.insert(argv.end(), extra.begin(), extra.end());
        return run_to_end(argv, tmp_ / "logs");
    }

    // Every object under `relative` (below the test's prefix), by key relative to it.
    std::map<std::string, s3::ListedObject> objects_under(const std::string& relative) {
        const s3::S3Location where{bucket(), prefix_ + "/" + relative};
        auto listed = s3::list_mirror(client(), where);
        EXPECT_TRUE(listed) << listed.error().to_string();
        return listed ? *listed : std::map<std::string, s3::ListedObject>{};
    }

    std::string body_of(const std::string& relative) {
        auto body = client().get_object(bucket(), prefix_ + "/" + relative);
        EXPECT_TRUE(body) << relative << ": " << body.error().to_string();
        return body ? *body : std::string();
    }

    // Upstream without the tiny package: revision "2".
    void drop_tiny_upstream() {
        std::filesystem::remove(upstream_ / kTinyHref);
        recreate_repo(upstream_, "2", tmp_ / "logs");
    }
};

TEST_F(S3SnapshotTest, SyncSnapshotCopiesTheMirrorInsideTheStore) {
    const CommandResult synced = sync({"--download-metadata", "--snapshot=one"});
    ASSERT_EQ(synced.exit_code, 0) << synced.err;
    const std::size_t packages = package_digests(upstream_).size();
    EXPECT_NE(synced.out.find("sample: snapshot one: " + std::to_string(packages) + " packages"),
              std::string::npos)
        << synced.out;

    // Every object of the mirror (rpmirror's own state aside), the same size and content.
    const auto mirror = objects();
    const auto copy = objects_under("snapshots/sample/one/");
    std::set<std::string> expected;
    for (const auto& [key, object] : mirror) {
        if (!key.starts_with(".rpmirror/")) {
            expected.insert(key);
            ASSERT_TRUE(copy.contains(key)) << key;
            EXPECT_EQ(copy.at(key).size, object.size) << key;
        }
    }
    std::set<std::string> copied;
    for (const auto& [key, object] : copy) {
        if (!key.starts_with(".rpmirror/")) {
            copied.insert(key);
        }
    }
    EXPECT_EQ(copied, expected);
    EXPECT_TRUE(copy.contains(".rpmirror/snapshot.json"));
    EXPECT_EQ(body_of("snapshots/sample/one/repodata/repomd.xml"),
              body_of("sample/repodata/repomd.xml"));

    // Upstream unchanged: a dated --snapshot takes no identical copy (the list below still
    // holds one snapshot).
    const CommandResult unchanged = sync({"--download-metadata", "--snapshot"});
    ASSERT_EQ(unchanged.exit_code, 0) << unchanged.err;
    EXPECT_NE(unchanged.out.find("sample: snapshot: none taken, unchanged since snapshot one"),
              std::string::npos)
        << unchanged.out;

    // What an interrupted creation left (objects, no manifest) is no snapshot, and the next
    // creation removes it.
    ASSERT_TRUE(
        client().put_object(bucket(), prefix_ + "/snapshots/sample/half/" + kTinyHref, "x"));
    const CommandResult listed = snapshot("list", {"--json"});
    ASSERT_EQ(listed.exit_code, 0) << listed.err;
    const auto json = nlohmann::json::parse(listed.out);
    ASSERT_EQ(json.at("snapshots").size(), 1U) << listed.out;
    EXPECT_EQ(json.at("snapshots").at(0).at("name"), "one");
    EXPECT_EQ(json.at("snapshots").at(0).at("packages"), packages);
    EXPECT_EQ(json.at("snapshots").at(0).at("path"),
              "s3://" + bucket() + "/" + prefix_ + "/snapshots/sample/one");

    const CommandResult again = snapshot("create", {"--name", "one"});
    EXPECT_NE(again.exit_code, 0);
    EXPECT_NE(again.err.find("snapshot one of repository sample exists already"), std::string::npos)
        << again.err;
    ASSERT_EQ(snapshot("create", {"--name", "two"}).exit_code, 0);
    EXPECT_TRUE(objects_under("snapshots/sample/half/").empty());
    EXPECT_FALSE(objects().contains(".rpmirror/lock")) << "the lease was released";
}

TEST_F(S3SnapshotTest, PublishedNameSwitchesAndKeepSnapshotsNeverRemovesAPublishedOne) {
    ASSERT_EQ(sync({"--download-metadata"}).exit_code, 0);
    ASSERT_EQ(snapshot("create", {"--name", "one"}).exit_code, 0);
    const std::string index_one = body_of("snapshots/sample/one/repodata/repomd.xml");
    drop_tiny_upstream();
    revisions_.push_back(upstream_);
    const CommandResult resynced = sync({"--download-metadata", "--delete"});
    ASSERT_EQ(resynced.exit_code, 0) << resynced.err;
    ASSERT_EQ(snapshot("create", {"--name", "two"}).exit_code, 0);
    const std::string index_two = body_of("snapshots/sample/two/repodata/repomd.xml");
    ASSERT_NE(index_one, index_two);

    const CommandResult published = snapshot("publish", {"one", "--as", "prod"});
    ASSERT_EQ(published.exit_code, 0) << published.err;
    EXPECT_EQ(body_of("published/prod/sample/repodata/repomd.xml"), index_one);
    EXPECT_TRUE(objects_under("published/prod/sample/").contains(kTinyHref));

    // diff reads snapshots, published names and mirrors in the bucket.
    const CommandResult diffed = run_to_end({rpmirror_binary(), "diff", "-p", destination(),
                                             "published:prod/sample", "snapshot:sample/two"},
                                            tmp_ / "logs");
    EXPECT_EQ(diffed.exit_code, 0) << diffed.err;
    EXPECT_NE(diffed.out.find("removed    rpmirror-sample-tiny.noarch  1.0-1"), std::string::npos)
        << diffed.out;
    EXPECT_NE(diffed.out.find("0 added, 1 removed, 0 upgraded"), std::string::npos) << diffed.out;
    const CommandResult same = run_to_end(
        {rpmirror_binary(), "diff", destination() + "/sample", upstream_.string()}, tmp_ / "logs");
    EXPECT_EQ(same.exit_code, 0) << same.err;
    EXPECT_NE(same.out.find("0 added, 0 removed, 0 upgraded"), std::string::npos) << same.out;
    const CommandResult missing = run_to_end(
        {rpmirror_binary(), "diff", destination() + "/nothing", upstream_.string()}, tmp_ / "logs");
    EXPECT_EQ(missing.exit_code, 1);
    EXPECT_NE(missing.err.find(destination() + "/nothing: no repository here"), std::string::npos)
        << missing.err;

    // --keep-snapshots 1: "two" goes, "one" is published and stays.
    const CommandResult pruned = snapshot("create", {"--name", "three", "--keep-snapshots", "1"});
    ASSERT_EQ(pruned.exit_code, 0) << pruned.err;
    EXPECT_NE(pruned.out.find("sample: removed snapshot two"), std::string::npos) << pruned.out;
    EXPECT_TRUE(objects_under("snapshots/sample/two/").empty());
    EXPECT_FALSE(objects_under("snapshots/sample/one/").empty());

    const CommandResult refused = snapshot("remove", {"one"});
    EXPECT_NE(refused.exit_code, 0);
    EXPECT_NE(refused.err.find("is published as prod"), std::string::npos) << refused.err;

    // The switch: the new index, the packages it lists; the old revision's records stay one more
    // publication (a reader that fetched the old index can still fetch them).
    ASSERT_EQ(snapshot("publish", {"three", "--as", "prod"}).exit_code, 0);
    const std::string index_three = body_of("published/prod/sample/repodata/repomd.xml");
    EXPECT_EQ(index_three, index_two);
    const auto prod = objects_under("published/prod/sample/");
    EXPECT_FALSE(prod.contains(kTinyHref));
    auto parsed = parse_repomd(index_three, "repomd.xml");
    ASSERT_TRUE(parsed);
    for (const RepomdRecord& record : parsed->records) {
        EXPECT_TRUE(prod.contains(record.location_href)) << record.location_href;
    }
    for (const std::string& href : record_hrefs(index_one)) {
        EXPECT_TRUE(prod.contains(href)) << "a record of the replaced revision: " << href;
    }
    const CommandResult removed = snapshot("remove", {"one"});
    EXPECT_EQ(removed.exit_code, 0) << removed.err;
    EXPECT_TRUE(objects_under("snapshots/sample/one/").empty());
    const CommandResult listed = snapshot("list", {});
    EXPECT_EQ(listed.out.find("one:"), std::string::npos) << listed.out;
    EXPECT_NE(listed.out.find("three: 4 packages"), std::string::npos) << listed.out;
    EXPECT_NE(listed.out.find("published as prod"), std::string::npos) << listed.out;
}

// A --snapshot-dir in another bucket of the endpoint: snapshots and published names are copied
// there from the mirror's bucket (server-side), and a published name's marker written before
// markers named their tree (the snapshot's name only) still counts.
TEST_F(S3SnapshotTest, AnotherBucketHoldsTheSnapshotsAndPublishedNames) {
    ASSERT_EQ(sync({"--download-metadata"}).exit_code, 0);
    const std::string other = bucket() + "-snapshots";
    ASSERT_TRUE(client().create_bucket(other));
    const auto cleanup = [&] {
        if (auto listed = client().list_all_objects(other, "")) {
            std::vector<std::string> keys;
            for (const auto& object : *listed) {
                keys.push_back(object.key);
            }
            if (!keys.empty()) {
                (void)client().delete_objects(other, keys);
            }
        }
        (void)client().delete_bucket(other);
    };
    const std::string base = "s3://" + other + "/base";
    const CommandResult created = snapshot("create", {"--name", "one", "--snapshot-dir", base});
    EXPECT_EQ(created.exit_code, 0) << created.err;
    const auto copy =
        s3::list_mirror(client(), s3::S3Location{other, "base/snapshots/sample/one/"});
    ASSERT_TRUE(copy) << copy.error().to_string();
    EXPECT_TRUE(copy->contains(kTinyHref));
    EXPECT_TRUE(copy->contains("repodata/repomd.xml"));
    EXPECT_TRUE(objects_under("snapshots/").empty()) << "nothing in the mirror's bucket";

    const CommandResult published =
        snapshot("publish", {"one", "--as", "prod", "--snapshot-dir", base});
    EXPECT_EQ(published.exit_code, 0) << published.err;
    auto index = client().get_object(other, "base/published/prod/sample/repodata/repomd.xml");
    ASSERT_TRUE(index) << index.error().to_string();
    EXPECT_EQ(*index, body_of("sample/repodata/repomd.xml"));

    ASSERT_TRUE(client().put_object(other, "base/published/old/sample/.rpmirror/published.json",
                                    R"({"version": 1, "snapshot": "one"})"));
    const CommandResult listed = snapshot("list", {"--snapshot-dir", base});
    EXPECT_EQ(listed.exit_code, 0) << listed.err;
    EXPECT_NE(listed.out.find("published as old, prod"), std::string::npos) << listed.out;
    const CommandResult refused = snapshot("remove", {"one", "--snapshot-dir", base});
    EXPECT_NE(refused.exit_code, 0);
    EXPECT_NE(refused.err.find("is published as old, prod"), std::string::npos) << refused.err;
    cleanup();
}

TEST_F(S3SnapshotTest, AMirrorChangedSinceItsSyncIsRefusedAndNothingIsWritten) {
    ASSERT_EQ(sync({"--download-metadata"}).exit_code, 0);
    ASSERT_TRUE(client().put_object(bucket(), key(kTinyHref), "not the package"));
    const CommandResult refused = snapshot("create", {"--name", "bad"});
    EXPECT_NE(refused.exit_code, 0);
    EXPECT_NE(refused.err.find("not a complete, verified mirror: 1 problem(s): " + kTinyHref +
                               ": size mismatch"),
              std::string::npos)
        << refused.err;
    EXPECT_TRUE(objects_under("snapshots/").empty());

    // Without a completed sync there is nothing to snapshot.
    const CommandResult unsynced = run_to_end(
        {rpmirror_binary(), "snapshot", "create", "--repo", "other", "-p", destination()},
        tmp_ / "logs");
    EXPECT_NE(unsynced.exit_code, 0);
    EXPECT_NE(unsynced.err.find("no completed `rpmirror sync` recorded"), std::string::npos)
        << unsynced.err;
}

}  // namespace
}  // namespace rpmirror::test
