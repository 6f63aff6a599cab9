// Where a transfer's bytes go: the .part file and the streaming hasher. The pwrite always happens
// in curl's write callback, while the bytes are hot in the cache; the hashing happens there too
// (no io threads: so in every loop of a run with several, DownloadOptions::loops) or on a worker
// thread of an IoPool, which receives a copy of the bytes in blocks, in order. (Moving the
// pwrite to the worker as well was measured slower: the queued blocks go cold and the copy into
// the page cache then reads them back from memory; see doc/benchmarks.md "Download engine".
// Gathering the 16 KiB pieces libcurl hands the callback into one pwrite per block was measured
// slower as well: a cold sync of bench/sync's full repository on a 2-core KVM guest, Linux 6.18,
// ext4, took 7.5-9.1 s of system time instead of 4.4-5.2 s, with blocks page-aligned or not, nearly
// all of it in the kernel's copy into the page cache. Holding back each piece's less-than-a-page
// tail so that every pwrite ends on a page boundary, which spares the kernel zeroing the rest of a
// new folio, moved nothing: 4.52 -> 4.49 s wall over 8 pairs; on a second machine the zeroing left
// the profile but the copy into the page cache grew by more (it then takes the first touch of each
// page), and the wall time did not move either. Hashing inline on one loop and 64 KiB blocks were
// slower: doc/benchmarks.md.)
//
// Ownership: while jobs are pending, a PartSink's writer belongs to its worker; the loop thread
// learns results only through the CompletionQueue (whose mutex orders the accesses).
#pragma once

#include <curl/curl.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "checksum/hasher.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "rpmirror/util/error.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror::download {

inline constexpr std::size_t kBlockSize = 256 * 1024;
// A transfer whose worker lags this far behind is paused until it is below the low mark.
inline constexpr std::uint64_t kQueueHighBytes = 16 * 1024 * 1024;
inline constexpr std::uint64_t kQueueLowBytes = 4 * 1024 * 1024;
// The same, for all transfers of a pool together: without it, N transfers could queue N times
// kQueueHighBytes when the workers fall behind, and that is the process's peak memory.
inline constexpr std::uint64_t kPoolQueueHighBytes = 32 * 1024 * 1024;
inline constexpr std::uint64_t kPoolQueueLowBytes = 16 * 1024 * 1024;

// What a .part file must be to be published, and where.
struct PublishSpec {
    int dir_fd = -1;
    std::string part_name;
    std::string final_name;
    std::string shown_path;  // for messages: <root>/<destination>
    ChecksumType type = ChecksumType::Sha256;
    std::string expected_digest;  // lowercase
    std::uint64_t expected_size = 0;
};

// What finishing a .part found.
struct FinishResult {
    std::optional<Error> local_error;         // our side failed (write, read, rename)
    std::optional<std::string> source_error;  // a file:// source was unusable (mirror's fault)
    std::uint64_t size = 0;                   // bytes in the .part
    std::string digest;                       // lowercase hex of those bytes
    bool published = false;  // size and digest matched: xattr set, renamed to the final name
};

struct Completion {
    enum class Kind { Finished, Unpause, UnpauseAll };
    std::size_t transfer = 0;
    Kind kind = Kind::Finished;
};

// Completions posted by workers (or inline sinks) for the loop thread. Pushing wakes the curl
// multi handle's poll. Thread-safe.
class CompletionQueue {
  public:
    void set_multi(CURLM* multi);
    void push(Completion completion);
    std::vector<Completion> take();

  private:
    std::mutex mutex_;
    std::vector<Completion> items_;
    CURLM* multi_ = nullptr;
};

// The file side of one transfer: fd + hasher. write_at/truncate_file run on the loop thread;
// everything else on the sink's worker (or inline), ordered by the job queue.
class PartWriter {
  public:
    void attach(UniqueFd fd, ChecksumType type, std::string shown_path);
    // Loop thread: appends at the write offset. Returns the errno of a failed write, or 0.
    int write_at(const std::byte* data, std::size_t size);
    // Loop thread: writes at `offset`, leaving the write offset alone (one range of a segmented
    // download). Returns the errno of a failed write, or 0.
    int write_range(std::uint64_t offset, const std::byte* data, std::size_t size);
    int truncate_file(std::uint64_t size = 0);  // loop thread: cuts the file to `size` bytes
    std::uint64_t written() const { return written_; }
    void set_written(std::uint64_t size) { written_ = size; }
    void hash(const std::byte* data, std::size_t size);
    void reset_hash();
    void append(const std::byte* data, std::size_t size);  // write_at + hash (copies, inline)
    void truncate();                                       // empties the file and the hash state
    void hash_prefix(std::uint64_t size);  // rebuilds the hash state from the file's first bytes
    // Hashes the whole file as it is on disk (mmap, as `rpmirror verify` does) for finish(): the
    // ranges of a segmented download were written without the streaming hasher.
    void hash_file();
    void copy_from(const std::string& source, std::uint64_t expected_size);  // file:// sources
    // Digest, compare, then (on a match) the modification time `mtime_seconds` when set (the
    // server's Last-Modified, --remote-time), xattr, rename, close.
    FinishResult finish(const PublishSpec& spec,
                        std::optional<std::int64_t> mtime_seconds = std::nullopt);
    void close();
    bool failed() const { return error_.has_value(); }

