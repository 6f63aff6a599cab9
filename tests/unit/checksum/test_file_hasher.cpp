#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>

#include "checksum/file_hasher_internal.hpp"
#include "checksum/hasher.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "support/child_process.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror {
namespace {

constexpr std::size_t kBuffer = 64 * 1024;
constexpr std::uint64_t kThreshold = 256 * 1024;  // a bound between the chooser's size classes

HashOptions options_for(ReadMethod method) {
    HashOptions options;
    options.use_cache = false;
    options.method = method;
    options.buffer_size = kBuffer;
    return options;
}

// Installs a per-thread hook that runs `action` once, after the first chunk is hashed.
class AfterFirstChunk {
  public:
    explicit AfterFirstChunk(std::function<void()> action)
        : hook_([this, action = std::move(action)](std::uint64_t) {
              if (!fired_) {
                  fired_ = true;
                  action();
              }
          }) {
        testing::after_chunk_hook = &hook_;
    }
    ~AfterFirstChunk() { testing::after_chunk_hook = nullptr; }
    bool fired() const { return fired_; }

  private:
    bool fired_ = false;
    std::function<void(std::uint64_t)> hook_;
};

TEST(FileHasher, EveryReadMethodAgreesAtEveryBoundarySize) {
    test::TempDir dir;
    const std::size_t sizes[] = {0,
                                 1,
                                 kBuffer - 1,
                                 kBuffer,
                                 kBuffer + 1,
                                 kThreshold - 1,
                                 kThreshold,
                                 kThreshold + 1,
                                 3 * kBuffer + 17};
    FileHasher by_pread(options_for(ReadMethod::Pread));
    FileHasher by_mmap(options_for(ReadMethod::Mmap));
    FileHasher by_populated(options_for(ReadMethod::MmapPopulate));
    FileHasher by_auto(options_for(ReadMethod::Auto));
    for (const std::size_t size : sizes) {
        SCOPED_TRACE(size);
        const std::string contents = test::pattern_bytes(size);
        const auto file = dir.write("file-" + std::to_string(size), contents);
        const std::string expected = hash_bytes(ChecksumType::Sha256, contents);
        const auto pread_digest = by_pread.hash(file, ChecksumType::Sha256);
        const auto mmap_digest = by_mmap.hash(file, ChecksumType::Sha256);
        const auto populated_digest = by_populated.hash(file, ChecksumType::Sha256);
        const auto auto_digest = by_auto.hash(file, ChecksumType::Sha256);
        ASSERT_TRUE(pread_digest && mmap_digest && populated_digest && auto_digest);
        EXPECT_EQ(pread_digest->hex, expected);
        EXPECT_EQ(mmap_digest->hex, expected);
        EXPECT_EQ(populated_digest->hex, expected);
        EXPECT_EQ(auto_digest->hex, expected);
        EXPECT_EQ(pread_digest->size, size);
        EXPECT_EQ(mmap_digest->size, size);
        EXPECT_EQ(populated_digest->size, size);
    }
}

TEST(FileHasher, FilesLargerThanOneMappingWindowHashAlikeByBothMethods) {
    // The mmap path maps 16 MiB windows; cross two window boundaries, ending mid-page.
    test::TempDir dir;
    const std::string contents = test::pattern_bytes(2 * 16 * 1024 * 1024 + 12345);
    const auto file = dir.write("big.rpm", contents);
    const auto by_mmap = FileHasher(options_for(ReadMethod::Mmap)).hash(file, ChecksumType::Sha256);
    const auto by_pread =
        FileHasher(options_for(ReadMethod::Pread)).hash(file, ChecksumType::Sha256);
    ASSERT_TRUE(by_mmap && by_pread);
    EXPECT_EQ(by_mmap->hex, hash_bytes(ChecksumType::Sha256, contents));
    EXPECT_EQ(by_pread->hex, by_mmap->hex);
}

TEST(FileHasher, TruncatedInALaterMappingWindowIsCorrupt) {
    test::TempDir dir;
    const auto file = dir.write("shrinking.rpm", test::pattern_bytes(40 * 1024 * 1024));
    FileHasher hasher(options_for(ReadMethod::Mmap));
    bool truncated = false;
    std::function<void(std::uint64_t)> hook = [&](std::uint64_t bytes_hashed) {
        if (!truncated && bytes_hashed > 20 * 1024 * 1024) {  // inside the second window
            truncated = true;
            std::filesystem::resize_file(file, 21 * 1024 * 1024);
        }
    };
    testing::after_chunk_hook = &hook;
    const auto digest = hasher.hash(file, ChecksumType::Sha256);
    testing::after_chunk_hook = nullptr;
    ASSERT_TRUE(truncated);
    ASSERT_FALSE(digest);
    EXPECT_EQ(digest.error().code, ErrorCode::Corrupt);
}

TEST(FileHasher, AStopRequestedEndsHashingWithInterruptedByEitherMethod) {
    test::TempDir dir;
    const auto path = dir / "big.rpm";
    {
        std::ofstream file(path, std::ios::binary);
        file.seekp(64 << 20);
        file.put('x');  // 64 MiB + 1, sparse: four mapping windows
    }
    std::stop_source stop;
    stop.request_stop();
    for (const ReadMethod method :
         {ReadMethod::Mmap, ReadMethod::MmapPopulate, ReadMethod::Pread}) {
        HashOptions options;
        options.use_cache = false;
        options.method = method;
        options.stop = stop.get_token();
        auto digest = hash_file(path, ChecksumType::Sha256, options);
        ASSERT_FALSE(digest);
        EXPECT_EQ(digest.error().code, ErrorCode::Interrupted);
        EXPECT_EQ(digest.error().subject, path.string());
    }
    VerifyOptions verify_options;
    verify_options.hash.stop = stop.get_token();
    const std::vector<VerifyRequest> requests(
        3, VerifyRequest{path, ChecksumType::Sha256, std::string(64, '0'), (64 << 20) + 1});
    for (const VerifyResult& result : verify_files(requests, verify_options)) {
        EXPECT_NE(result.status, VerifyStatus::Ok);
        ASSERT_TRUE(result.error);
        EXPECT_EQ(result.error->code, ErrorCode::Interrupted);
    }
}

TEST(FileHasher, MissingFileIsNotFoundAndNamed) {
    test::TempDir dir;
    const auto missing = dir / "no-such.rpm";
    const auto digest = hash_file(missing, ChecksumType::Sha256);
    ASSERT_FALSE(digest);
    EXPECT_EQ(digest.error().code, ErrorCode::NotFound);
    EXPECT_EQ(digest.error().subject, missing.string());
    EXPECT_EQ(digest.error().sys_errno, ENOENT);
    EXPECT_NE(digest.error().to_string().find("No such file or directory"), std::string::npos);
}

TEST(FileHasher, OpenFileHashesAsItsPathAndKeepsTheOffset) {
    test::TempDir dir;
    const auto path = dir.write("file", std::string(3 * 1024 * 1024 + 5, 'x'));
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::lseek(fd, 17, SEEK_SET), 17);
    for (const ReadMethod method :
         {ReadMethod::Pread, ReadMethod::Mmap, ReadMethod::MmapPopulate}) {
        FileHasher hasher(options_for(method));
        const auto from_fd = hasher.hash_fd(fd, ChecksumType::Sha256, "the file");
        ASSERT_TRUE(from_fd) << from_fd.error().to_string();
        EXPECT_EQ(from_fd->hex, hash_file(path, ChecksumType::Sha256, options_for(method))->hex);
        EXPECT_EQ(from_fd->size, 3U * 1024 * 1024 + 5);
        EXPECT_EQ(::lseek(fd, 0, SEEK_CUR), 17);
    }
    ::close(fd);
}

