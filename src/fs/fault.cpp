// The I/O fault seam (see fs/fault.hpp): parsing RPMIRROR_FAULT and the wrapped system calls.
#include "fs/fault.hpp"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

namespace rpmirror::fault {

namespace {

constexpr std::array<std::string_view, 7> kOpNames = {"create", "write", "sync", "rename",
                                                      "unlink", "open",  "s3"};

struct Plan {
    bool is_kill = false;
    Op op = Op::Create;
    std::uint64_t call = 0;  // 1-based
    bool and_later = false;  // "<n>+": every call from the n-th on
    int error_number = 0;
};

std::optional<int> errno_named(std::string_view name) {
    constexpr std::array<std::pair<std::string_view, int>, 8> kKnown = {{{"ENOSPC", ENOSPC},
                                                                         {"EIO", EIO},
                                                                         {"EROFS", EROFS},
                                                                         {"EACCES", EACCES},
                                                                         {"EDQUOT", EDQUOT},
                                                                         {"EPERM", EPERM},
                                                                         {"EMFILE", EMFILE},
                                                                         {"ENFILE", ENFILE}}};
    for (const auto& [known, number] : kKnown) {
        if (known == name) {
            return number;
        }
    }
    return std::nullopt;
}

// Splits off the text up to the next ':' (or the end) from `text`.
std::string_view next_field(std::string_view& text) {
    const std::size_t colon = text.find(':');
    const std::string_view field = text.substr(0, colon);
    text = colon == std::string_view::npos ? std::string_view() : text.substr(colon + 1);
    return field;
}

std::optional<Plan> parse_plan(std::string_view text) {
    Plan plan;
    const std::string_view kind = next_field(text);
    if (kind != "kill" && kind != "errno") {
        return std::nullopt;
    }
    plan.is_kill = kind == "kill";
    const std::string_view op_name = next_field(text);
    bool known_op = false;
    for (std::size_t index = 0; index < kOpNames.size(); ++index) {
        if (kOpNames[index] == op_name) {
            plan.op = static_cast<Op>(index);
            known_op = true;
        }
    }
    std::string_view count = next_field(text);
    if (!known_op || count.empty()) {
        return std::nullopt;
    }
    if (count.back() == '+') {
        plan.and_later = true;
        count.remove_suffix(1);
    }
    const auto [end, error] = std::from_chars(count.data(), count.data() + count.size(), plan.call);
    if (error != std::errc() || end != count.data() + count.size() || plan.call == 0) {
        return std::nullopt;
    }
    if (!plan.is_kill) {
        const auto number = errno_named(next_field(text));
        if (!number) {
            return std::nullopt;
        }
        plan.error_number = *number;
    }
    if (!text.empty()) {
        return std::nullopt;
    }
    return plan;
}

void write_stderr(const std::string& line) {
    (void)::write(STDERR_FILENO, line.data(), line.size());
}

std::optional<Plan> load_plan() {
    const char* value = std::getenv("RPMIRROR_FAULT");
    if (value == nullptr || *value == '\0') {
        return std::nullopt;
    }
    auto plan = parse_plan(value);
    if (!plan) {
        write_stderr(std::string("rpmirror-fault: ignoring unparsable RPMIRROR_FAULT='") + value +
                     "'\n");
    }
    return plan;
}

const std::optional<Plan>& plan() {
    static const std::optional<Plan> loaded = load_plan();
    return loaded;
}

std::array<std::atomic<std::uint64_t>, kOpNames.size()> counters{};

// The path of the file open as `fd`, from /proc (for the kill line only).
std::string path_of(int fd) {
    std::array<char, 4096> target{};
    const std::string link = "/proc/self/fd/" + std::to_string(fd);
    const ssize_t length = ::readlink(link.c_str(), target.data(), target.size() - 1);
    return length < 0 ? "fd " + std::to_string(fd)
                      : std::string(target.data(), static_cast<std::size_t>(length));
}

}  // namespace

namespace detail {

extern const bool is_armed = plan().has_value();

bool fails_slow(Op op, std::string_view subject, int fd) {
    const Plan& armed_plan = *plan();
    if (op != armed_plan.op) {
        return false;
    }
    const std::uint64_t call = counters[static_cast<std::size_t>(op)].fetch_add(1) + 1;
    const bool is_due = call == armed_plan.call || (armed_plan.and_later && call > armed_plan.call);
    if (!is_due) {
        return false;
    }
    if (armed_plan.is_kill) {
        write_stderr("rpmirror-fault: kill before " +
                     std::string(kOpNames[static_cast<std::size_t>(op)]) + " #" +
                     std::to_string(call) + ": " + (fd >= 0 ? path_of(fd) : std::string(subject)) +
                     "\n");
        ::kill(::getpid(), SIGKILL);
        ::_exit(137);  // not reached
    }
    errno = armed_plan.error_number;
    return true;
}

}  // namespace detail

bool fallbacks_forced() {
    static const bool forced = [] {
        const char* value = std::getenv("RPMIRROR_FS_FALLBACK");
        return value != nullptr && std::string_view(value) == "1";
    }();
    return forced;
}

ssize_t pwrite(int fd, const void* data, std::size_t size, off_t offset) {
    if (detail::is_armed && detail::fails_slow(Op::Write, {}, fd)) {
        return -1;
    }
    return ::pwrite(fd, data, size, offset);
}

ssize_t write(int fd, const void* data, std::size_t size) {
    if (detail::is_armed && detail::fails_slow(Op::Write, {}, fd)) {
        return -1;
    }
    return ::write(fd, data, size);
}

int syncfs(int fd, std::string_view subject) {
    return fails(Op::Sync, subject) ? -1 : ::syncfs(fd);
}

int fsync(int fd, std::string_view subject) {
    return fails(Op::Sync, subject) ? -1 : ::fsync(fd);
}

int renameat(int old_dir, const char* old_name, int new_dir, const char* new_name) {
    return fails(Op::Rename, new_name) ? -1 : ::renameat(old_dir, old_name, new_dir, new_name);
}

int renameat2(int old_dir, const char* old_name, int new_dir, const char* new_name,
              unsigned flags) {
    return fails(Op::Rename, new_name) ? -1
                                       : ::renameat2(old_dir, old_name, new_dir, new_name, flags);
}

int rename(const char* old_path, const char* new_path) {
    return fails(Op::Rename, new_path) ? -1 : ::rename(old_path, new_path);
}

int open_for_reading(const char* path, int flags) {
    return fails(Op::Open, path) ? -1 : ::open(path, flags);
}

int unlinkat(int dir_fd, const char* name, int flags) {
    return fails(Op::Unlink, name) ? -1 : ::unlinkat(dir_fd, name, flags);
}

}  // namespace rpmirror::fault