  private:
    void fail(std::string message, int sys_errno);
    void copy_by_reading(int input_fd, const std::string& source, std::uint64_t source_size);

    UniqueFd fd_;
    std::optional<Hasher> hasher_;
    std::optional<std::string> file_digest_;  // set by hash_file(): finish() uses it
    std::uint64_t size_ = 0;                  // bytes hashed
    std::uint64_t written_ = 0;               // loop thread: the next pwrite offset
    std::string shown_path_;
    std::optional<Error> error_;
    std::optional<std::string> source_error_;
    std::vector<std::byte> read_buffer_;
};

class IoPool;

// One transfer's sink. Loop-thread methods only, except where noted.
class PartSink {
  public:
    // `pool` null = inline: every operation runs at once on the calling thread.
    PartSink(std::size_t transfer_index, IoPool* pool, unsigned worker,
             CompletionQueue& completions);
    PartSink(const PartSink&) = delete;
    PartSink& operator=(const PartSink&) = delete;

    void attach(UniqueFd fd, PublishSpec spec);
    void hash_prefix(std::uint64_t size);
    // Appends body bytes (pwrite now, hash now or on the worker). Returns false iff the write
    // failed (write_errno() says why): abort the transfer.
    bool write(const char* data, std::size_t size);
    int write_errno() const { return write_errno_; }
    // Writes a segmented download's bytes at `offset` (pwrite now, no hashing: see hash_file).
    // Returns false iff the write failed (write_errno() says why).
    bool write_range(std::uint64_t offset, const char* data, std::size_t size);
    // Cuts the .part to its first `size` bytes (what an interrupted segmented download keeps for
    // a resume). Only while no job of this sink is queued.
    void keep_prefix(std::uint64_t size);
    // Queues the hashing of the whole .part (PartWriter::hash_file), to be followed by finish().
    void hash_file();
    // Returns true iff the worker lags too far behind: the write callback should pause; an
    // Unpause completion follows once it caught up.
    bool should_pause();
    bool has_failed() const { return io_failed_.load(); }
    void restart();
    // Posts a Finished completion; result() is valid after it. `mtime_seconds`, when set, is
    // given to the published file before its checksum cache is written.
    void finish(std::optional<std::int64_t> mtime_seconds = std::nullopt);
    void copy_from(std::string source);
    void close();

    const FinishResult& result() const { return result_; }
    const PublishSpec& spec() const { return spec_; }

  private:
    friend class IoPool;
    enum class JobKind { Data, ResetHash, HashPrefix, HashFile, Finish, Copy, Close };
    void flush_pending();
    void submit(JobKind kind, std::unique_ptr<std::byte[]> block = {}, std::size_t length = 0,
                std::uint64_t value = 0, std::string text = {});
    void run_job(JobKind kind, const std::byte* data, std::size_t length, std::uint64_t value,
                 const std::string& text);  // on the worker (or inline)

    std::size_t transfer_index_;
    IoPool* pool_;
    unsigned worker_;
    CompletionQueue& completions_;
    PartWriter writer_;
    PublishSpec spec_;
    FinishResult result_;
    std::unique_ptr<std::byte[]> pending_;
    std::size_t pending_length_ = 0;
    std::atomic<std::uint64_t> queued_bytes_{0};
    std::atomic<bool> pause_requested_{false};
    std::atomic<bool> io_failed_{false};
    int write_errno_ = 0;
};

// Worker threads for PartSinks: each worker runs the jobs of its sinks in submission order.
// Thread-safe.
class IoPool {
  public:
    explicit IoPool(unsigned threads);
    IoPool(const IoPool&) = delete;
    IoPool& operator=(const IoPool&) = delete;
    ~IoPool();

    unsigned size() const { return static_cast<unsigned>(workers_.size()); }
    // Waits until every submitted job has run.
    void drain();
    // Returns the CPU seconds used so far by all workers together.
    double cpu_seconds() const;

    std::unique_ptr<std::byte[]> take_block();
    void return_block(std::unique_ptr<std::byte[]> block);

  private:
    friend class PartSink;
    struct Job {
        PartSink* sink = nullptr;
        PartSink::JobKind kind = PartSink::JobKind::Data;
        std::unique_ptr<std::byte[]> block;
        std::size_t length = 0;
        std::uint64_t value = 0;
        std::string text;
    };
    struct Worker {
        std::mutex mutex;
        std::condition_variable wake;
        std::deque<Job> jobs;
        std::thread thread;
    };
    void submit(unsigned worker, Job job);
    void work(Worker& worker);

    std::vector<std::unique_ptr<Worker>> workers_;
    std::atomic<bool> stopping_{false};
    std::atomic<std::uint64_t> queued_total_{0};     // Data bytes queued over all sinks
    std::atomic<bool> pool_pause_requested_{false};  // some sink paused for the pool's budget
    std::mutex idle_mutex_;
    std::condition_variable idle_;
    std::size_t outstanding_ = 0;  // guarded by idle_mutex_
    std::mutex blocks_mutex_;
    std::vector<std::unique_ptr<std::byte[]>> free_blocks_;
};

}  // namespace rpmirror::download
