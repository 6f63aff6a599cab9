// `rpmirror sync -p s3://BUCKET/PREFIX`: a real repository (rpmbuild + createrepo_c) served by
// real nginx, mirrored by the real binary into a real Ceph RADOS Gateway.
#include <fcntl.h>
#include <sys/file.h>

#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "checksum/hasher.hpp"
#include "integration/s3/s3_sync_fixture.hpp"
#include "metadata/metadata.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "s3/config.hpp"
#include "s3/mirror_state.hpp"
#include "s3/upload.hpp"
#include "store/spool.hpp"
#include "support/child_process.hpp"
#include "support/nginx.hpp"
#include "support/temp_dir.hpp"
#include "support/zypper.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror::test {
namespace {

TEST_F(S3SyncTest, FullSyncUploadsPackagesMetadataAndState) {
    const CommandResult result = sync({"--download-metadata"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const auto listed = objects();
    const auto packages = package_digests(upstream_);
    ASSERT_FALSE(packages.empty());
    for (const auto& [path, digest] : packages) {
        const auto found = listed.find(path);
        ASSERT_NE(found, listed.end()) << path;
        EXPECT_EQ(found->second.size, std::filesystem::file_size(upstream_ / path)) << path;
        auto info = client().head_object(bucket(), key(path));
        ASSERT_TRUE(info) << info.error().to_string();
        EXPECT_EQ(info->metadata["sha256"], digest) << path;
    }
    for (const auto& entry : std::filesystem::directory_iterator(upstream_ / "repodata")) {
        const std::string relative = "repodata/" + entry.path().filename().string();
        ASSERT_TRUE(listed.contains(relative)) << relative;
        EXPECT_EQ(listed.at(relative).size, entry.file_size()) << relative;
    }
    auto repomd = client().get_object(bucket(), key("repodata/repomd.xml"));
    ASSERT_TRUE(repomd);
    EXPECT_EQ(*repomd, read_file(upstream_ / "repodata" / "repomd.xml"));
    auto state = s3::load_state(client(), s3::S3Location{bucket(), prefix_ + "/sample/"});
    ASSERT_TRUE(state && *state);
    EXPECT_EQ((*state)->repomd_sha256,
              hash_bytes(ChecksumType::Sha256, read_file(upstream_ / "repodata" / "repomd.xml")));
    for (const auto& [path, digest] : packages) {
        ASSERT_TRUE((*state)->objects.contains(path)) << path;
        EXPECT_EQ((*state)->objects.at(path).digest, digest);
        EXPECT_TRUE(s3::still_matches((*state)->objects.at(path), listed.at(path))) << path;
    }
    const nlohmann::json report = repo_report();
    EXPECT_EQ(report.at("downloaded").get<std::size_t>(), packages.size());
    EXPECT_TRUE(report.at("ok").get<bool>());
}

// --flatten-hrefs into a bucket: an upstream whose hrefs climb into a blobstore beside it
// (Amazon Linux's layout, built here with createrepo_c --location-prefix) becomes a
// self-contained repository in the bucket: the blobs under blobstore/ of the repository's
// prefix, and the published primary.xml naming them there.
TEST_F(S3SyncTest, FlattenHrefsPublishesASelfContainedRepository) {
    std::vector<std::string> blobs;
    for (const auto& [path, digest] : package_digests(upstream_)) {
        const std::string name = std::filesystem::path(path).filename().string();
        const auto blob = upstream_ / "amzn" / "blobstore" / digest / name;
        std::filesystem::create_directories(blob.parent_path());
        std::filesystem::copy_file(upstream_ / path, blob);
        blobs.push_back(digest + "/" + name);
    }
    ASSERT_FALSE(blobs.empty());
    const auto release = upstream_ / "amzn" / "guids" / "G" / "x86_64";
    std::filesystem::create_directories(release);
    run_checked(
        {"createrepo_c", "--quiet", "--no-database", "--location-prefix", "../../../blobstore/",
         "--outputdir", release.string(), (upstream_ / "amzn" / "blobstore").string()},
        tmp_ / "logs");
    repo_url_ = server_->url("/amzn/guids/G/x86_64/");

    const CommandResult result = sync({"--download-metadata", "--flatten-hrefs"});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    const auto listed = objects();
    for (const std::string& blob : blobs) {
        EXPECT_TRUE(listed.contains("blobstore/" + blob)) << blob;
    }
    auto repomd = client().get_object(bucket(), key("repodata/repomd.xml"));
    ASSERT_TRUE(repomd);
    auto parsed = parse_repomd(*repomd, "repomd.xml");
    ASSERT_TRUE(parsed) << parsed.error().to_string();
    for (const RepomdRecord& record : parsed->records) {
        EXPECT_TRUE(listed.contains(record.location_href)) << record.location_href;
    }
    const RepomdRecord* primary = parsed->find("primary");
    ASSERT_NE(primary, nullptr);
    auto compressed = client().get_object(bucket(), key(primary->location_href));
    ASSERT_TRUE(compressed);
    const auto gz = TempDir::write_at(tmp_ / "primary.xml.gz", *compressed);
    const CommandResult xml = run_to_end({"gzip", "-dc", gz.string()}, tmp_ / "logs");
    ASSERT_EQ(xml.exit_code, 0);
    EXPECT_EQ(xml.out.find("href=\"../"), std::string::npos);
    for (const std::string& blob : blobs) {
        EXPECT_NE(xml.out.find("href=\"blobstore/" + blob + "\""), std::string::npos) << blob;
    }
}

// zypper (its own downloader, parser and checks) refreshes, lists and downloads a mirror that
// rpmirror published public-read in the bucket, straight from the gateway's HTTP.
TEST_F(S3SyncTest, ZypperReadsAPublicReadMirrorThroughTheGateway) {
    const CommandResult result = sync({"--download-metadata", "--s3-acl", "public-read"});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    const std::string url = cluster().endpoint() + "/" + bucket() + "/" + prefix_ + "/sample/";
    const std::filesystem::path root = tmp_ / "zypper-root";
    std::filesystem::create_directories(root);
    const auto zypper = [&](const std::vector<std::string>& args) {
        std::vector<std::string> argv{zypper_binary().string(), "--root", root.string(),
                                      "--non-interactive", "--no-gpg-checks"};
        argv.insert(argv.end(), args.begin(), args.end());
        return run_to_end(argv, tmp_ / "logs");
    };
    const CommandResult added = zypper({"addrepo", "-f", url, "s3m"});
    ASSERT_EQ(added.exit_code, 0) << added.out << added.err;
    const CommandResult refreshed = zypper({"refresh"});
    ASSERT_EQ(refreshed.exit_code, 0) << refreshed.out << refreshed.err;
    const CommandResult listed = zypper({"packages", "-r", "s3m"});
    ASSERT_EQ(listed.exit_code, 0) << listed.out << listed.err;
    std::size_t rows = 0;
    for (const std::string& line : lines_of(listed.out)) {
        rows += line.find("| s3m ") != std::string::npos ? 1 : 0;
    }
    EXPECT_EQ(rows, package_digests(upstream_).size()) << listed.out;
    const CommandResult downloaded = zypper({"download", "rpmirror-sample-small"});
    ASSERT_EQ(downloaded.exit_code, 0) << downloaded.out << downloaded.err;
    std::size_t files = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
        if (entry.path().filename() == "rpmirror-sample-small-1.0-1.noarch.rpm") {
            ++files;
            EXPECT_EQ(read_file(entry.path()),
                      read_file(upstream_ / "Packages/rpmirror-sample-small-1.0-1.noarch.rpm"));
        }
    }
    EXPECT_EQ(files, 1U);
}

TEST_F(S3SyncTest, NoopCostsOneStateGetAndOneListing) {
    ASSERT_EQ(sync({"--download-metadata"}).exit_code, 0);
    const CommandResult again = sync({"--download-metadata"});
    ASSERT_EQ(again.exit_code, 0) << again.err;
    const nlohmann::json report = repo_report();
    EXPECT_TRUE(report.at("noop").get<bool>());
    // The lease (its create, the repeated create that shows the store excludes others, and the
    // replacement of another version that shows it honours If-Match), the state GET and one
    // LIST (fewer than 1000 objects): no HEAD per package, no upload. (The lease's release comes
    // after the report.)
    EXPECT_EQ(report.at("s3_requests").get<std::uint64_t>(), 5U);
    EXPECT_EQ(report.at("kept").get<std::size_t>(), package_digests(upstream_).size());
}

TEST_F(S3SyncTest, ChangedObjectIsUploadedAgain) {
    ASSERT_EQ(sync({}).exit_code, 0);
    const std::string path = package_digests(upstream_).begin()->first;
    ASSERT_TRUE(client().put_object(bucket(), key(path), "overwritten"));
    const CommandResult again = sync({});
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_FALSE(repo_report().at("noop").get<bool>());
    EXPECT_EQ(repo_report().at("downloaded").get<std::size_t>(), 1U);
    EXPECT_EQ(objects().at(path).size, std::filesystem::file_size(upstream_ / path));
}

TEST_F(S3SyncTest, NewRevisionKeepsPreviousRecordsOneRun) {
    ASSERT_EQ(sync({"--download-metadata"}).exit_code, 0);
    std::set<std::string> first_records;
    for (const auto& [relative, object] : objects()) {
        if (relative.starts_with("repodata/") && relative != "repodata/repomd.xml") {
            first_records.insert(relative);
        }
    }
    const auto packages = package_digests(upstream_);
    const std::string removed = packages.begin()->first;
    std::filesystem::remove(upstream_ / removed);
    recreate_repo(upstream_, "2", tmp_ / "logs");
    const CommandResult second = sync({"--download-metadata", "--delete"});
    ASSERT_EQ(second.exit_code, 0) << second.err;
    auto listed = objects();
    EXPECT_EQ(*client().get_object(bucket(), key("repodata/repomd.xml")),
              read_file(upstream_ / "repodata" / "repomd.xml"));
    EXPECT_FALSE(listed.contains(removed)) << "--delete";
    const nlohmann::json report = repo_report();
    ASSERT_EQ(report.at("deleted").size(), 1U);
    EXPECT_EQ(report.at("deleted").at(0).get<std::string>(), removed);
    for (const std::string& record : first_records) {
        EXPECT_TRUE(listed.contains(record)) << "kept one more run: " << record;
    }
    expect_published_complete("revision 2");
    // Revision 3: revision 1's records go (none of them is listed by revision 2 or 3).
    std::filesystem::copy_file(test_repo("sample-repo") / removed, upstream_ / removed);
    recreate_repo(upstream_, "3", tmp_ / "logs");
    ASSERT_EQ(sync({"--download-metadata"}).exit_code, 0);
    listed = objects();
    auto published = parse_repomd(read_file(upstream_ / "repodata" / "repomd.xml"), "r");
    ASSERT_TRUE(published);
    std::set<std::string> third;
    for (const RepomdRecord& record : published->records) {
        third.insert(record.location_href);
    }
    for (const std::string& record : first_records) {
        if (!third.contains(record)) {
            EXPECT_FALSE(listed.contains(record)) << "revision 1's, collected: " << record;
        }
    }
    EXPECT_TRUE(listed.contains(removed));
    expect_published_complete("revision 3");
}

// The first request of a sync is for the lock object; what is missing is the bucket, and the
// error says so: the bucket, the endpoint it was looked for at, and how to go on.
TEST_F(S3SyncTest, MissingBucketNamesBucketAndCode) {
    const std::string name = "no-such-bucket-" + std::to_string(::getpid());
    const std::string missing = "s3://" + name + "/m";
    std::vector<std::string> args{"-c",
                                  (tmp_ / "empty.conf").string(),
                                  "--reposdir",
                                  (tmp_ / "empty-reposdir").string(),
                                  "--repofrompath",
                                  "sample," + server_->url("/"),
                                  "--repo",
                                  "sample",
                                  "-p",
                                  missing,
                                  "--download-metadata"};
    const CommandResult result = run_to_end(rpmirror_sync_argv(args), tmp_ / "logs");
    EXPECT_NE(result.exit_code, 0);
    EXPECT_NE(result.err.find("s3://no-such-bucket-"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("NoSuchBucket"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("bucket '" + name + "' does not exist at " + cluster().endpoint()),
              std::string::npos)
        << result.err;
    EXPECT_NE(result.err.find("create it"), std::string::npos) << result.err;
    EXPECT_EQ(result.err.find(".rpmirror/lock"), std::string::npos) << result.err;
}

TEST_F(S3SyncTest, BadCredentialsNameBucketAndCodeAndPublishNothing) {
    ::setenv("AWS_SECRET_ACCESS_KEY", "wrong-secret-key", 1);
    const CommandResult result = sync({"--download-metadata"});
    ::setenv("AWS_SECRET_ACCESS_KEY", cluster().env().at("AWS_SECRET_ACCESS_KEY").c_str(), 1);
    EXPECT_NE(result.exit_code, 0);
    EXPECT_NE(result.err.find("s3://" + bucket()), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("SignatureDoesNotMatch"), std::string::npos) << result.err;
    EXPECT_TRUE(objects().empty());
}

TEST_F(S3SyncTest, LocalMetadataPathWithS3DestinationIsRefused) {
    const CommandResult result =
        sync({"--download-metadata", "--metadata-path", (tmp_ / "meta").string()});
    EXPECT_NE(result.exit_code, 0);
    EXPECT_NE(result.err.find("--metadata-path"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find(destination()), std::string::npos) << result.err;
    EXPECT_TRUE(objects().empty());
}

TEST_F(S3SyncTest, SmallPartSizeUploadsInPartsAndLeavesNoUpload) {
    // A 12 MiB file in 5 MiB parts: three parts.
    std::string big(12U << 20, '\0');
    for (std::size_t i = 0; i < big.size(); ++i) {
        big[i] = static_cast<char>((i * 2654435761U) >> 24);
    }
    const auto file = TempDir::write_at(tmp_ / "big.rpm", big);
    s3::UploadSpec spec;
    spec.checksum_type = ChecksumType::Sha512;
    spec.digest = hash_bytes(ChecksumType::Sha512, big);
    spec.part_size = s3::kMinPartSize;
    auto stored = s3::upload_file(client(), bucket(), key("big.rpm"), file, spec);
    ASSERT_TRUE(stored) << stored.error().to_string();
    EXPECT_EQ(stored->size, big.size());
    auto info = client().head_object(bucket(), key("big.rpm"));
    ASSERT_TRUE(info);
    EXPECT_EQ(info->etag, stored->etag);
    EXPECT_NE(info->etag.find("-3"), std::string::npos) << info->etag;  // a multipart ETag
    EXPECT_EQ(info->metadata["sha256"], hash_bytes(ChecksumType::Sha256, big));
    EXPECT_EQ(info->metadata["sha512"], spec.digest);
    EXPECT_EQ(*client().get_object(bucket(), key("big.rpm")), big);
    auto uploads = client().list_multipart_uploads(bucket(), prefix_);
    ASSERT_TRUE(uploads);
    EXPECT_TRUE(uploads->empty());
}

TEST_F(S3SyncTest, FailedMultipartUploadIsAborted) {
    // Parts of 1 MiB: the store refuses to complete the upload (EntityTooSmall); the upload
    // must then be aborted, leaving neither the object nor its parts.
    const std::string big(3U << 20, 'x');
    const auto file = TempDir::write_at(tmp_ / "big.rpm", big);
    s3::UploadSpec spec;
    spec.digest = hash_bytes(ChecksumType::Sha256, big);
    spec.part_size = 1U << 20;
    auto stored = s3::upload_file(client(), bucket(), key("big.rpm"), file, spec);
    ASSERT_FALSE(stored);
    EXPECT_NE(stored.error().subject.find(key("big.rpm")), std::string::npos)
        << stored.error().to_string();
    EXPECT_NE(stored.error().message.find("EntityTooSmall"), std::string::npos)
        << stored.error().to_string();
    auto uploads = client().list_multipart_uploads(bucket(), prefix_);
    ASSERT_TRUE(uploads);
    EXPECT_TRUE(uploads->empty());
    EXPECT_FALSE(objects().contains("big.rpm"));
}

TEST_F(S3SyncTest, ChangingTheAclIsNoNoopAndReachesTheObjectsAlreadyThere) {
    // The HTTP status the gateway gives an anonymous GET (curl: an independent client).
    const auto anonymous_status = [&](const std::string& relative) {
        const CommandResult status =
            run_to_end({"curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                        cluster().endpoint() + "/" + bucket() + "/" + key(relative)},
                       tmp_ / "logs");
        EXPECT_EQ(status.exit_code, 0) << status.err;
        return status.out;
    };
    const std::string package = package_digests(upstream_).begin()->first;
    ASSERT_EQ(sync({"--download-metadata"}).exit_code, 0);
    EXPECT_EQ(anonymous_status(package), "403");
    // The same upstream, now public-read: not a no-op, nothing uploaded again, every object
    // (packages and metadata) readable by dnf without credentials.
    ASSERT_EQ(sync({"--download-metadata", "--s3-acl", "public-read"}).exit_code, 0);
    EXPECT_FALSE(repo_report().at("noop").get<bool>());
    EXPECT_EQ(repo_report().at("downloaded").get<std::size_t>(), 0U);
    for (const auto& [relative, listed] : objects()) {
        if (!relative.starts_with(".rpmirror/")) {
            EXPECT_EQ(anonymous_status(relative), "200") << relative;
        }
    }
    ASSERT_EQ(sync({"--download-metadata", "--s3-acl", "public-read"}).exit_code, 0);
    EXPECT_TRUE(repo_report().at("noop").get<bool>());
    // And back: without --s3-acl the objects are private again.
    ASSERT_EQ(sync({"--download-metadata"}).exit_code, 0);
    EXPECT_FALSE(repo_report().at("noop").get<bool>());
    EXPECT_EQ(anonymous_status(package), "403");
    EXPECT_EQ(anonymous_status("repodata/repomd.xml"), "403");
}

// The kill points of KillAtAnyStoreWrite split into shards, each a test of its own: ctest runs
// them side by side, and none comes near the 600 s limit under the sanitizers (the whole walk took
// 110 s in one test without them).
struct KillShard {
    bool replacing;  // a revision change (every write a point) or a first sync (sampled)
    int shard;       // this test's points: every shards-th kill point, from the shard-th
    int shards;
};

// Also the ctest names' suffix (tests/ctest_cost.cmake names the shards whole).
void PrintTo(const KillShard& shard, std::ostream* out) {
    *out << (shard.replacing ? "replacing" : "first sync") << ", shard " << shard.shard << " of "
         << shard.shards;
}

class S3KillTest : public S3SyncTest, public ::testing::WithParamInterface<KillShard> {};

TEST_P(S3KillTest, KillAtAnyStoreWriteNeverPublishesIncompleteMetadata) {
    const KillShard param = GetParam();
    const bool replacing = param.replacing;
    // Revision 2 upstream beside revision 1: a kill may hit a first sync or the replacement
    // of published metadata.
    const std::filesystem::path second = copy_repo(upstream_, tmp_ / "upstream-2");
    std::filesystem::remove(second / package_digests(second).begin()->first);
    recreate_repo(second, "2", tmp_ / "logs");
    NginxServer second_server(second, tmp_ / "nginx-2");
    revisions_ = {upstream_, second};
    const std::string first_url = repo_url_;
    const std::string base = prefix_;
    const std::vector<std::string> args{"--download-metadata", "--s3-parallel", "1", "--delete",
                                        "--wait-lock=120"};
    ::setenv("RPMIRROR_S3_LEASE_TTL", "3", 1);
    int kills = 0;
    int points = 0;
    // The store writes (PUT, POST, DELETE) of an uninterrupted run, counted from its requests
    // less the state GET and the listing (the lease's creates are writes: a kill after them
    // leaves a lock whose process is gone; the next run waits for it to expire, after
    // RPMIRROR_S3_LEASE_TTL, with --lock-wait). Renewals and reads of the lease count too: a few
    // of the points then hit the same write twice.
    prefix_ = base + (replacing ? "-count-2" : "-count-1");
    repo_url_ = first_url;
    if (replacing) {
        ASSERT_EQ(sync(args).exit_code, 0);
        repo_url_ = second_server.url("/");
    }
    ASSERT_EQ(sync(args).exit_code, 0);
    const auto writes = repo_report().at("s3_requests").get<std::uint64_t>() - 2;
    ASSERT_GE(writes, 6U);
    // A revision change is publication from its first write to its last: every write is a kill
    // point there; a first sync is mostly package uploads, sampled.
    const std::uint64_t stride = replacing ? 1 : std::max<std::uint64_t>(1, writes / 4);
    for (std::uint64_t point = 1; point <= writes; point += stride) {
        if (static_cast<int>(((point - 1) / stride) % param.shards) != param.shard) {
            continue;
        }
        ++points;
        prefix_ = base + (replacing ? "-r-" : "-f-") + std::to_string(point);
        const std::string when = (replacing ? "replacing, " : "first sync, ") +
                                 std::string("kill:s3:") + std::to_string(point);
        repo_url_ = first_url;
        if (replacing) {
            ASSERT_EQ(sync(args).exit_code, 0) << when;
            repo_url_ = second_server.url("/");
        }
        const CommandResult killed = sync(args, "kill:s3:" + std::to_string(point));
        if (killed.err.find("rpmirror-fault: kill before s3") != std::string::npos) {
            ++kills;
        }
        expect_published_complete(when);
        const CommandResult final_run = sync(args);
        ASSERT_EQ(final_run.exit_code, 0) << when << final_run.err;
        expect_published_complete(when + ", then a full run");
        EXPECT_EQ(*client().get_object(bucket(), key("repodata/repomd.xml")),
                  read_file((replacing ? second : upstream_) / "repodata" / "repomd.xml"))
            << when;
        ASSERT_EQ(sync(args).exit_code, 0) << when;
        EXPECT_TRUE(repo_report().at("noop").get<bool>()) << when;
    }
    ::unsetenv("RPMIRROR_S3_LEASE_TTL");
    // Every point is a write of an uninterrupted run, and a run killed there says so; only
    // points past the killed run's last write (renewals and reads of the lease, counted as
    // writes, vary with the machine's speed) may pass without a kill.
    ASSERT_GE(points, 1);
    EXPECT_GE(kills, (points + 1) / 2) << points << " points of " << writes << " writes";
}

INSTANTIATE_TEST_SUITE_P(Points, S3KillTest,
                         ::testing::Values(KillShard{false, 0, 1}, KillShard{true, 0, 4},
                                           KillShard{true, 1, 4}, KillShard{true, 2, 4},
                                           KillShard{true, 3, 4}),
                         [](const ::testing::TestParamInfo<KillShard>& info) {
                             return std::string(info.param.replacing ? "Replacing" : "FirstSync") +
                                    std::to_string(info.param.shard) + "of" +
                                    std::to_string(info.param.shards);
                         });

TEST_F(S3SyncTest, DefaultSpoolIsInMemoryAndNothingIsWrittenUnderTmpdir) {
    ASSERT_TRUE(store::is_memory_backed(store::kDefaultSpoolParent))
        << "/dev/shm is not a tmpfs here";
    // The child's $TMPDIR: empty before, and it must stay so (no disk spool, no metadata stage).
    const std::filesystem::path tmpdir = tmp_ / "child-tmpdir";
    std::filesystem::create_directories(tmpdir);
    const char* saved = std::getenv("TMPDIR");
    const std::string saved_value = saved != nullptr ? saved : "";
    ::setenv("TMPDIR", tmpdir.c_str(), 1);
    const CommandResult result = sync({"--download-metadata"});
    if (saved != nullptr) {
        ::setenv("TMPDIR", saved_value.c_str(), 1);
    } else {
        ::unsetenv("TMPDIR");
    }
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const nlohmann::json report = repo_report();
    const std::filesystem::path spool = report.at("s3_spool").get<std::string>();
    EXPECT_EQ(spool.parent_path(), store::kDefaultSpoolParent);
    EXPECT_TRUE(spool.filename().string().starts_with("rpmirror-s3-spool-")) << spool;
    EXPECT_TRUE(report.at("s3_spool_in_memory").get<bool>());
    EXPECT_FALSE(std::filesystem::exists(spool)) << "the spool outlived the run";
    EXPECT_TRUE(std::filesystem::is_empty(tmpdir))
        << std::filesystem::directory_iterator(tmpdir)->path();
    EXPECT_EQ(report.at("downloaded").get<std::size_t>(), package_digests(upstream_).size());
    expect_published_complete("default spool");
}

TEST_F(S3SyncTest, SpoolDirAndSizeOptionsAndStaleSpoolsOfDeadRunsAreRemoved) {
    const std::filesystem::path parent = tmp_ / "spool";
    const std::filesystem::path stale =
        parent / ("rpmirror-s3-spool-" + std::to_string(dead_pid()) + "-Ab12Cd");
    const std::filesystem::path live =
        parent / ("rpmirror-s3-spool-" + std::to_string(::getpid()) + "-Ef34Gh");
    TempDir::write_at(stale / "Packages" / "left-by-a-killed-run.rpm", "partial");
    TempDir::write_at(stale / ".owner", "");  // its lock went with the killed run
    std::filesystem::create_directories(live);
    TempDir::write_at(live / ".owner", "");
    const UniqueFd held(::open((live / ".owner").c_str(), O_RDONLY | O_CLOEXEC));
    ASSERT_EQ(::flock(held.get(), LOCK_EX | LOCK_NB), 0);
    // The smallest spool (one 5 MiB part): every small package still passes, batch by batch.
    const CommandResult result = sync({"--download-metadata", "--s3-spool-dir", parent.string(),
                                       "--s3-spool-size", "5M", "--s3-part-size", "5M"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_FALSE(std::filesystem::exists(stale)) << "a dead run's spool was left";
    EXPECT_TRUE(std::filesystem::is_directory(live)) << "a running sync's spool was removed";
    const nlohmann::json report = repo_report();
    const std::filesystem::path spool = report.at("s3_spool").get<std::string>();
    EXPECT_EQ(spool.parent_path(), parent);
    EXPECT_EQ(report.at("s3_spool_in_memory").get<bool>(), store::is_memory_backed(parent));
    EXPECT_FALSE(std::filesystem::exists(spool));
    for (const auto& warning : report.at("warnings")) {
        EXPECT_EQ(warning.get<std::string>().find("spool"), std::string::npos) << warning;
    }
    expect_published_complete("spool options");

    const CommandResult too_small = sync({"--s3-spool-size", "8M", "--s3-part-size", "16M"});
    EXPECT_EQ(too_small.exit_code, 2) << too_small.err;
    EXPECT_NE(too_small.err.find("--s3-spool-size"), std::string::npos) << too_small.err;
}

TEST_F(S3SyncTest, OptionsABucketCannotHonourAreRefusedNamingTheReasonAndNothingIsWritten) {
    for (const auto& [option, reason] :
         std::vector<std::pair<std::vector<std::string>, std::string>>{
             {{"--remote-time"},
              "--remote-time is not possible with an s3:// destination: an "
              "object's time is set by the store"},
             {{"--safe-write-path", tmp_.path().string()},
              "--safe-write-path is not possible with an s3:// destination"},
             {{"--dedupe-dir", tmp_.path().string()},
              "--dedupe-dir is not possible with an s3:// destination: local files cannot be "
              "linked into a bucket"}}) {
        std::vector<std::string> args{"--download-metadata"};
        args.insert(args.end(), option.begin(), option.end());
        const CommandResult refused = sync(args);
        EXPECT_NE(refused.exit_code, 0) << option[0];
        EXPECT_NE(refused.err.find(reason), std::string::npos) << refused.err;
        EXPECT_NE(refused.err.find(destination()), std::string::npos) << refused.err;
    }
    EXPECT_TRUE(objects().empty());
}

TEST_F(S3SyncTest, DedupeCopiesWhatASiblingRepositoryHoldsInsideTheStore) {
    ASSERT_EQ(sync({"--download-metadata", "--s3-acl", "public-read"}).exit_code, 0);
    const std::size_t packages = package_digests(upstream_).size();
    // A second repository of the same packages beside it: nothing is downloaded or uploaded.
    auto argv = sync_argv(destination(), {"--download-metadata", "--s3-acl", "public-read"});
    for (std::string& arg : argv) {
        if (arg == "sample," + repo_url_) {
            arg = "twin," + repo_url_;
        } else if (arg == "sample") {
            arg = "twin";
        }
    }
    const CommandResult twin = run_to_end(argv, tmp_ / "logs");
    ASSERT_EQ(twin.exit_code, 0) << twin.err;
    const nlohmann::json report = repo_report();
    EXPECT_EQ(report.at("repo"), "twin");
    EXPECT_EQ(report.at("linked").get<std::size_t>(), packages) << report.dump();
    EXPECT_EQ(report.at("downloaded").get<std::size_t>(), 0U) << report.dump();
    const s3::S3Location twin_repo{bucket(), prefix_ + "/twin/"};
    auto listed = s3::list_mirror(client(), twin_repo);
    ASSERT_TRUE(listed) << listed.error().to_string();
    for (const auto& [path, digest] : package_digests(upstream_)) {
        ASSERT_TRUE(listed->contains(path)) << path;
        EXPECT_EQ(listed->at(path).size, std::filesystem::file_size(upstream_ / path)) << path;
    }
    // The copies are the twin's own objects, recorded in its state: a no-op next.
    const CommandResult again = run_to_end(argv, tmp_ / "logs");
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_TRUE(repo_report().at("noop").get<bool>());
    // With --dedupe=off everything is downloaded.
    for (std::string& arg : argv) {
        if (arg == "twin") {
            arg = "third";
        } else if (arg == "twin," + repo_url_) {
            arg = "third," + repo_url_;
        }
    }
    argv.push_back("--dedupe=off");
    const CommandResult third = run_to_end(argv, tmp_ / "logs");
    ASSERT_EQ(third.exit_code, 0) << third.err;
    EXPECT_EQ(repo_report().at("linked").get<std::size_t>(), 0U);
    EXPECT_EQ(repo_report().at("downloaded").get<std::size_t>(), packages);
}

TEST_F(S3SyncTest, JobWithSnapshotAndS3DestinationSnapshotsInTheStore) {
    const auto config = TempDir::write_at(tmp_ / "rpmirror.conf",
                                          "[main]\ndestination = " + destination() +
                                              "/\n\n[sample]\nbaseurl = " + repo_url_ +
                                              "\ndownload-metadata = 1\nsnapshot = first\n");
    const CommandResult result =
        run_to_end(rpmirror_sync_argv({"--config-file", config.string(), "--state-dir",
                                       (tmp_ / "state").string()}),
                   tmp_ / "logs");
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    // Beside the job's repository, in the bucket: DESTINATION/snapshots/<job>/<name>/.
    const std::string snapshot = prefix_ + "/snapshots/sample/first/";
    EXPECT_TRUE(client().head_object(bucket(), snapshot + ".rpmirror/snapshot.json"));
    auto copied = client().get_object(bucket(), snapshot + "repodata/repomd.xml");
    ASSERT_TRUE(copied) << copied.error().to_string();
    EXPECT_EQ(*copied, *client().get_object(bucket(), key("repodata/repomd.xml")));
}

TEST_F(S3SyncTest, JobFileDestinationAndStoreSettings) {
    // The endpoint and addressing come from [main] only: the environment has none.
    ::unsetenv("AWS_ENDPOINT_URL");
    const auto config = TempDir::write_at(
        tmp_ / "rpmirror.conf", "[main]\ndestination = " + destination() +
                                    "/\ns3-endpoint = " + cluster().endpoint() +
                                    "\ns3-addressing = path\n\n[sample]\nbaseurl = " + repo_url_ +
                                    "\ndownload-metadata = 1\n");
    const CommandResult result = run_to_end(
        rpmirror_sync_argv({"--config-file", config.string(), "--state-dir",
                            (tmp_ / "state").string(), "--json", (tmp_ / "report.json").string()}),
        tmp_ / "logs");
    ::setenv("AWS_ENDPOINT_URL", cluster().endpoint().c_str(), 1);
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    // The job's repository: DESTINATION/<job name>/.
    EXPECT_EQ(*client().get_object(bucket(), key("repodata/repomd.xml")),
              read_file(upstream_ / "repodata" / "repomd.xml"));
    expect_published_complete("job mode");
}

TEST_F(S3SyncTest, DnfDownloadsFromTheGatewayWithPublicReadAcl) {
    const CommandResult synced = sync({"--download-metadata", "--s3-acl", "public-read"});
    ASSERT_EQ(synced.exit_code, 0) << synced.err;
    // Anonymous plain HTTP, as a CDN or dnf reads the mirror.
    const std::string url = cluster().endpoint() + "/" + bucket() + "/" + prefix_ + "/sample/";
    std::vector<std::string> argv = isolated_dnf(tmp_ / "dnf");
    const std::filesystem::path downloaded = tmp_ / "downloaded";
    argv.insert(argv.end(), {"--repofrompath=m," + url, "--repo=m", "download", "--destdir",
                             downloaded.string(), "rpmirror-sample-medium"});
    const CommandResult download = run_to_end(argv, tmp_ / "logs");
    ASSERT_EQ(download.exit_code, 0) << download.out << download.err;
    const std::string name = "rpmirror-sample-medium-1.0-1.noarch.rpm";
    EXPECT_EQ(read_file(downloaded / name), read_file(upstream_ / "Packages" / name));
}

TEST_F(S3SyncTest, PackageLargerThanPartSizeIsUploadedInParts) {
    // A real 12 MiB package beside the sample packages.
    const std::string relative = add_big_package();
    const CommandResult result = sync({"--download-metadata", "--s3-part-size", "5M"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const std::string body = read_file(upstream_ / relative);
    ASSERT_GT(body.size(), 10U << 20);
    auto info = client().head_object(bucket(), key(relative));
    ASSERT_TRUE(info) << info.error().to_string();
    EXPECT_EQ(info->size, body.size());
    EXPECT_NE(info->etag.find("-3"), std::string::npos) << info->etag;  // three parts
    EXPECT_EQ(info->metadata["sha256"], hash_bytes(ChecksumType::Sha256, body));
    EXPECT_EQ(*client().get_object(bucket(), key(relative)), body);
    auto uploads = client().list_multipart_uploads(bucket(), prefix_);
    ASSERT_TRUE(uploads);
    EXPECT_TRUE(uploads->empty());
    expect_published_complete("multipart");
    ASSERT_EQ(sync({"--download-metadata", "--s3-part-size", "5M"}).exit_code, 0);
    EXPECT_TRUE(repo_report().at("noop").get<bool>());
}

}  // namespace
}  // namespace rpmirror::test
