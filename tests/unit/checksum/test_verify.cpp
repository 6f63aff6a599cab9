#include <sys/stat.h>

#include <gtest/gtest.h>

#include "checksum/file_hasher_internal.hpp"
#include "checksum/hasher.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "support/temp_dir.hpp"
#include "unit/checksum/checksum_test_support.hpp"

namespace rpmirror {
namespace {

VerifyOptions uncached(unsigned threads) {
    VerifyOptions options;
    options.threads = threads;
    options.hash.use_cache = false;
    return options;
}

TEST(Verify, ReportsEachOutcomeForItsOwnFile) {
    test::TempDir dir;
    const auto good = dir.write("good.rpm", "abc");
    const auto corrupt = dir.write("corrupt.rpm", "abd");
    const auto short_file = dir.write("short.rpm", "ab");
    const std::vector<VerifyRequest> requests = {
        {good, ChecksumType::Sha256, kAbcSha256, 3},
        {corrupt, ChecksumType::Sha256, kAbcSha256, 3},
        {short_file, ChecksumType::Sha256, kAbcSha256, 3},
        {dir / "missing.rpm", ChecksumType::Sha256, kAbcSha256, 3},
        {dir.path(), ChecksumType::Sha256, kAbcSha256, std::nullopt},
        {good, ChecksumType::Sha256,
         "BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD", std::nullopt},
    };
    const auto results = verify_files(requests, uncached(2));
    ASSERT_EQ(results.size(), requests.size());

    EXPECT_EQ(results[0].status, VerifyStatus::Ok);
    EXPECT_EQ(results[0].actual_digest, kAbcSha256);

    EXPECT_EQ(results[1].status, VerifyStatus::DigestMismatch);
    EXPECT_EQ(results[1].actual_digest, hash_bytes(ChecksumType::Sha256, "abd"));

    EXPECT_EQ(results[2].status, VerifyStatus::SizeMismatch);
    EXPECT_EQ(results[2].actual_size, 2U);
    EXPECT_TRUE(results[2].actual_digest.empty()) << "size mismatch must not hash";

    EXPECT_EQ(results[3].status, VerifyStatus::Missing);
    ASSERT_TRUE(results[3].error);
    EXPECT_EQ(results[3].error->sys_errno, ENOENT);

    EXPECT_EQ(results[4].status, VerifyStatus::IoError);
    ASSERT_TRUE(results[4].error);
    EXPECT_EQ(results[4].error->subject, dir.path().string());

    EXPECT_EQ(results[5].status, VerifyStatus::Ok) << "expected digests compare case-insensitively";
}

TEST(Verify, ManyFilesOnManyWorkersMatchOneWorker) {
    test::TempDir dir;
    std::vector<VerifyRequest> requests;
    for (std::size_t index = 0; index < 200; ++index) {
        const std::string contents = test::pattern_bytes(index * 997);
        const auto file = dir.write("pkg-" + std::to_string(index) + ".rpm", contents);
        // Every seventh file is listed with a wrong digest.
        const std::string expected =
            index % 7 == 0 ? std::string(64, '0') : hash_bytes(ChecksumType::Sha256, contents);
        requests.push_back({file, ChecksumType::Sha256, expected, contents.size()});
    }
    const auto serial = verify_files(requests, uncached(1));
    const auto parallel = verify_files(requests, uncached(8));
    ASSERT_EQ(serial.size(), requests.size());
    ASSERT_EQ(parallel.size(), requests.size());
    for (std::size_t index = 0; index < requests.size(); ++index) {
        SCOPED_TRACE(index);
        const VerifyStatus expected_status =
            index % 7 == 0 ? VerifyStatus::DigestMismatch : VerifyStatus::Ok;
        EXPECT_EQ(serial[index].status, expected_status);
        EXPECT_EQ(parallel[index].status, expected_status);
        EXPECT_EQ(parallel[index].actual_digest, serial[index].actual_digest);
    }
}

// The sizes of the files hashed on this thread, in the order they were hashed (each file's last
// after_chunk_hook value: the hook reports the bytes hashed so far of the current file).
class HashedSizes {
  public:
    HashedSizes() { testing::after_chunk_hook = &hook_; }
    HashedSizes(const HashedSizes&) = delete;
    HashedSizes& operator=(const HashedSizes&) = delete;
    ~HashedSizes() { testing::after_chunk_hook = nullptr; }
    const std::vector<std::uint64_t>& sizes() const { return sizes_; }

