#include <gtest/gtest.h>

#include "metadata/metadata.hpp"
#include "metadata_test_support.hpp"
#include "support/temp_dir.hpp"
#include "unit/checksum/checksum_test_support.hpp"

namespace rpmirror {
namespace {

// sha256("abc"), computed independently (coreutils).

RepomdRecord abc_record() {
    RepomdRecord record;
    record.type = "primary";
    record.checksum = RecordChecksum{ChecksumType::Sha256, kAbcSha256};
    record.location_href = "repodata/abc-primary.xml.gz";
    record.size = 3;
    return record;
}

TEST(VerifyMetadataFile, MatchingSizeAndDigestIsAccepted) {
    test::TempDir dir;
    const auto file = dir.write("repodata/abc-primary.xml.gz", "abc");
    EXPECT_TRUE(verify_metadata_file(file, abc_record()));
    RepomdRecord without_size = abc_record();
    without_size.size.reset();
    EXPECT_TRUE(verify_metadata_file(file, without_size));
}

TEST(VerifyMetadataFile, WrongSizeIsCorruptNamingExpectedAndActual) {
    test::TempDir dir;
    const auto file = dir.write("primary.xml.gz", "abcd");
    const auto result = verify_metadata_file(file, abc_record());
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().code, ErrorCode::Corrupt);
    EXPECT_EQ(result.error().subject, file.string());
    EXPECT_EQ(result.error().message,
              "metadata file for <data type=\"primary\">: size mismatch: expected 3 bytes, "
              "actual 4 bytes");
}

TEST(VerifyMetadataFile, WrongDigestIsCorruptNamingExpectedAndActual) {
    test::TempDir dir;
    const auto file = dir.write("primary.xml.gz", "abd");
    const std::string actual = test::tool_digest("sha256sum", file, dir.path());
    ASSERT_EQ(actual.size(), 64U);
    const auto result = verify_metadata_file(file, abc_record());
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().code, ErrorCode::Corrupt);
    EXPECT_EQ(result.error().subject, file.string());
    EXPECT_EQ(result.error().message,
              "metadata file for <data type=\"primary\">: sha256 mismatch: "
              "expected " +
                  kAbcSha256 + ", actual " + actual);
}

TEST(VerifyMetadataFile, MissingFileIsNotFound) {
    test::TempDir dir;
    const auto result = verify_metadata_file(dir / "absent.xml.gz", abc_record());
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().code, ErrorCode::NotFound);
}

}  // namespace
}  // namespace rpmirror
