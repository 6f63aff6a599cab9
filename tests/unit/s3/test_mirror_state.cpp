// The state object of an s3:// mirror: what to_json writes, parse_state reads back; anything
// else is refused with the object's URL named.
#include <gtest/gtest.h>

#include "s3/mirror_state.hpp"

namespace rpmirror::test {
namespace {

TEST(S3MirrorState, RoundTrip) {
    s3::MirrorState state;
    state.repomd_sha256 = std::string(64, 'a');
    state.fingerprint = "arch=x86_64";
    state.objects["Packages/a.rpm"] = {.size = 42,
                                       .etag = "0123abcd",
                                       .checksum_type = ChecksumType::Sha1,
                                       .digest = std::string(40, 'b')};
    state.previous_records = {"repodata/x-primary.xml.gz"};
    state.acl = "public-read";
    state.signatures_checked = "0123456789abcdef,";
    auto parsed = s3::parse_state(s3::to_json(state), "s3://bucket/repo/.rpmirror/state.json");
    ASSERT_TRUE(parsed) << parsed.error().to_string();
    EXPECT_EQ(parsed->repomd_sha256, state.repomd_sha256);
    EXPECT_EQ(parsed->fingerprint, state.fingerprint);
    ASSERT_EQ(parsed->objects.size(), 1u);
    const s3::StoredObject& object = parsed->objects.at("Packages/a.rpm");
    EXPECT_EQ(object.size, 42u);
    EXPECT_EQ(object.etag, "0123abcd");
    EXPECT_EQ(object.checksum_type, ChecksumType::Sha1);
    EXPECT_EQ(object.digest, std::string(40, 'b'));
    EXPECT_EQ(parsed->previous_records, state.previous_records);
    EXPECT_EQ(parsed->acl, "public-read");
    EXPECT_EQ(parsed->signatures_checked, "0123456789abcdef,");
}

TEST(S3MirrorState, AStateOfAnOlderVersionReadsAsUncheckedAndWithoutAcl) {
    auto parsed = s3::parse_state(
        "{\"version\":1,\"repomd_sha256\":\"\",\"fingerprint\":\"\",\"objects\":{},"
        "\"previous_records\":[]}",
        "s3://bucket/repo/.rpmirror/state.json");
    ASSERT_TRUE(parsed) << parsed.error().to_string();
    EXPECT_EQ(parsed->acl, "");
    EXPECT_EQ(parsed->signatures_checked, "");
}

TEST(S3MirrorState, RefusesWhatItDidNotWrite) {
    for (const char* text : {"", "[]", "{\"version\":2}", "{\"version\":1}",
                             "{\"version\":1,\"repomd_sha256\":\"\",\"fingerprint\":\"\","
                             "\"objects\":{\"a\":{\"size\":1,\"etag\":\"e\",\"checksum_type\":"
                             "\"crc99\",\"digest\":\"d\"}},\"previous_records\":[]}"}) {
        auto parsed = s3::parse_state(text, "s3://bucket/repo/.rpmirror/state.json");
        ASSERT_FALSE(parsed) << text;
        EXPECT_EQ(parsed.error().code, ErrorCode::BadInput);
        EXPECT_EQ(parsed.error().subject, "s3://bucket/repo/.rpmirror/state.json");
    }
}

TEST(S3MirrorState, StillMatchesNeedsSizeAndEtag) {
    s3::StoredObject stored;
    stored.size = 10;
    stored.etag = "abc";
    const auto listed = [](std::uint64_t size, const char* etag) {
        s3::ListedObject object;
        object.key = "k";
        object.size = size;
        object.etag = etag;
        return object;
    };
    EXPECT_TRUE(s3::still_matches(stored, listed(10, "abc")));
    EXPECT_FALSE(s3::still_matches(stored, listed(11, "abc")));
    EXPECT_FALSE(s3::still_matches(stored, listed(10, "abd")));
    stored.etag.clear();
    EXPECT_FALSE(s3::still_matches(stored, listed(10, "")));
}

}  // namespace
}  // namespace rpmirror::test
