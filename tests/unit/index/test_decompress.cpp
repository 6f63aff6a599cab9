#include <gtest/gtest.h>

#include "index/index.hpp"
#include "support/temp_dir.hpp"
#include "unit/index/index_test_repo.hpp"

namespace rpmirror {
namespace {

using test::IndexTestRepo;
using test::quote;
using test::run_or_throw;

DecompressOptions with_open_size(std::uint64_t size) {
    DecompressOptions options;
    options.expected_size = size;
    return options;
}

// Reads everything `path` decompresses to, checking that no chunk exceeds `buffer_size`.
Result<std::string> decompress_all(const std::filesystem::path& path, DecompressOptions options,
                                   Compression* detected = nullptr) {
    auto reader = Decompressor::open(path, options);
    if (!reader) {
        return tl::unexpected(reader.error());
    }
    if (detected != nullptr) {
        *detected = reader->compression();
    }
    std::string contents;
    while (true) {
        auto chunk = reader->read();
        if (!chunk) {
            return tl::unexpected(chunk.error());
        }
        if (chunk->empty()) {
            EXPECT_EQ(reader->bytes_out(), contents.size());
            return contents;
        }
        EXPECT_LE(chunk->size(), options.buffer_size);
        contents.append(chunk->data(), chunk->size());
    }
}

struct Case {
    const char* suffix;
    Compression compression;
};
constexpr Case kCases[] = {{"", Compression::None},
                           {".gz", Compression::Gzip},
                           {".xz", Compression::Xz},
                           {".zst", Compression::Zstd},
                           {".bz2", Compression::Bzip2}};

class Decompress : public ::testing::Test {
  protected:
    static void SetUpTestSuite() { IndexTestRepo::get(); }
    const IndexTestRepo& repo() const { return IndexTestRepo::get(); }
};

TEST_F(Decompress, EveryCompressionYieldsTheSameBytesInBoundedChunks) {
    for (const Case& each : kCases) {
        SCOPED_TRACE(each.suffix);
        DecompressOptions options;
        options.buffer_size = 1000;  // many chunks even for the small test primary.xml
        Compression detected = Compression::None;
        const auto contents = decompress_all(repo().primary(each.suffix), options, &detected);
        ASSERT_TRUE(contents) << contents.error().to_string();
        EXPECT_EQ(detected, each.compression);
        EXPECT_EQ(*contents, repo().primary_xml());
    }
}

TEST_F(Decompress, DetectsByContentNotByName) {
    test::TempDir dir;
    // xz content under a .gz name, gzip content under a .xml name.
    const auto misnamed_xz = dir / "primary.xml.gz";
    const auto misnamed_gz = dir / "primary.xml";
    std::filesystem::copy_file(repo().primary(".xz"), misnamed_xz);
    std::filesystem::copy_file(repo().primary(".gz"), misnamed_gz);
    Compression detected = Compression::None;
    auto contents = decompress_all(misnamed_xz, {}, &detected);
    ASSERT_TRUE(contents) << contents.error().to_string();
    EXPECT_EQ(detected, Compression::Xz);
    EXPECT_EQ(*contents, repo().primary_xml());
    contents = decompress_all(misnamed_gz, {}, &detected);
    ASSERT_TRUE(contents) << contents.error().to_string();
    EXPECT_EQ(detected, Compression::Gzip);
    EXPECT_EQ(*contents, repo().primary_xml());
}

TEST(DecompressMagic, RecognisesEachMagicAndNothingShorter) {
    using namespace std::string_view_literals;
    EXPECT_EQ(detect_compression("\x1f\x8b\x08"sv), Compression::Gzip);
    EXPECT_EQ(detect_compression("\xfd"
                                 "7zXZ\0\0"sv),
              Compression::Xz);
    EXPECT_EQ(detect_compression("\x28\xb5\x2f\xfd\x00"sv), Compression::Zstd);
    EXPECT_EQ(detect_compression("BZh91AY"sv), Compression::Bzip2);
    EXPECT_EQ(detect_compression("\0ZCK1\0"sv), Compression::Zchunk);
    EXPECT_EQ(detect_compression("<?xml"sv), Compression::None);
    EXPECT_EQ(detect_compression("\xfd"
                                 "7zX"sv),
              Compression::None);
    EXPECT_EQ(detect_compression(""sv), Compression::None);
}

TEST_F(Decompress, ConcatenatedGzipMembersAreOneStream) {
    test::TempDir dir;
    const auto first = dir.write("a", "<first/>\n");
    const auto second = dir.write("b", "<second/>\n");
    const auto joined = dir / "joined.gz";
    run_or_throw("(gzip -c " + quote(first) + "; gzip -c " + quote(second) + ") > " +
                 quote(joined));
    const auto contents = decompress_all(joined, {});
    ASSERT_TRUE(contents) << contents.error().to_string();
    EXPECT_EQ(*contents, "<first/>\n<second/>\n");
}

TEST_F(Decompress, TruncatedStreamIsCorruptNotShorter) {
    test::TempDir dir;
    for (const Case& each : kCases) {
        if (each.compression == Compression::None) {
            continue;  // plain text has no end marker; the XML parser catches it
        }
        const std::string whole = test::read_file(repo().primary(each.suffix));
        for (const std::size_t cut : {std::size_t{1}, whole.size() / 2}) {
            SCOPED_TRACE(std::string(each.suffix) + " minus " + std::to_string(cut));
            const auto truncated = dir.write("truncated" + std::string(each.suffix),
                                             whole.substr(0, whole.size() - cut));
            const auto contents = decompress_all(truncated, {});
            ASSERT_FALSE(contents) << "a truncated stream must not decode to a shorter file";
            EXPECT_EQ(contents.error().code, ErrorCode::Corrupt);
            EXPECT_EQ(contents.error().subject, truncated.string());
        }
    }
}

TEST_F(Decompress, GarbageAfterMagicIsCorrupt) {
    test::TempDir dir;
    const auto garbage = dir.write("bad.gz", std::string("\x1f\x8b\x08\x00", 4) + "garbage bytes");
    const auto contents = decompress_all(garbage, {});
    ASSERT_FALSE(contents);
    EXPECT_EQ(contents.error().code, ErrorCode::Corrupt);
}

TEST(DecompressBomb, StoppedAtTheCeiling) {
    test::TempDir dir;
    const auto bomb = dir / "bomb.xml.gz";
    run_or_throw("head -c 100M /dev/zero | gzip -c > " + quote(bomb));
    ASSERT_LT(std::filesystem::file_size(bomb), 200U * 1024);  // small on disk
    DecompressOptions options;
    options.ceiling = 10 * 1024 * 1024;
    auto reader = Decompressor::open(bomb, options);
    ASSERT_TRUE(reader);
    Result<std::span<const char>> chunk;
    do {
        chunk = reader->read();
    } while (chunk && !chunk->empty());
    ASSERT_FALSE(chunk) << "a 100 MB bomb must not pass a 10 MB ceiling";
    EXPECT_EQ(chunk.error().code, ErrorCode::Unsafe);
    EXPECT_EQ(chunk.error().subject, bomb.string());
    EXPECT_NE(chunk.error().message.find("ceiling"), std::string::npos);
    EXPECT_LE(reader->bytes_out(), 10U * 1024 * 1024 + 1) << "decoding stops at the ceiling";
}

TEST(DecompressBomb, StoppedAtTheOpenSize) {
    test::TempDir dir;
    const auto bomb = dir / "bomb.xml.zst";
    run_or_throw("head -c 20M /dev/zero | zstd -q -c > " + quote(bomb));
    const auto result = decompress_file(bomb, with_open_size(1024 * 1024),
                                        [](std::span<const char>) -> Result<void> { return {}; });
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().code, ErrorCode::Unsafe);
    EXPECT_NE(result.error().message.find("open-size"), std::string::npos);
}

TEST_F(Decompress, ShorterThanOpenSizeIsCorrupt) {
    const std::uint64_t actual = repo().primary_xml().size();
    for (const Case& each : kCases) {
        SCOPED_TRACE(each.suffix);
        auto exact = decompress_all(repo().primary(each.suffix), with_open_size(actual));
        EXPECT_TRUE(exact) << exact.error().to_string();
        auto too_short = decompress_all(repo().primary(each.suffix), with_open_size(actual + 1));
        ASSERT_FALSE(too_short);
        EXPECT_EQ(too_short.error().code, ErrorCode::Corrupt);
        auto too_long = decompress_all(repo().primary(each.suffix), with_open_size(actual - 1));
        ASSERT_FALSE(too_long);
        EXPECT_EQ(too_long.error().code, ErrorCode::Unsafe);
    }
}

TEST(DecompressOpen, MissingFileIsNotFoundAndBadZchunkHeaderCorrupt) {
    test::TempDir dir;
    auto missing = Decompressor::open(dir / "missing.xml.gz");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().code, ErrorCode::NotFound);
    const auto zchunk = dir.write("primary.xml.zck", std::string("\0ZCK1rest", 9));
    auto refused = Decompressor::open(zchunk);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, ErrorCode::Corrupt);
    EXPECT_EQ(refused.error().subject, zchunk.string());
    EXPECT_NE(refused.error().message.find("invalid zchunk header"), std::string::npos)
        << refused.error().message;
}

