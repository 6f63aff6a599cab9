// S3Client against a real Ceph RADOS Gateway (scripts/ceph-s3): every operation, and the errors
// a user meets (bad credentials, missing bucket, clock skew, payload mismatch).
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checksum/hasher.hpp"
#include "integration/s3/ceph_fixture.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "rpmirror/s3/s3.hpp"
#include "s3/client.hpp"
#include "s3/config.hpp"
#include "support/http_server.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror::test {
namespace {

using s3::S3Client;

class S3ClientTest : public CephS3Test {};

TEST_F(S3ClientTest, PutHeadGetDeleteRoundTrip) {
    const std::string body = pattern_bytes(300'000);
    s3::PutOptions options;
    options.content_type = "application/x-rpm";
    options.metadata["origin"] = "test";
    auto etag = client().put_object(bucket(), "repo/Packages/a b+c.rpm", body, options);
    ASSERT_TRUE(etag) << etag.error().to_string();
    EXPECT_EQ(*etag, hash_bytes(ChecksumType::Md5, body));  // single PUT: ETag = MD5

    auto info = client().head_object(bucket(), "repo/Packages/a b+c.rpm");
    ASSERT_TRUE(info) << info.error().to_string();
    EXPECT_EQ(info->size, body.size());
    EXPECT_EQ(info->etag, *etag);
    EXPECT_EQ(info->metadata["sha256"], hash_bytes(ChecksumType::Sha256, body));
    EXPECT_EQ(info->metadata["origin"], "test");

    auto whole = client().get_object(bucket(), "repo/Packages/a b+c.rpm");
    ASSERT_TRUE(whole) << whole.error().to_string();
    EXPECT_EQ(*whole, body);
    auto part = client().get_object(bucket(), "repo/Packages/a b+c.rpm",
                                    s3::ByteRange{.offset = 1000, .length = 5000});
    ASSERT_TRUE(part) << part.error().to_string();
    EXPECT_EQ(*part, body.substr(1000, 5000));

    ASSERT_TRUE(client().delete_object(bucket(), "repo/Packages/a b+c.rpm"));
    auto gone = client().head_object(bucket(), "repo/Packages/a b+c.rpm");
    ASSERT_FALSE(gone);
    EXPECT_EQ(gone.error().code, ErrorCode::NotFound);
    EXPECT_EQ(gone.error().subject, "s3://" + bucket() + "/repo/Packages/a b+c.rpm");
    EXPECT_NE(gone.error().message.find("HTTP 404"), std::string::npos) << gone.error().message;
    auto missing = client().get_object(bucket(), "repo/nothing");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().code, ErrorCode::NotFound);
    EXPECT_NE(missing.error().message.find("NoSuchKey"), std::string::npos)
        << missing.error().message;
    // Deleting what does not exist is not an error.
    EXPECT_TRUE(client().delete_object(bucket(), "repo/nothing"));
}

TEST_F(S3ClientTest, EmptyObject) {
    ASSERT_TRUE(client().put_object(bucket(), "empty", ""));
    auto body = client().get_object(bucket(), "empty");
    ASSERT_TRUE(body) << body.error().to_string();
    EXPECT_EQ(*body, "");
}

TEST_F(S3ClientTest, ListsPageByPageInKeyOrder) {
    std::vector<std::string> expected;
    for (int index = 0; index < 25; ++index) {
        const std::string key = "mirror/Packages/p" + std::to_string(100 + index) + ".rpm";
        ASSERT_TRUE(client().put_object(bucket(), key, std::string(index, 'x')));
        expected.push_back(key);
    }
    ASSERT_TRUE(client().put_object(bucket(), "other/file", "o"));
    ASSERT_TRUE(client().put_object(bucket(), "mirror/repodata/repomd.xml", "<repomd/>"));
    expected.push_back("mirror/repodata/repomd.xml");

    std::vector<s3::ListedObject> listed;
    auto requests = client().list_objects(
        bucket(), "mirror/",
        [&listed](const s3::ListedObject& object) -> Result<void> {
            listed.push_back(object);
            return {};
        },
        10);
    ASSERT_TRUE(requests) << requests.error().to_string();
    EXPECT_EQ(*requests, 3U);  // 26 keys, 10 per page
    ASSERT_EQ(listed.size(), expected.size());
    for (std::size_t index = 0; index < expected.size(); ++index) {
        EXPECT_EQ(listed[index].key, expected[index]);
    }
    EXPECT_EQ(listed[7].size, 7U);
    EXPECT_EQ(listed[7].etag, hash_bytes(ChecksumType::Md5, std::string(7, 'x')));

    auto all = client().list_all_objects(bucket(), "");
    ASSERT_TRUE(all) << all.error().to_string();
    EXPECT_EQ(all->size(), 27U);
}

TEST_F(S3ClientTest, DeletesObjectsInBatches) {
    std::vector<std::string> keys;
    for (int index = 0; index < 12; ++index) {
        keys.push_back("d/k&<" + std::to_string(index) + ">");  // escaped in the XML body
        ASSERT_TRUE(client().put_object(bucket(), keys.back(), "x"));
    }
    keys.push_back("d/never-existed");
    auto deleted = client().delete_objects(bucket(), keys);
    ASSERT_TRUE(deleted) << deleted.error().to_string();
    auto left = client().list_all_objects(bucket(), "d/");
    ASSERT_TRUE(left) << left.error().to_string();
    EXPECT_TRUE(left->empty());
}

TEST_F(S3ClientTest, MultipartUploadAssemblesParts) {
    const std::string body = pattern_bytes(6 * 1024 * 1024 + 12345);
    const std::size_t first = 5 * 1024 * 1024;
    s3::PutOptions options;
    options.sha256 = hash_bytes(ChecksumType::Sha256, body);
    auto upload = client().create_multipart_upload(bucket(), "big.rpm", options);
    ASSERT_TRUE(upload) << upload.error().to_string();
    auto part1 = client().upload_part(bucket(), "big.rpm", *upload, 1, body.substr(0, first));
    ASSERT_TRUE(part1) << part1.error().to_string();
    auto part2 = client().upload_part(bucket(), "big.rpm", *upload, 2, body.substr(first));
    ASSERT_TRUE(part2) << part2.error().to_string();
    const std::vector<s3::CompletedPart> parts = {{1, *part1}, {2, *part2}};
    auto etag = client().complete_multipart_upload(bucket(), "big.rpm", *upload, parts);
    ASSERT_TRUE(etag) << etag.error().to_string();

    auto info = client().head_object(bucket(), "big.rpm");
    ASSERT_TRUE(info) << info.error().to_string();
    EXPECT_EQ(info->size, body.size());
    EXPECT_EQ(info->metadata["sha256"], options.sha256);
    EXPECT_TRUE(info->etag.ends_with("-2")) << info->etag;  // a multipart ETag: MD5-of-MD5s-N
    auto read = client().get_object(bucket(), "big.rpm");
    ASSERT_TRUE(read) << read.error().to_string();
    EXPECT_TRUE(*read == body);
    auto uploads = client().list_multipart_uploads(bucket(), "");
    ASSERT_TRUE(uploads) << uploads.error().to_string();
    EXPECT_TRUE(uploads->empty());
}

TEST_F(S3ClientTest, AbortedMultipartUploadLeavesNoParts) {
    auto upload = client().create_multipart_upload(bucket(), "aborted.rpm");
    ASSERT_TRUE(upload) << upload.error().to_string();
    ASSERT_TRUE(client().upload_part(bucket(), "aborted.rpm", *upload, 1, pattern_bytes(5 << 20)));
    auto open = client().list_multipart_uploads(bucket(), "");
    ASSERT_TRUE(open) << open.error().to_string();
    ASSERT_EQ(open->size(), 1U);
    EXPECT_EQ((*open)[0].key, "aborted.rpm");
    EXPECT_EQ((*open)[0].upload_id, *upload);

    ASSERT_TRUE(client().abort_multipart_upload(bucket(), "aborted.rpm", *upload));
    auto after = client().list_multipart_uploads(bucket(), "");
    ASSERT_TRUE(after) << after.error().to_string();
    EXPECT_TRUE(after->empty());
    auto object = client().head_object(bucket(), "aborted.rpm");
    ASSERT_FALSE(object);
    EXPECT_EQ(object.error().code, ErrorCode::NotFound);
    // The parts are gone with the upload.
    auto part = client().upload_part(bucket(), "aborted.rpm", *upload, 2, "late");
    ASSERT_FALSE(part);
    EXPECT_NE(part.error().message.find("NoSuchUpload"), std::string::npos) << part.error().message;
    // Aborting twice is not an error.
    EXPECT_TRUE(client().abort_multipart_upload(bucket(), "aborted.rpm", *upload));
}

TEST_F(S3ClientTest, CompleteWithAWrongPartIsAnError) {
    auto upload = client().create_multipart_upload(bucket(), "bad.rpm");
    ASSERT_TRUE(upload) << upload.error().to_string();
    ASSERT_TRUE(client().upload_part(bucket(), "bad.rpm", *upload, 1, "only part"));
    const std::vector<s3::CompletedPart> parts = {{1, "00000000000000000000000000000000"}};
    auto completed = client().complete_multipart_upload(bucket(), "bad.rpm", *upload, parts);
    ASSERT_FALSE(completed);
    EXPECT_EQ(completed.error().subject, "s3://" + bucket() + "/bad.rpm");
    EXPECT_NE(completed.error().message.find("InvalidPart"), std::string::npos)
        << completed.error().message;
    EXPECT_TRUE(client().abort_multipart_upload(bucket(), "bad.rpm", *upload));
}

TEST_F(S3ClientTest, ConditionalPutCreatesOnlyOnce) {
    auto supported = client().probe_conditional_put(bucket(), "locks/probe");
    ASSERT_TRUE(supported) << supported.error().to_string();
    EXPECT_TRUE(*supported);  // Ceph RGW honours If-None-Match: *
    s3::PutOptions create_only;
    create_only.if_none_match = true;
    ASSERT_TRUE(client().put_object(bucket(), "locks/repo", "worker 1", create_only));
    auto second = client().put_object(bucket(), "locks/repo", "worker 2", create_only);
    ASSERT_FALSE(second);
    EXPECT_EQ(second.error().code, ErrorCode::Busy);
    EXPECT_NE(second.error().message.find("HTTP 412"), std::string::npos) << second.error().message;
    EXPECT_EQ(*client().get_object(bucket(), "locks/repo"), "worker 1");
    auto probe_left = client().head_object(bucket(), "locks/probe");
    EXPECT_FALSE(probe_left);
}

TEST_F(S3ClientTest, BodyNotMatchingItsSignedHashIsRefused) {
    s3::PutOptions options;
    options.sha256 = hash_bytes(ChecksumType::Sha256, std::string_view("something else"));
    auto put = client().put_object(bucket(), "mismatch", "the body", options);
    ASSERT_FALSE(put);
    EXPECT_EQ(put.error().subject, "s3://" + bucket() + "/mismatch");
    EXPECT_NE(put.error().message.find("HTTP 400"), std::string::npos) << put.error().message;
    EXPECT_FALSE(client().head_object(bucket(), "mismatch"));
}

// What is missing is the bucket, whatever key was asked for: the error is about it, names the
// endpoint it was looked for at, and says what to do.
TEST_F(S3ClientTest, MissingBucketIsNamed) {
    auto got = client().get_object("no-such-bucket-here", "repodata/repomd.xml");
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code, ErrorCode::NotFound);
    EXPECT_EQ(got.error().subject, "s3://no-such-bucket-here");
    EXPECT_NE(got.error().message.find("NoSuchBucket"), std::string::npos) << got.error().message;
    EXPECT_EQ(got.error().message.find("repomd.xml"), std::string::npos) << got.error().message;
    auto listed = client().list_all_objects("no-such-bucket-here", "");
    ASSERT_FALSE(listed);
    const std::string expected =
        "s3://no-such-bucket-here: bucket 'no-such-bucket-here' does not "
        "exist at " +
        client().config().endpoint + " (HTTP 404 NoSuchBucket";
    EXPECT_NE(listed.error().to_string().find(expected), std::string::npos)
        << listed.error().to_string();
    EXPECT_NE(listed.error().to_string().find("create it"), std::string::npos);
}

