#include <gtest/gtest.h>

#include "checksum/hasher.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror {
namespace {

struct KnownAnswer {
    ChecksumType type;
    const char* empty;
    const char* abc;
    const char* one_mib_pattern;  // 1 MiB of pattern_bytes()
};

// Computed independently (Python hashlib), not with the code under test.
const KnownAnswer kKnownAnswers[] = {
    {ChecksumType::Md5, "d41d8cd98f00b204e9800998ecf8427e", "900150983cd24fb0d6963f7d28e17f72",
     "8f293a2f6c19b345152f7a49bb4c643c"},
    {ChecksumType::Sha1, "da39a3ee5e6b4b0d3255bfef95601890afd80709",
     "a9993e364706816aba3e25717850c26c9cd0d89d", "c2fc4cb20f1301a6b0dd211c19e69a13925dbe40"},
    {ChecksumType::Sha224, "d14a028c2a3a2bc9476102bb288234c415a2b01f828ea62ac5b3e42f",
     "23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7",
     "5ea506c312141d911fb8909367ae6ecd22513c9fe337046ec36f3dde"},
    {ChecksumType::Sha256, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
     "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
     "631b84027d6b9e52b539c4e8373622d23032dfadc64d60af87339c9037e4f769"},
    {ChecksumType::Sha384,
     "38b060a751ac96384cd9327eb1b1e36a21fdb71114be07434c0cc7bf63f6e1da274edebfe76f65fbd51ad2f14898b"
     "95b",
     "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c82"
     "5a7",
     "c0b5633796816dc370458921d148550ed3e490ca635324e19b86a26c500577c623a37ecc5de698c222fba72e08e0e"
     "e5b"},
    {ChecksumType::Sha512,
     "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877ee"
     "c2f"
     "63b931bd47417a81a538327af927da3e",
     "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3fee"
     "bbd"
     "454d4423643ce80e2a9ac94fa54ca49f",
     "67dad569eefc986a3b2424f5516d5a0284bb53d7b52d75f5ed881a6830a95765ccc82bc48752fb693422579f11dc9"
     "a40"
     "0561ec1885af9eeef703dbbd312d4fd0"},
};

TEST(Digest, KnownAnswersForAllTypesFromBytes) {
    const std::string pattern = test::pattern_bytes(1024 * 1024);
    for (const KnownAnswer& answer : kKnownAnswers) {
        SCOPED_TRACE(std::string(checksum_type_name(answer.type)));
        EXPECT_EQ(hash_bytes(answer.type, std::string_view()), answer.empty);
        EXPECT_EQ(hash_bytes(answer.type, "abc"), answer.abc);
        EXPECT_EQ(hash_bytes(answer.type, pattern), answer.one_mib_pattern);
    }
}

TEST(Digest, KnownAnswersForAllTypesFromFilesByBothReadMethods) {
    test::TempDir dir;
    const auto empty = dir.write("empty", "");
    const auto abc = dir.write("abc", "abc");
    const auto pattern = dir.write("pattern", test::pattern_bytes(1024 * 1024));
    for (const ReadMethod method :
         {ReadMethod::Pread, ReadMethod::Mmap, ReadMethod::MmapPopulate}) {
        HashOptions options;
        options.use_cache = false;
        options.method = method;
        FileHasher hasher(options);
        for (const KnownAnswer& answer : kKnownAnswers) {
            SCOPED_TRACE(std::string(checksum_type_name(answer.type)));
            EXPECT_EQ(hasher.hash(empty, answer.type)->hex, answer.empty);
            EXPECT_EQ(hasher.hash(abc, answer.type)->hex, answer.abc);
            EXPECT_EQ(hasher.hash(pattern, answer.type)->hex, answer.one_mib_pattern);
        }
    }
}

TEST(Digest, StreamingUpdatesInPiecesEqualOneShot) {
    const std::string pattern = test::pattern_bytes(100'000);
    Hasher hasher(ChecksumType::Sha256);
    for (std::size_t offset = 0; offset < pattern.size(); offset += 777) {
        const std::size_t length = std::min<std::size_t>(777, pattern.size() - offset);
        hasher.update(pattern.data() + offset, length);
    }
    EXPECT_EQ(hasher.finish(), hash_bytes(ChecksumType::Sha256, pattern));
}

TEST(Digest, FinishResetsForReuseAndResetDiscardsInput) {
    Hasher hasher(ChecksumType::Sha1);
    hasher.update("abc", 3);
    EXPECT_EQ(hasher.finish(), "a9993e364706816aba3e25717850c26c9cd0d89d");
    hasher.update("abc", 3);
    EXPECT_EQ(hasher.finish(), "a9993e364706816aba3e25717850c26c9cd0d89d");
    hasher.update("garbage", 7);
    hasher.reset(ChecksumType::Md5);
    hasher.update("abc", 3);
    EXPECT_EQ(hasher.type(), ChecksumType::Md5);
    EXPECT_EQ(hasher.finish(), "900150983cd24fb0d6963f7d28e17f72");
}

TEST(Digest, TypeNamesAreCaseInsensitiveAndShaMeansSha1) {
    EXPECT_EQ(*parse_checksum_type("SHA256"), ChecksumType::Sha256);
    EXPECT_EQ(*parse_checksum_type("sha"), ChecksumType::Sha1);
    EXPECT_EQ(*parse_checksum_type("Sha"), ChecksumType::Sha1);
    EXPECT_EQ(*parse_checksum_type("md5"), ChecksumType::Md5);
    for (const ChecksumType type : kAllChecksumTypes) {
        EXPECT_EQ(*parse_checksum_type(checksum_type_name(type)), type);
    }
}

TEST(Digest, UnknownTypeIsUnsupportedAndNamed) {
    const auto parsed = parse_checksum_type("sha3-256");
    ASSERT_FALSE(parsed);
    EXPECT_EQ(parsed.error().code, ErrorCode::Unsupported);
    EXPECT_EQ(parsed.error().subject, "sha3-256");
    EXPECT_FALSE(parse_checksum_type(""));
}

TEST(Digest, HexLengthsIdentifyTypes) {
    for (const ChecksumType type : kAllChecksumTypes) {
        EXPECT_EQ(checksum_type_for_hex_length(digest_hex_length(type)), type);
    }
    EXPECT_FALSE(checksum_type_for_hex_length(63));
    EXPECT_TRUE(is_valid_hex_digest(ChecksumType::Md5, "D41D8CD98F00B204E9800998ECF8427E"));
    EXPECT_FALSE(is_valid_hex_digest(ChecksumType::Md5, "g41d8cd98f00b204e9800998ecf8427e"));
    EXPECT_FALSE(is_valid_hex_digest(ChecksumType::Md5, "d41d8cd98f00b204e9800998ecf8427"));
}

}  // namespace
}  // namespace rpmirror