TEST(FileHasher, OpenFifoIsRefusedByHashFd) {
    test::TempDir dir;
    const auto fifo = dir / "pipe";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    const int fd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    FileHasher hasher;
    const auto digest = hasher.hash_fd(fd, ChecksumType::Sha256, "fd 3");
    ::close(fd);
    ASSERT_FALSE(digest);
    EXPECT_EQ(digest.error().code, ErrorCode::BadInput);
    EXPECT_EQ(digest.error().subject, "fd 3");
}

TEST(FileHasher, DirectoryIsRefusedAsNotARegularFile) {
    test::TempDir dir;
    const auto digest = hash_file(dir.path(), ChecksumType::Sha256);
    ASSERT_FALSE(digest);
    EXPECT_EQ(digest.error().code, ErrorCode::BadInput);
    EXPECT_EQ(digest.error().message, "is a directory");
}

TEST(FileHasher, FifoWithoutWriterIsRefusedWithoutBlocking) {
    test::TempDir dir;
    const auto fifo = dir / "pipe";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    const auto digest = hash_file(fifo, ChecksumType::Sha256);  // would hang if it waited
    ASSERT_FALSE(digest);
    EXPECT_EQ(digest.error().code, ErrorCode::BadInput);
    EXPECT_NE(digest.error().message.find("FIFO"), std::string::npos);
}

TEST(FileHasher, UnreadableFileIsIoErrorWithErrno) {
    test::TempDir dir;
    const auto secret = dir.write("secret.rpm", "content");
    ASSERT_EQ(::chmod(secret.c_str(), 0000), 0);
    ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);
    // Root reads anything: check as an unprivileged user in a child process.
    const int outcome = test::run_in_child([&] {
        if (::geteuid() == 0 && ::setresuid(65534, 65534, 65534) != 0) {
            return 10;
        }
        const auto digest = hash_file(secret, ChecksumType::Sha256);
        if (digest) {
            return 11;
        }
        if (digest.error().code != ErrorCode::Io || digest.error().sys_errno != EACCES) {
            return 12;
        }
        return digest.error().to_string() == secret.string() + ": cannot open: Permission denied"
                   ? 0
                   : 13;
    });
    EXPECT_EQ(outcome, 0);
}