TEST_F(S3ClientTest, BadCredentialsAreNamed) {
    auto config = cluster().config();
    config.credentials.secret_access_key = "wrong-secret";
    S3Client wrong_secret(config);
    auto put = wrong_secret.put_object(bucket(), "k", "v");
    ASSERT_FALSE(put);
    EXPECT_EQ(put.error().code, ErrorCode::BadInput);
    EXPECT_EQ(put.error().subject, "s3://" + bucket() + "/k");
    EXPECT_NE(put.error().message.find("HTTP 403 SignatureDoesNotMatch"), std::string::npos)
        << put.error().message;

    config = cluster().config();
    config.credentials.access_key_id = "NOSUCHKEY";
    S3Client unknown_key(config);
    auto got = unknown_key.get_object(bucket(), "k");
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code, ErrorCode::BadInput);
    EXPECT_NE(got.error().message.find("HTTP 403 InvalidAccessKeyId"), std::string::npos)
        << got.error().message;
}

TEST_F(S3ClientTest, ClockSkewIsNamed) {
    auto config = cluster().config();
    config.clock_offset = std::chrono::hours(-1);
    S3Client skewed(config);
    auto put = skewed.put_object(bucket(), "k", "v");
    ASSERT_FALSE(put);
    EXPECT_EQ(put.error().code, ErrorCode::BadInput);
    EXPECT_NE(put.error().message.find("HTTP 403 RequestTimeTooSkewed"), std::string::npos)
        << put.error().message;
    EXPECT_EQ(skewed.request_count(), 1U);  // not retried
}