// createrepo_c --zck writes primary twice, as primary.xml.gz and primary.xml.zck: both read to
// the same XML and the same packages (libzck reads the zchunk one, chunk by chunk).
TEST(DecompressZchunk, PrimaryZckReadsAsPrimaryGz) {
    test::TempDir dir;
    run_or_throw("createrepo_c --quiet --zck --no-database -o " + quote(dir.path()) + " " +
                 quote(IndexTestRepo::get().repo_dir()) + " >" + quote(dir / "log") + " 2>&1");
    std::filesystem::path gz;
    std::filesystem::path zck;
    for (const auto& entry : std::filesystem::directory_iterator(dir / "repodata")) {
        const std::string name = entry.path().filename().string();
        if (name.ends_with("-primary.xml.gz")) {
            gz = entry.path();
        } else if (name.ends_with("-primary.xml.zck")) {
            zck = entry.path();
        }
    }
    ASSERT_FALSE(gz.empty());
    ASSERT_FALSE(zck.empty());
    auto from_gz = decompress_all(gz, {});
    ASSERT_TRUE(from_gz) << from_gz.error().to_string();
    DecompressOptions small;
    small.buffer_size = 4096;  // many reads, each within one chunk or across two
    small.expected_size = from_gz->size();
    Compression detected = Compression::None;
    auto from_zck = decompress_all(zck, small, &detected);
    ASSERT_TRUE(from_zck) << from_zck.error().to_string();
    EXPECT_EQ(detected, Compression::Zchunk);
    EXPECT_EQ(*from_zck, *from_gz);
    // One byte more than the open size is a bomb, as with the other codecs.
    small.expected_size = from_gz->size() - 1;
    auto too_long = decompress_all(zck, small);
    ASSERT_FALSE(too_long);
    EXPECT_EQ(too_long.error().code, ErrorCode::Unsafe);

    const auto packages_of = [](const std::filesystem::path& primary) {
        RepoPackageSource source;
        source.primary_path = primary;
        source.primary_name = primary.string();
        return read_repo_packages(source, {});
    };
    auto gz_packages = packages_of(gz);
    auto zck_packages = packages_of(zck);
    ASSERT_TRUE(gz_packages) << gz_packages.error().to_string();
    ASSERT_TRUE(zck_packages) << zck_packages.error().to_string();
    ASSERT_GT(gz_packages->index->size(), 0U);
    ASSERT_EQ(zck_packages->index->size(), gz_packages->index->size());
    for (std::size_t position = 0; position < gz_packages->index->size(); ++position) {
        const PackageView expected = (*gz_packages->index)[position];
        const PackageView actual = (*zck_packages->index)[position];
        EXPECT_EQ(actual.nevra(), expected.nevra());
        EXPECT_EQ(actual.checksum_hex(), expected.checksum_hex());
        EXPECT_EQ(actual.location_href, expected.location_href);
    }
    EXPECT_EQ(zck_packages->selection.positions, gz_packages->selection.positions);
}

