#include <gtest/gtest.h>

#include "rpmirror/checksum/checksum_list.hpp"
#include "unit/checksum/checksum_test_support.hpp"

namespace rpmirror {
namespace {

const std::string kAbcMd5 = "900150983cd24fb0d6963f7d28e17f72";

TEST(ChecksumList, ParsesTextBinaryAndBsdLinesWithTypesFromLengthOrTag) {
    const std::string text = kAbcSha256 + "  Packages/a.rpm\n" + kAbcMd5 + " *b.rpm\n" +
                             "SHA256 (c d.rpm) = " + kAbcSha256 + "\n\n" + kAbcSha256 + "  last";
    const ChecksumList list = parse_checksum_list(text, std::nullopt);
    EXPECT_EQ(list.malformed_line_count, 0U);
    ASSERT_EQ(list.entries.size(), 4U);
    EXPECT_EQ(list.entries[0].path, "Packages/a.rpm");
    EXPECT_EQ(list.entries[0].type, ChecksumType::Sha256);
    EXPECT_EQ(list.entries[1].path, "b.rpm");
    EXPECT_EQ(list.entries[1].type, ChecksumType::Md5);
    EXPECT_EQ(list.entries[2].path, "c d.rpm");
    EXPECT_EQ(list.entries[2].type, ChecksumType::Sha256);
    EXPECT_EQ(list.entries[3].path, "last");
    EXPECT_EQ(list.entries[3].line_number, 5U);
}

TEST(ChecksumList, CountsMalformedLinesInsteadOfGuessing) {
    const std::string text = "not a checksum line\n" + kAbcSha256.substr(1) + "  short.rpm\n" +
                             kAbcSha256 + " nomode.rpm\n" + kAbcSha256 + "  \n" + "\\" +
                             kAbcSha256 + "  bad\\escape\n" + kAbcSha256 + "  ok.rpm\n";
    const ChecksumList list = parse_checksum_list(text, std::nullopt);
    EXPECT_EQ(list.malformed_line_count, 5U);
    ASSERT_EQ(list.entries.size(), 1U);
    EXPECT_EQ(list.entries[0].path, "ok.rpm");
}

TEST(ChecksumList, ForcedTypeRejectsDigestsOfAnotherLength) {
    const std::string text = kAbcMd5 + "  a.rpm\n" + kAbcSha256 + "  b.rpm\n";
    const ChecksumList list = parse_checksum_list(text, ChecksumType::Sha256);
    EXPECT_EQ(list.malformed_line_count, 1U);
    ASSERT_EQ(list.entries.size(), 1U);
    EXPECT_EQ(list.entries[0].path, "b.rpm");
}

TEST(ChecksumList, EscapedPathsRoundTripAsSha256sumWritesThem) {
    const std::string path = "odd\\name\nwith newline.rpm";
    const std::string line = format_checksum_line(kAbcSha256, path);
    EXPECT_EQ(line, "\\" + kAbcSha256 + "  odd\\\\name\\nwith newline.rpm\n");
    const ChecksumList list = parse_checksum_list(line, std::nullopt);
    ASSERT_EQ(list.entries.size(), 1U);
    EXPECT_EQ(list.entries[0].path, path);
    EXPECT_EQ(format_checksum_line(kAbcSha256, "plain.rpm"), kAbcSha256 + "  plain.rpm\n");
}

}  // namespace
}  // namespace rpmirror
