#include "download/part_sink.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "checksum/hasher.hpp"
#include "download/download.hpp"
#include "fs/beneath.hpp"
#include "fs/fault.hpp"

namespace rpmirror::download {

// ---------------------------------------------------------------------------------------------
// CompletionQueue

void CompletionQueue::set_multi(CURLM* multi) {
    std::lock_guard lock(mutex_);
    multi_ = multi;
}

void CompletionQueue::push(Completion completion) {
    std::lock_guard lock(mutex_);
    items_.push_back(completion);
    if (multi_ != nullptr) {
        curl_multi_wakeup(multi_);
    }
}

std::vector<Completion> CompletionQueue::take() {
    std::lock_guard lock(mutex_);
    return std::exchange(items_, {});
}

// ---------------------------------------------------------------------------------------------
// PartWriter

void PartWriter::attach(UniqueFd fd, ChecksumType type, std::string shown_path) {
    fd_ = std::move(fd);
    hasher_.emplace(type);
    file_digest_.reset();
    size_ = 0;
    shown_path_ = std::move(shown_path);
    error_.reset();
    source_error_.reset();
}

void PartWriter::fail(std::string message, int sys_errno) {
    if (!error_) {
        error_ = Error{sys_errno == ENOENT ? ErrorCode::NotFound : ErrorCode::Io,
                       std::move(message), shown_path_, sys_errno};
    }
}

int PartWriter::write_range(std::uint64_t offset, const std::byte* data, std::size_t size) {
    std::size_t done = 0;
    while (done < size) {
        const ssize_t result =
            fault::pwrite(fd_.get(), data + done, size - done, static_cast<off_t>(offset + done));
        if (result < 0) {
            if (errno == EINTR) {
                continue;
            }
            return errno;
        }
        done += static_cast<std::size_t>(result);
    }
    return 0;
}

int PartWriter::write_at(const std::byte* data, std::size_t size) {
    if (const int error = write_range(written_, data, size); error != 0) {
        return error;
    }
    written_ += size;
    return 0;
}

int PartWriter::truncate_file(std::uint64_t size) {
    written_ = size;
    return ::ftruncate(fd_.get(), static_cast<off_t>(size)) == 0 ? 0 : errno;
}

void PartWriter::hash(const std::byte* data, std::size_t size) {
    hasher_->update(data, size);
    size_ += size;
}

void PartWriter::reset_hash() {
    hasher_->reset();
    file_digest_.reset();
    size_ = 0;
    source_error_.reset();
}

void PartWriter::append(const std::byte* data, std::size_t size) {
    if (error_ || !fd_) {
        return;
    }
    if (const int error = write_at(data, size); error != 0) {
        fail("cannot write", error);
        return;
    }
    hash(data, size);
}

void PartWriter::truncate() {
    if (!fd_) {
        return;
    }
    if (const int error = truncate_file(); error != 0) {
        fail("cannot truncate", error);
    }
    reset_hash();
}

void PartWriter::hash_prefix(std::uint64_t size) {
    if (error_ || !fd_) {
        return;
    }
    read_buffer_.resize(kBlockSize);
    std::uint64_t offset = 0;
    while (offset < size) {
        const std::size_t want =
            static_cast<std::size_t>(std::min<std::uint64_t>(read_buffer_.size(), size - offset));
        const ssize_t result =
            ::pread(fd_.get(), read_buffer_.data(), want, static_cast<off_t>(offset));
        if (result < 0 && errno == EINTR) {
            continue;
        }
        if (result < 0) {
            fail("cannot read the partial download", errno);
            return;
        }
        if (result == 0) {
            fail("partial download shrank while being read", 0);
            return;
        }
        hasher_->update(read_buffer_.data(), static_cast<std::size_t>(result));
        offset += static_cast<std::uint64_t>(result);
    }
    size_ = size;
}

void PartWriter::hash_file() {
    if (error_ || !fd_) {
        return;
    }
    FileHasher hasher(HashOptions{.use_cache = false});
    auto digest = hasher.hash_fd(fd_.get(), hasher_->type(), shown_path_);
    if (!digest) {
        error_ = digest.error();
        return;
    }
    file_digest_ = std::move(digest->hex);
    size_ = digest->size;
}

void PartWriter::copy_from(const std::string& source, std::uint64_t expected_size) {
    truncate();
    if (error_) {
        return;
    }
    UniqueFd input(::open(source.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
    if (!input) {
        source_error_ = std::string(errno == ENOENT ? "no such file" : std::strerror(errno));
        return;
    }
    struct stat st {};
    if (::fstat(input.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
        source_error_ = "not a regular file";
        return;
    }
    const auto source_size = static_cast<std::uint64_t>(st.st_size);
    if (expected_size != kUnknownSize && source_size != expected_size) {
        source_error_ = "size mismatch: " + std::to_string(source_size) + " bytes, expected " +
                        std::to_string(expected_size);
        return;
    }
    if (expected_size == kUnknownSize && source_size > kMaxUnknownSizeBytes) {
        source_error_ = "size unknown, and " + std::to_string(source_size) +
                        " bytes is more than " + std::to_string(kMaxUnknownSizeBytes);
        return;
    }
    // copy_file_range shares extents (reflink) where the filesystem can; else the kernel copies.
    loff_t in_offset = 0;
    loff_t out_offset = 0;
    while (static_cast<std::uint64_t>(out_offset) < source_size) {
        const ssize_t copied =
            ::copy_file_range(input.get(), &in_offset, fd_.get(), &out_offset,
                              static_cast<std::size_t>(source_size - out_offset), 0);
        if (copied < 0 && errno == EINTR) {
            continue;
        }
        if (copied < 0 &&
            (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP)) {
            copy_by_reading(input.get(), source, source_size);
            return;
        }
        if (copied < 0) {
            fail("cannot copy from " + source, errno);
            return;
        }
        if (copied == 0) {
            source_error_ = "file shrank while being copied";
            return;
        }
    }
    // Hash what was written (the bytes that will be published), from the page cache.
    hash_prefix(source_size);
}

void PartWriter::copy_by_reading(int input_fd, const std::string& source,
                                 std::uint64_t source_size) {
    truncate();
    read_buffer_.resize(kBlockSize);
    std::vector<std::byte> chunk(kBlockSize);
    std::uint64_t offset = 0;
    while (offset < source_size && !error_) {
        const ssize_t got =
            ::pread(input_fd, chunk.data(), chunk.size(), static_cast<off_t>(offset));
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got <= 0) {
            source_error_ =
                "cannot read: " + std::string(got < 0 ? std::strerror(errno) : "file shrank") +
                " (" + source + ")";
            return;
        }
        append(chunk.data(), static_cast<std::size_t>(got));
        offset += static_cast<std::uint64_t>(got);
    }
}

FinishResult PartWriter::finish(const PublishSpec& spec,
                                std::optional<std::int64_t> mtime_seconds) {
    FinishResult result;
    result.size = size_;
    result.source_error = source_error_;
    if (error_) {
        result.local_error = error_;
        fd_.reset();
        return result;
    }
    result.digest = file_digest_ ? *std::exchange(file_digest_, std::nullopt) : hasher_->finish();
    if (source_error_ ||
        (spec.expected_size != kUnknownSize && result.size != spec.expected_size) ||
        (!spec.expected_digest.empty() && result.digest != spec.expected_digest)) {
        return result;  // the fd stays open: the loop decides (truncate and retry, or give up)
    }
    // Starts writing the verified file back to storage now, without waiting for it: the syncfs
    // that makes the run durable before anything vouches for its files (fs/durable.hpp) then
    // finds little left to write, instead of every byte of the run at its end. Best effort (a
    // filesystem without it is flushed by that syncfs alone).
    (void)::sync_file_range(fd_.get(), 0, 0, SYNC_FILE_RANGE_WRITE);
    if (mtime_seconds) {
        // As librepo does for --remote-time: access and modification time, whole seconds. Best
        // effort: a file keeps its download time where this fails.
        const std::array<struct timespec, 2> times{
            {{static_cast<time_t>(*mtime_seconds), 0}, {static_cast<time_t>(*mtime_seconds), 0}}};
        (void)::futimens(fd_.get(), times.data());
    }
    struct stat st {};
    if (::fstat(fd_.get(), &st) == 0) {
        // The downloader wrote every byte itself, so the entry is trusted even though it is new.
        write_cached_digest(fd_.get(), st, spec.type, result.digest, /*trust_recent=*/true);
    }
    if (fs::rename_at(spec.dir_fd, spec.part_name, spec.final_name) != 0) {
        result.local_error =
            Error{ErrorCode::Io, "cannot rename " + spec.part_name + " to " + spec.final_name,
                  spec.shown_path, errno};
        fd_.reset();
        return result;
    }
    result.published = true;
    fd_.reset();
    return result;
}

void PartWriter::close() {
    fd_.reset();
}

// ---------------------------------------------------------------------------------------------
// PartSink

PartSink::PartSink(std::size_t transfer_index, IoPool* pool, unsigned worker,
                   CompletionQueue& completions)
    : transfer_index_(transfer_index), pool_(pool), worker_(worker), completions_(completions) {}

void PartSink::attach(UniqueFd fd, PublishSpec spec) {
    spec_ = std::move(spec);
    writer_.attach(std::move(fd), spec_.type, spec_.shown_path);
}

void PartSink::submit(JobKind kind, std::unique_ptr<std::byte[]> block, std::size_t length,
                      std::uint64_t value, std::string text) {
    if (pool_ == nullptr) {
        run_job(kind, block.get(), length, value, text);
        return;
    }
    pool_->submit(worker_,
                  IoPool::Job{this, kind, std::move(block), length, value, std::move(text)});
}

void PartSink::run_job(JobKind kind, const std::byte* data, std::size_t length, std::uint64_t value,
                       const std::string& text) {
    switch (kind) {
        case JobKind::Data:
            writer_.hash(data, length);
            break;
        case JobKind::ResetHash:
            writer_.reset_hash();
            break;
        case JobKind::HashPrefix:
            writer_.hash_prefix(value);
            break;
        case JobKind::HashFile:
            writer_.hash_file();
            break;
        case JobKind::Finish:
            // `value` is the modification time to set plus one; 0 = none.
            result_ = writer_.finish(spec_, value == 0 ? std::nullopt
                                                       : std::optional<std::int64_t>(
                                                             static_cast<std::int64_t>(value - 1)));
            break;
        case JobKind::Copy:
            writer_.copy_from(text, spec_.expected_size);
            result_ = writer_.finish(spec_);
            break;
        case JobKind::Close:
            writer_.close();
            break;
    }
    if (writer_.failed()) {
        io_failed_.store(true);
    }
    if (kind == JobKind::Finish || kind == JobKind::Copy) {
        completions_.push({transfer_index_, Completion::Kind::Finished});
    }
}

void PartSink::hash_prefix(std::uint64_t size) {
    writer_.set_written(size);
    submit(JobKind::HashPrefix, {}, 0, size);
}

bool PartSink::write(const char* data, std::size_t size) {
    const auto* bytes = reinterpret_cast<const std::byte*>(data);
    if (const int error = writer_.write_at(bytes, size); error != 0) {
        write_errno_ = error;
        return false;
    }
    if (pool_ == nullptr) {
        writer_.hash(bytes, size);
        return true;
    }
    while (size > 0) {
        if (!pending_) {
            pending_ = pool_->take_block();
            pending_length_ = 0;
        }
        const std::size_t room = kBlockSize - pending_length_;
        const std::size_t chunk = std::min(room, size);
        std::memcpy(pending_.get() + pending_length_, bytes, chunk);
        pending_length_ += chunk;
        bytes += chunk;
        size -= chunk;
        if (pending_length_ == kBlockSize) {
            flush_pending();
        }
    }
    return true;
}

void PartSink::flush_pending() {
    if (!pending_ || pending_length_ == 0) {
        return;
    }
    const std::size_t length = std::exchange(pending_length_, 0);
    queued_bytes_.fetch_add(length);
    pool_->queued_total_.fetch_add(length);
    submit(JobKind::Data, std::move(pending_), length);
}

bool PartSink::should_pause() {
    if (pool_ == nullptr) {
        return false;
    }
    // Ask first, then look again: a worker that drained the queue in between either sees the
    // request (and posts an Unpause) or left the queue low enough to go on now.
    if (queued_bytes_.load() > kQueueHighBytes) {
        pause_requested_.store(true);
        if (queued_bytes_.load() > kQueueLowBytes) {
            return true;
        }
        pause_requested_.store(false);
    }
    if (pool_->queued_total_.load() > kPoolQueueHighBytes) {
        pool_->pool_pause_requested_.store(true);
        if (pool_->queued_total_.load() > kPoolQueueLowBytes) {
            return true;
        }
        pool_->pool_pause_requested_.store(false);
    }
    return false;
}

bool PartSink::write_range(std::uint64_t offset, const char* data, std::size_t size) {
    if (const int error =
            writer_.write_range(offset, reinterpret_cast<const std::byte*>(data), size);
        error != 0) {
        write_errno_ = error;
        return false;
    }
    return true;
}

void PartSink::keep_prefix(std::uint64_t size) {
    if (const int error = writer_.truncate_file(size); error != 0) {
        write_errno_ = error;
        io_failed_.store(true);
    }
}

void PartSink::hash_file() {
    submit(JobKind::HashFile);
}

void PartSink::restart() {
    // Bytes not yet handed over belong to the attempt being discarded.
    pending_length_ = 0;
    // A queued HashPrefix job still reads the file: truncating under it would fail the transfer
    // ("partial download shrank"). Restarts are rare (a server that mishandled Range), so wait
    // for the workers rather than order the truncation through them.
    if (pool_ != nullptr) {
        pool_->drain();
    }
    if (const int error = writer_.truncate_file(); error != 0) {
        write_errno_ = error;
        io_failed_.store(true);
    }
    submit(JobKind::ResetHash);
}

void PartSink::finish(std::optional<std::int64_t> mtime_seconds) {
    flush_pending();
    const std::uint64_t encoded_mtime =
        mtime_seconds && *mtime_seconds >= 0 ? static_cast<std::uint64_t>(*mtime_seconds) + 1 : 0;
    submit(JobKind::Finish, {}, 0, encoded_mtime);
}

void PartSink::copy_from(std::string source) {
    submit(JobKind::Copy, {}, 0, 0, std::move(source));
}

void PartSink::close() {
    flush_pending();
    submit(JobKind::Close);
}

// ---------------------------------------------------------------------------------------------
// IoPool

IoPool::IoPool(unsigned threads) {
    for (unsigned index = 0; index < threads; ++index) {
        workers_.push_back(std::make_unique<Worker>());
    }
    for (auto& worker : workers_) {
        Worker* raw = worker.get();
        worker->thread = std::thread([this, raw] { work(*raw); });
    }
}

IoPool::~IoPool() {
    for (auto& worker : workers_) {
        std::lock_guard lock(worker->mutex);
        stopping_ = true;
        worker->wake.notify_all();
    }
    for (auto& worker : workers_) {
        worker->thread.join();
    }
}

void IoPool::submit(unsigned worker_index, Job job) {
    {
        std::lock_guard lock(idle_mutex_);
        ++outstanding_;
    }
    Worker& worker = *workers_[worker_index % workers_.size()];
    std::lock_guard lock(worker.mutex);
    worker.jobs.push_back(std::move(job));
    worker.wake.notify_one();
}

void IoPool::work(Worker& worker) {
    for (;;) {
        Job job;
        {
            std::unique_lock lock(worker.mutex);
            worker.wake.wait(lock, [&] { return stopping_ || !worker.jobs.empty(); });
            if (worker.jobs.empty()) {
                return;
            }
            job = std::move(worker.jobs.front());
            worker.jobs.pop_front();
        }
        PartSink& sink = *job.sink;
        sink.run_job(job.kind, job.block.get(), job.length, job.value, job.text);
        if (job.kind == PartSink::JobKind::Data) {
            return_block(std::move(job.block));
            const std::uint64_t left = sink.queued_bytes_.fetch_sub(job.length) - job.length;
            if (left <= kQueueLowBytes && sink.pause_requested_.exchange(false)) {
                sink.completions_.push({sink.transfer_index_, Completion::Kind::Unpause});
            }
            const std::uint64_t total_left = queued_total_.fetch_sub(job.length) - job.length;
            if (total_left <= kPoolQueueLowBytes && pool_pause_requested_.exchange(false)) {
                sink.completions_.push({sink.transfer_index_, Completion::Kind::UnpauseAll});
            }
        }
        std::lock_guard lock(idle_mutex_);
        if (--outstanding_ == 0) {
            idle_.notify_all();
        }
    }
}

void IoPool::drain() {
    std::unique_lock lock(idle_mutex_);
    idle_.wait(lock, [&] { return outstanding_ == 0; });
}

double IoPool::cpu_seconds() const {
    double total = 0;
    for (const auto& worker : workers_) {
        clockid_t clock{};
        struct timespec spent {};
        if (pthread_getcpuclockid(const_cast<std::thread&>(worker->thread).native_handle(),
                                  &clock) == 0 &&
            clock_gettime(clock, &spent) == 0) {
            total += static_cast<double>(spent.tv_sec) + static_cast<double>(spent.tv_nsec) / 1e9;
        }
    }
    return total;
}

std::unique_ptr<std::byte[]> IoPool::take_block() {
    {
        std::lock_guard lock(blocks_mutex_);
        if (!free_blocks_.empty()) {
            auto block = std::move(free_blocks_.back());
            free_blocks_.pop_back();
            return block;
        }
    }
    return std::make_unique_for_overwrite<std::byte[]>(kBlockSize);
}

void IoPool::return_block(std::unique_ptr<std::byte[]> block) {
    if (!block) {
        return;
    }
    std::lock_guard lock(blocks_mutex_);
    if (free_blocks_.size() < 1024) {
        free_blocks_.push_back(std::move(block));
    }
}

}  // namespace rpmirror::download
