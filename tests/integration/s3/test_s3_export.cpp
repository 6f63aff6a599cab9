// `rpmirror export` from a mirror in a bucket and `rpmirror import` into a bucket (a real Ceph
// RADOS Gateway): the export snapshot copied inside the store, a complete bundle imported into
// another prefix, then an incremental one named by the first bundle's name; `rpmirror verify`
// passes on the imported mirror.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "checksum/hasher.hpp"
#include "integration/s3/s3_sync_fixture.hpp"
#include "s3/config.hpp"

namespace rpmirror::test {
namespace {

class S3ExportTest : public S3SyncTest {
  protected:
    CommandResult rpmirror(std::vector<std::string> args) {
        args.insert(args.begin(), rpmirror_binary());
        return run_to_end(args, tmp_ / "logs");
    }

    std::string far() const { return destination() + "/far"; }

    // The objects of repository "sample" under `relative` (below the test's prefix), by key
    // relative to it, rpmirror's own state aside, with their content.
    std::map<std::string, std::string> contents(const std::string& relative) {
        auto listed = s3::list_mirror(client(), s3::S3Location{bucket(), prefix_ + "/" + relative});
        EXPECT_TRUE(listed) << listed.error().to_string();
        std::map<std::string, std::string> result;
        if (!listed) {
            return result;
        }
        for (const auto& [key, object] : *listed) {
            if (key.starts_with(".rpmirror/")) {
                continue;
            }
            auto body = client().get_object(bucket(), prefix_ + "/" + relative + key);
            EXPECT_TRUE(body) << key;
            result[key] = body ? hash_bytes(ChecksumType::Sha256, *body) : "";
        }
        return result;
    }
};

TEST_F(S3ExportTest, BundlesOfABucketMirrorImportIntoABucketAndVerify) {
    ASSERT_EQ(sync({"--download-metadata"}).exit_code, 0);
    const CommandResult exported = rpmirror({"export", "-p", destination(), "--repo", "sample",
                                             "-o", (tmp_ / "b1").string(), "--chunk-size", "100k"});
    ASSERT_EQ(exported.exit_code, 0) << exported.out << exported.err;
    const std::map<std::string, std::string> first = contents("sample/");
    ASSERT_TRUE(first.contains("repodata/repomd.xml"));
    EXPECT_EQ(contents("snapshots/sample/export-b1/"), first);

    const CommandResult imported = rpmirror({"import", (tmp_ / "b1").string(), "-p", far(),
                                             "--state-dir", (tmp_ / "far-state").string()});
    ASSERT_EQ(imported.exit_code, 0) << imported.out << imported.err;
    EXPECT_EQ(contents("far/sample/"), first);
    const std::vector<std::string> verify{"verify",
                                          "-p",
                                          far(),
                                          "-c",
                                          (tmp_ / "empty.conf").string(),
                                          "--reposdir",
                                          (tmp_ / "empty-reposdir").string(),
                                          "--state-dir",
                                          (tmp_ / "far-state").string()};
    CommandResult verified = rpmirror(verify);
    EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;

    // Upstream drops a package; the next bundle is named by the first one's name only.
    std::filesystem::remove(upstream_ / kTinyHref);
    recreate_repo(upstream_, "2", tmp_ / "logs");
    ASSERT_EQ(sync({"--download-metadata", "--delete"}).exit_code, 0);
    const CommandResult incremental = rpmirror({"export", "-p", destination(), "--repo", "sample",
                                                "-o", (tmp_ / "b2").string(), "--base", "b1"});
    ASSERT_EQ(incremental.exit_code, 0) << incremental.out << incremental.err;
    const auto manifest = nlohmann::json::parse(read_file(tmp_ / "b2" / "manifest.json"));
    EXPECT_EQ(manifest.at("kind"), "incremental");
    const CommandResult applied = rpmirror({"import", (tmp_ / "b2").string(), "-p", far(),
                                            "--state-dir", (tmp_ / "far-state").string()});
    ASSERT_EQ(applied.exit_code, 0) << applied.out << applied.err;
    const std::map<std::string, std::string> second = contents("sample/");
    EXPECT_FALSE(second.contains(kTinyHref));
    EXPECT_EQ(contents("far/sample/"), second);
    verified = rpmirror(verify);
    EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;
}

}  // namespace
}  // namespace rpmirror::test