TEST_F(S3ClientTest, AnswersWithoutANumericSizeAreErrorsNamingTheObject) {
    const std::string body = pattern_bytes(1000);
    ASSERT_TRUE(client().put_object(bucket(), "odd/sizes.rpm", body));
    // A proxy in front of the store answers a range of unknown total length ("bytes A-B/*", which
    // HTTP allows) and a Content-Length that is no number.
    TempDir work;
    const nlohmann::json script = {
        {"rules",
         {{{"match", {{"method", "GET"}, {"path_re", "sizes\\.rpm$"}}},
           {"steps", {{{"set_headers", {{"Content-Range", "bytes 0-9/*"}}}}}}},
          {{"match", {{"method", "HEAD"}, {"path_re", "sizes\\.rpm$"}}},
           {"steps", {{{"set_headers", {{"Content-Length", "12x"}}}}}}}}}};
    FaultServer proxy = FaultServer::proxy(cluster().endpoint(), script, work.path());
    s3::S3Config config = cluster().config();
    config.endpoint = proxy.url();
    S3Client through(config);
    const std::string url = "s3://" + bucket() + "/odd/sizes.rpm";
    auto ranged = through.get_object(bucket(), "odd/sizes.rpm", s3::ByteRange{0, 10});
    ASSERT_FALSE(ranged);
    EXPECT_EQ(ranged.error().subject, url);
    EXPECT_NE(ranged.error().message.find("Content-Range 'bytes 0-9/*'"), std::string::npos)
        << ranged.error().to_string();
    auto head = through.head_object(bucket(), "odd/sizes.rpm");
    ASSERT_FALSE(head);
    EXPECT_EQ(head.error().subject, url);
    EXPECT_NE(head.error().message.find("Content-Length '12x'"), std::string::npos)
        << head.error().to_string();
    // Straight from the store, both are fine.
    auto info = client().head_object(bucket(), "odd/sizes.rpm");
    ASSERT_TRUE(info) << info.error().to_string();
    EXPECT_EQ(info->size, body.size());
}

TEST_F(S3ClientTest, StoreClockIsLearntFromItsAnswers) {
    s3::S3Config config = cluster().config();
    config.clock_offset = std::chrono::seconds(300);  // this host believes it is 5 min later
    S3Client skewed(config);
    EXPECT_FALSE(skewed.store_clock_offset());
    ASSERT_TRUE(skewed.put_object(bucket(), "clock/probe", "x"));
    ASSERT_TRUE(skewed.store_clock_offset());
    // The gateway runs on this host: its clock is ours, within the Date header's second.
    EXPECT_LE(std::abs(skewed.store_clock_offset()->count()), 1);
    const auto drift = skewed.store_now() - std::chrono::system_clock::now();
    EXPECT_LE(std::chrono::abs(drift), std::chrono::seconds(2));
}

}  // namespace
}  // namespace rpmirror::test