TEST(DecompressSink, SinkErrorStopsAndIsReturned) {
    test::TempDir dir;
    const auto plain = dir.write("plain.xml", std::string(10000, 'x'));
    int calls = 0;
    DecompressOptions options;
    options.buffer_size = 100;
    const auto result = decompress_file(plain, options, [&](std::span<const char>) -> Result<void> {
        ++calls;
        return make_error(ErrorCode::BadInput, "stop here");
    });
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().message, "stop here");
    EXPECT_EQ(calls, 1);
}

TEST_F(Decompress, DecompressFileYieldsTheSameBytesInOrderForEveryCompression) {
    // decompress_file decodes on a thread of its own, a few chunks ahead of the sink.
    for (const Case& each : kCases) {
        SCOPED_TRACE(each.suffix);
        DecompressOptions options;
        options.buffer_size = 1000;  // many more chunks than the read-ahead ring holds
        std::string contents;
        const auto total = decompress_file(repo().primary(each.suffix), options,
                                           [&](std::span<const char> chunk) -> Result<void> {
                                               EXPECT_LE(chunk.size(), options.buffer_size);
                                               contents.append(chunk.data(), chunk.size());
                                               return {};
                                           });
        ASSERT_TRUE(total) << total.error().to_string();
        EXPECT_EQ(*total, repo().primary_xml().size());
        EXPECT_EQ(contents, repo().primary_xml());
    }
}

TEST(DecompressSink, SinkErrorStopsTheReadAheadThread) {
    test::TempDir dir;
    const auto large = dir / "large.xml.zst";
    run_or_throw("head -c 50M /dev/zero | zstd -q -c > " + quote(large));
    for (int stop_after : {1, 3, 10}) {
        SCOPED_TRACE(stop_after);
        DecompressOptions options;
        options.buffer_size = 4096;
        int calls = 0;
        const auto result =
            decompress_file(large, options, [&](std::span<const char>) -> Result<void> {
                if (++calls == stop_after) {
                    return make_error(ErrorCode::BadInput, "stop here");
                }
                return {};
            });
        ASSERT_FALSE(result);
        EXPECT_EQ(result.error().message, "stop here");
        EXPECT_EQ(calls, stop_after);
    }
}

TEST(DecompressBomb, DecompressFileStopsAtTheCeilingAndReportsIt) {
    test::TempDir dir;
    const auto bomb = dir / "bomb.xml.gz";
    run_or_throw("head -c 100M /dev/zero | gzip -c > " + quote(bomb));
    DecompressOptions options;
    options.ceiling = 10 * 1024 * 1024;
    std::uint64_t consumed = 0;
    const auto result = decompress_file(bomb, options, [&](std::span<const char> chunk) {
        consumed += chunk.size();
        return Result<void>();
    });
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().code, ErrorCode::Unsafe);
    EXPECT_EQ(result.error().subject, bomb.string());
    EXPECT_LE(consumed, 10U * 1024 * 1024);
}

}  // namespace
}  // namespace rpmirror