  private:
    std::vector<std::uint64_t> sizes_;
    std::function<void(std::uint64_t)> hook_ = [this](std::uint64_t bytes_hashed) {
        if (!sizes_.empty() && bytes_hashed > sizes_.back()) {
            sizes_.back() = bytes_hashed;  // the same file, further on
        } else {
            sizes_.push_back(bytes_hashed);
        }
    };
};

TEST(Verify, LargestFilesAreHashedFirstAndResultsKeepTheRequestOrder) {
    test::TempDir dir;
    // Distinct sizes; the middle one spans two pread buffers.
    const std::vector<std::size_t> sizes = {3000, 300000, 30, 70000};
    std::vector<VerifyRequest> requests;
    std::vector<std::filesystem::path> paths;
    for (std::size_t index = 0; index < sizes.size(); ++index) {
        const std::string content(sizes[index], static_cast<char>('a' + index));
        paths.push_back(dir.write("f" + std::to_string(index) + ".rpm", content));
        // The third request has no expected size: its current size orders it.
        requests.push_back(
            {paths.back(), ChecksumType::Sha256, hash_bytes(ChecksumType::Sha256, content),
             index == 2 ? std::nullopt : std::optional<std::uint64_t>(sizes[index])});
    }
    const std::vector<std::uint64_t> largest_first = {300000, 70000, 3000, 30};
    {
        HashedSizes hashed;  // one worker: the calling thread hashes every file
        const auto results = verify_files(requests, uncached(1));
        EXPECT_EQ(hashed.sizes(), largest_first);
        ASSERT_EQ(results.size(), requests.size());
        for (std::size_t index = 0; index < results.size(); ++index) {
            EXPECT_EQ(results[index].status, VerifyStatus::Ok) << index;
            EXPECT_EQ(results[index].actual_size, sizes[index]) << index;
        }
    }
    {
        HashedSizes hashed;
        const auto digests = hash_files(paths, ChecksumType::Sha256, uncached(1));
        EXPECT_EQ(hashed.sizes(), largest_first);
        ASSERT_EQ(digests.size(), paths.size());
        for (std::size_t index = 0; index < digests.size(); ++index) {
            ASSERT_TRUE(digests[index]) << index;
            EXPECT_EQ(digests[index]->hex, requests[index].expected_digest) << index;
        }
    }
}

TEST(Verify, EmptyRequestListGivesNoResults) {
    EXPECT_TRUE(verify_files({}, uncached(0)).empty());
}

TEST(Verify, HashFilesKeepsOrderAndReportsErrorsPerFile) {
    test::TempDir dir;
    const std::vector<std::filesystem::path> paths = {dir.write("a", "abc"), dir / "missing",
                                                      dir.write("b", "")};
    const auto digests = hash_files(paths, ChecksumType::Sha256, uncached(3));
    ASSERT_EQ(digests.size(), 3U);
    ASSERT_TRUE(digests[0]);
    EXPECT_EQ(digests[0]->hex, kAbcSha256);
    ASSERT_FALSE(digests[1]);
    EXPECT_EQ(digests[1].error().code, ErrorCode::NotFound);
    ASSERT_TRUE(digests[2]);
    EXPECT_EQ(digests[2]->hex, hash_bytes(ChecksumType::Sha256, ""));
}

}  // namespace
}  // namespace rpmirror