TEST(FileHasher, TruncatedDuringMmapHashIsCorruptNotACrash) {
    test::TempDir dir;
    const auto file = dir.write("shrinking.rpm", test::pattern_bytes(8 * 1024 * 1024));
    FileHasher hasher(options_for(ReadMethod::Mmap));
    AfterFirstChunk truncate([&] { std::filesystem::resize_file(file, 4096); });
    const auto digest = hasher.hash(file, ChecksumType::Sha256);
    ASSERT_TRUE(truncate.fired());
    ASSERT_FALSE(digest);
    EXPECT_EQ(digest.error().code, ErrorCode::Corrupt);
    EXPECT_EQ(digest.error().subject, file.string());
}

TEST(FileHasher, TruncatedDuringPreadHashIsCorrupt) {
    test::TempDir dir;
    const auto file = dir.write("shrinking.rpm", test::pattern_bytes(1024 * 1024));
    FileHasher hasher(options_for(ReadMethod::Pread));
    AfterFirstChunk truncate([&] { std::filesystem::resize_file(file, kBuffer + 5); });
    const auto digest = hasher.hash(file, ChecksumType::Sha256);
    ASSERT_TRUE(truncate.fired());
    ASSERT_FALSE(digest);
    EXPECT_EQ(digest.error().code, ErrorCode::Corrupt);
    EXPECT_EQ(digest.error().message, "file shrank while being read");
}

TEST(FileHasher, GrownDuringHashIsCorruptForBothMethods) {
    for (const ReadMethod method :
         {ReadMethod::Pread, ReadMethod::Mmap, ReadMethod::MmapPopulate}) {
        test::TempDir dir;
        const auto file = dir.write("growing.rpm", test::pattern_bytes(4 * 1024 * 1024));
        FileHasher hasher(options_for(method));
        AfterFirstChunk append(
            [&] { std::ofstream(file, std::ios::binary | std::ios::app) << "more bytes"; });
        const auto digest = hasher.hash(file, ChecksumType::Sha256);
        ASSERT_TRUE(append.fired());
        ASSERT_FALSE(digest);
        EXPECT_EQ(digest.error().code, ErrorCode::Corrupt);
    }
}

TEST(FileHasher, HasherIsReusableAfterAFailure) {
    test::TempDir dir;
    const auto file = dir.write("shrinking.rpm", test::pattern_bytes(4 * 1024 * 1024));
    const auto good = dir.write("good.rpm", "abc");
    FileHasher hasher(options_for(ReadMethod::Mmap));
    {
        AfterFirstChunk truncate([&] { std::filesystem::resize_file(file, 10); });
        ASSERT_FALSE(hasher.hash(file, ChecksumType::Sha256));
    }
    const auto digest = hasher.hash(good, ChecksumType::Sha1);
    ASSERT_TRUE(digest);
    EXPECT_EQ(digest->hex, "a9993e364706816aba3e25717850c26c9cd0d89d");
}

TEST(FileHasher, StreamHashesAPipeToEndOfFile) {
    int pipe_fds[2];
    ASSERT_EQ(::pipe(pipe_fds), 0);
    ASSERT_EQ(::write(pipe_fds[1], "abc", 3), 3);
    ::close(pipe_fds[1]);
    FileHasher hasher;
    const auto digest = hasher.hash_stream(pipe_fds[0], ChecksumType::Md5, "pipe");
    ::close(pipe_fds[0]);
    ASSERT_TRUE(digest);
    EXPECT_EQ(digest->hex, "900150983cd24fb0d6963f7d28e17f72");
    EXPECT_EQ(digest->size, 3U);
}

TEST(FileHasher, UnrelatedSigbusStillTerminatesTheProcess) {
    // The SIGBUS handler must only swallow faults inside a guarded mapping.
    test::TempDir dir;
    const auto file = dir.write("installs-handler", test::pattern_bytes(2 * 1024 * 1024));
    const int outcome = test::run_in_child([&] {
        FileHasher hasher(options_for(ReadMethod::Mmap));
        if (!hasher.hash(file, ChecksumType::Sha256)) {  // installs the handler
            return 20;
        }
        ::raise(SIGBUS);
        return 21;  // reached only if the signal was swallowed
    });
    EXPECT_NE(outcome, 21);
    EXPECT_NE(outcome, 20);
}

}  // namespace
}  // namespace rpmirror
