// librpmirror-librepo-accel.so next to the real librepo.so.0 (Debian's 1.14.5-3), both loaded
// with dlopen: for the same file, the same call to the accelerator (in every mode) and to
// librepo's own function must observe the same thing — return value, matches, calculated digest,
// GError domain/code/message, the fd's offset afterwards, and the user.Librepo.* xattrs both when
// the call has returned (librepo's promise: a cache entry is there at once) and once the process
// has ended (deferred mode writes its cache entries only then: it has a test of its own).
//
// The calls run in fresh child processes (the accelerator reads its mode once per process), a
// batch of calls per child, each call on a file of its own: a fork per call made the test take
// 6 minutes under TSan.
#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "checksum/hasher.hpp"
#include "integration/dnfstack/dnfstack_fixture.hpp"
#include "librepo_accel/librepo_accel.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "rpmirror/librepo_accel/librepo_accel.hpp"
#include "support/temp_dir.hpp"

// LeakSanitizer's switch (sanitizer builds only): a child ends with exit(), and librepo's
// process-lifetime allocations are not the test's business.
extern "C" void __lsan_disable() __attribute__((weak));  // NOLINT(bugprone-reserved-identifier)

namespace rpmirror::test {
namespace {

// The status the current child ends with (set just before its exit()).
int child_exit_status = 0;

// Ends the child at exit(), after every handler the libraries it loaded registered (they run
// first: registered later) and before LeakSanitizer's leak check (registered at start-up). The
// check would only scan the heap inherited from this test process, whose own check covers it,
// and does so in each child: most of the test's time under ASan.
void end_child_before_leak_check() {
    std::fflush(nullptr);
    ::_exit(child_exit_status);
}

// glib's GError (glib/gerror.h), as the child reads what the function set.
struct GErrorView {
    std::uint32_t domain;
    int code;
    char* message;
};
using CompareFunction = int (*)(int, int, const char*, int, int*, char**, GErrorView**);
using CmpFunction = int (*)(int, int, const char*, int, int*, GErrorView**);
using QuarkToString = const char* (*)(std::uint32_t);
using Free = void (*)(void*);
using ErrorFree = void (*)(GErrorView*);

// librepo's LrChecksumType values (librepo/checksum.h) of the six types, in rpmirror's order.
constexpr int kLibrepoTypes[] = {1, 2, 3, 4, 5, 6};

// A fixed mtime well in the past (not "racy" for anyone).
constexpr std::int64_t kMtimeSeconds = 1'600'000'000;
constexpr long kMtimeNanoseconds = 123'456'789;
const std::string kMtimeText = "1600000000123456789";

enum class Cache { None, MtimeOnly, Right, Fake, Stale };

struct Call {
    int type = 4;
    std::string expected;  // "\x01" = NULL
    bool caching = true;
    int open_flags = O_RDONLY;
    bool use_cmp = false;  // lr_checksum_fd_cmp instead of lr_checksum_fd_compare
};

const std::string kNullExpected = "\x01";

class LibrepoAccelAbi : public ::testing::Test {
  protected:
    // (Re)creates `file` with `content`, the cache xattrs of `cache`, and the fixed mtime.
    void prepare(const std::filesystem::path& file, const std::string& content, Cache cache,
                 const std::string& type_name, const std::string& digest) {
        std::filesystem::remove(file);
        TempDir::write_at(file, content);
        const auto set = [&file](const std::string& name, const std::string& value) {
            ASSERT_EQ(::setxattr(file.c_str(), name.c_str(), value.data(), value.size(), 0), 0)
                << "user xattrs unsupported under " << file;
        };
        const std::string prefix = "user.Librepo.checksum.";
        switch (cache) {
            case Cache::None:
                break;
            case Cache::MtimeOnly:
                set(prefix + "mtime", kMtimeText);
                break;
            case Cache::Right:
                set(prefix + "mtime", kMtimeText);
                set(prefix + type_name, digest);
                break;
            case Cache::Fake:
                set(prefix + "mtime", kMtimeText);
                set(prefix + type_name, "not-a-digest");
                break;
            case Cache::Stale:
                set(prefix + "mtime", "1500000000000000000");
                set(prefix + type_name, digest);
                set(prefix + "md5", "00000000000000000000000000000000");
                break;
        }
        const struct timespec times[2] = {{kMtimeSeconds, kMtimeNanoseconds},
                                          {kMtimeSeconds, kMtimeNanoseconds}};
        ASSERT_EQ(::utimensat(AT_FDCWD, file.c_str(), times, 0), 0);
    }
    void prepare(const std::string& content, Cache cache, const std::string& type_name,
                 const std::string& digest) {
        prepare(file_, content, cache, type_name, digest);
    }

    // Runs each call, in order, on its file in one child with librepo loaded and, iff `mode` is
    // not empty, the accelerator in that mode answering; returns for each what the child saw
    // plus the file's xattrs after the child ended, or "signal N" for all iff it died of one.
    std::vector<std::string> observe(
        const std::string& mode, const std::vector<std::pair<std::filesystem::path, Call>>& calls) {
        const auto out = [this](std::size_t index) {
            return tmp_ / ("observed-" + std::to_string(index));
        };
        for (std::size_t index = 0; index < calls.size(); ++index) {
            std::filesystem::remove(out(index));
        }
        std::fflush(nullptr);
        const pid_t child = ::fork();
        if (child == 0) {
            // exit(), not _exit(): as at the end of dnf, full mode writes its deferred cache
            // entries then (the library stays loaded after dlclose: it has thread_locals).
            child_exit_status = child_body(mode, calls, out);
            std::exit(child_exit_status);  // NOLINT(concurrency-mt-unsafe)
        }
        int status = 0;
        ::waitpid(child, &status, 0);
        if (WIFSIGNALED(status)) {
            return std::vector<std::string>(calls.size(),
                                            "signal " + std::to_string(WTERMSIG(status)));
        }
        std::vector<std::string> observed;
        for (std::size_t index = 0; index < calls.size(); ++index) {
            std::string one =
                read_file(out(index)) + " exit=" + std::to_string(WEXITSTATUS(status));
            for (const auto& [name, value] : xattrs(calls[index].first, "user.")) {
                one += "\n" + name + "=" + value;
            }
            observed.push_back(std::move(one));
        }
        return observed;
    }
    std::string observe(const std::string& mode, const Call& call) {
        return observe(mode, {{file_, call}})[0];
    }

    template <typename Out>
    int child_body(const std::string& mode,
                   const std::vector<std::pair<std::filesystem::path, Call>>& calls,
                   const Out& out) {
        if (__lsan_disable != nullptr) {
            __lsan_disable();
            std::atexit(end_child_before_leak_check);
        }
        void* librepo = ::dlopen("librepo.so.0", RTLD_NOW | RTLD_GLOBAL);
        if (librepo == nullptr) {
            return 90;
        }
        void* functions = librepo;
        if (!mode.empty()) {
            ::setenv(kLibrepoAccelModeVariable, mode.c_str(), 1);
            ::setenv(kLibrepoAccelLogVariable, log_.c_str(), 1);
            if (force_self_check_) {
                ::setenv(kLibrepoAccelSelfCheckVariable, "always", 1);
            }
            void* accel = ::dlopen(accel_library().c_str(), RTLD_NOW | RTLD_LOCAL);
            if (accel == nullptr) {
                return 91;
            }
            functions = accel;
        }
        for (std::size_t index = 0; index < calls.size(); ++index) {
            const auto& [file, call] = calls[index];
            call_once(functions, file, call, out(index));
        }
        return 0;
    }

    // One call, as child_body makes it; what it saw goes to `out`.
    static void call_once(void* functions, const std::filesystem::path& file, const Call& call,
                          const std::filesystem::path& out) {
        const int fd = ::open(file.c_str(), call.open_flags | O_CLOEXEC);
        const char* expected = call.expected == kNullExpected ? nullptr : call.expected.c_str();
        int matches = 7;
        char* calculated = nullptr;
        GErrorView* error = nullptr;
        int result = 0;
        if (call.use_cmp) {
            auto cmp = reinterpret_cast<CmpFunction>(::dlsym(functions, "lr_checksum_fd_cmp"));
            result = cmp(call.type, fd, expected, call.caching, &matches, &error);
        } else {
            auto compare =
                reinterpret_cast<CompareFunction>(::dlsym(functions, "lr_checksum_fd_compare"));
            result = compare(call.type, fd, expected, call.caching, &matches, &calculated, &error);
        }
        auto quark_to_string =
            reinterpret_cast<QuarkToString>(::dlsym(RTLD_DEFAULT, "g_quark_to_string"));
        std::ofstream stream(out);
        stream << "return=" << result << " matches=" << matches
               << " calculated=" << (calculated != nullptr ? calculated : "(null)")
               << " offset=" << ::lseek(fd, 0, SEEK_CUR);
        if (error != nullptr) {
            stream << " error=" << quark_to_string(error->domain) << "/" << error->code << "/"
                   << error->message;
        }
        for (const auto& [name, value] : xattrs(file, "user.")) {
            stream << " at-return:" << name << "=" << value;
        }
        stream.close();
        reinterpret_cast<Free>(::dlsym(RTLD_DEFAULT, "g_free"))(calculated);
        if (error != nullptr) {
            reinterpret_cast<ErrorFree>(::dlsym(RTLD_DEFAULT, "g_error_free"))(error);
        }
        ::close(fd);
    }

    TempDir tmp_;
    std::filesystem::path file_ = tmp_ / "package.rpm";
    std::filesystem::path log_ = tmp_ / "accel.log";
    bool force_self_check_ = false;  // RPMIRROR_LIBREPO_ACCEL_SELF_CHECK=always in the child
};

constexpr const char* kServingModes[] = {"plain", "buffer", "mmap", "nofsync", "full"};

// Deferred mode: the same answers, and the same entries once the process has ended — but none
// when the call returns (the trade-off it makes: no flush per file).
TEST_F(LibrepoAccelAbi, DeferredModeWritesTheSameEntriesOnlyAtExit) {
    const std::string content(1000, 'a');
    const std::string digest = hash_bytes(ChecksumType::Sha256, content);
    prepare(content, Cache::None, "sha256", digest);
    const std::string original = observe("", {4, digest});
    ASSERT_NE(original.find("at-return:user.Librepo.checksum.sha256=" + digest), std::string::npos)
        << original;
    prepare(content, Cache::None, "sha256", digest);
    const std::string deferred = observe("deferred", {4, digest});
    EXPECT_EQ(deferred.find("at-return:"), std::string::npos) << deferred;
    EXPECT_NE(deferred.find("\nuser.Librepo.checksum.sha256=" + digest), std::string::npos)
        << deferred;
    std::string without_return = original;
    for (std::size_t at; (at = without_return.find(" at-return:")) != std::string::npos;) {
        without_return.erase(at, without_return.find_first_of(" \n", at + 1) - at);
    }
    EXPECT_EQ(deferred, without_return);
    const std::string log = read_file(log_);
    EXPECT_NE(log.find("hashed cache-deferred matches=1 mode=deferred"), std::string::npos) << log;
    EXPECT_NE(log.find("deferred-cache written=1 queued=1"), std::string::npos) << log;
}

TEST_F(LibrepoAccelAbi, EveryTypeAndCacheStateAsLibrepo) {
    ASSERT_TRUE(std::filesystem::exists(accel_library())) << accel_library();
    // Small (read or mapped whole) and 3 MiB (windows in full mode, read() in mmap mode).
    const std::vector<std::string> contents = {std::string(1000, 'a'),
                                               std::string(3 * 1024 * 1024 + 7, 'b')};
    for (const std::string& content : contents) {
        for (const int type : kLibrepoTypes) {
            const ChecksumType engine_type = kAllChecksumTypes[type - 1];
            const std::string type_name(checksum_type_name(engine_type));
            const std::string digest = hash_bytes(engine_type, content);
            std::string wrong = digest;
            wrong[0] = wrong[0] == '0' ? '1' : '0';
            std::string upper = digest;
            for (char& c : upper) {
                c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
            }
            const std::vector<std::pair<Cache, Call>> cases = {
                {Cache::None, {type, digest}},
                {Cache::None, {type, wrong}},
                {Cache::None, {type, upper}},
                {Cache::None, {type, digest, false}},
                {Cache::None, {type, digest, true, O_RDWR, true}},
                {Cache::MtimeOnly, {type, digest}},
                {Cache::Right, {type, digest}},
                {Cache::Right, {type, wrong}},
                {Cache::Right, {type, digest, false}},
                {Cache::Fake, {type, digest}},
                {Cache::Stale, {type, digest}},
                {Cache::Stale, {type, wrong}},
                {Cache::None, {type, kNullExpected}},
                {Cache::None, {type, digest, true, O_WRONLY}},
            };
            std::vector<std::pair<std::filesystem::path, Call>> calls;
            for (std::size_t index = 0; index < cases.size(); ++index) {
                calls.emplace_back(tmp_ / ("case-" + std::to_string(index) + ".rpm"),
                                   cases[index].second);
            }
            const auto prepare_all = [&] {
                for (std::size_t index = 0; index < cases.size(); ++index) {
                    prepare(calls[index].first, content, cases[index].first, type_name, digest);
                }
            };
            prepare_all();
            const std::vector<std::string> original = observe("", calls);
            ASSERT_EQ(original[0].find("signal"), std::string::npos) << original[0];
            for (const char* mode : kServingModes) {
                prepare_all();
                const std::vector<std::string> served = observe(mode, calls);
                for (std::size_t index = 0; index < cases.size(); ++index) {
                    EXPECT_EQ(served[index], original[index])
                        << "mode " << mode << ", " << type_name << ", case " << index << ", size "
                        << content.size();
                }
            }
        }
    }
    // Proof that the accelerator answered (not librepo behind it): its log, one line per call.
    const std::string log = read_file(log_);
    EXPECT_NE(log.find("served lr_checksum_fd_compare sha512 hashed"), std::string::npos);
    EXPECT_NE(log.find("served lr_checksum_fd_compare md5 cached matches=0"), std::string::npos);
    EXPECT_NE(log.find("served lr_checksum_fd_cmp sha256 hashed"), std::string::npos);
    // An fd it cannot read: librepo's own error ("read(N) failed: Bad file descriptor").
    EXPECT_NE(log.find("fallthrough lr_checksum_fd_compare type=4 engine-error"),
              std::string::npos);
}

// The run-time check an unlisted build gets, forced on Debian's: it passes in every mode, runs once
// per process before the first call is served, beside that call's file, and leaves no file.
TEST_F(LibrepoAccelAbi, SelfCheckOfDebiansBuildPassesOnceBeforeTheFirstCall) {
    force_self_check_ = true;
    const std::string content(5000, 'c');
    const std::string digest = hash_bytes(ChecksumType::Sha256, content);
    const auto second = tmp_ / "second.rpm";
    for (const char* mode : {"plain", "buffer", "mmap", "nofsync", "full", "deferred"}) {
        std::filesystem::remove(log_);
        prepare(content, Cache::None, "sha256", digest);
        prepare(second, content, Cache::None, "sha256", digest);
        const auto served =
            observe(mode, {{file_, {4, digest}}, {second, {4, digest, true, O_RDONLY, true}}});
        EXPECT_NE(served[0].find("return=1 matches=1"), std::string::npos) << mode << served[0];
        const std::string log = read_file(log_);
        EXPECT_EQ(log.find("self-check same calls=21 librepo="), 0U) << mode << "\n" << log;
        EXPECT_NE(log.find(" dir=" + tmp_.path().string() + "\n"), std::string::npos) << log;
        EXPECT_EQ(count_lines_with(log, "self-check"), 1U) << log;
        EXPECT_EQ(count_lines_with(log, "served lr_checksum_fd_"), 2U) << log;
        EXPECT_EQ(count_lines_with(log, "fallthrough"), 0U) << log;
    }
    std::vector<std::string> left;
    for (const auto& entry : std::filesystem::directory_iterator(tmp_.path())) {
        left.push_back(entry.path().filename().string());
    }
    std::sort(left.begin(), left.end());
    EXPECT_EQ(left, (std::vector<std::string>{"accel.log", "observed-0", "observed-1",
                                              "package.rpm", "second.rpm"}));
}

TEST_F(LibrepoAccelAbi, UnknownTypeGoesToLibrepo) {
    prepare("content", Cache::None, "sha256", "");
    // librepo 1.14.5 asserts on a type it does not know (compiled in by Debian): the process
    // aborts, with the accelerator preloaded as without it — after it handed the call over.
    const Call call{7, "abc", false};
    const std::string original = observe("", call);
    EXPECT_EQ(observe("full", call), original);
    EXPECT_NE(read_file(log_).find("fallthrough lr_checksum_fd_compare type=7 unknown-type"),
              std::string::npos);
}

// The log is opened without following a symlink: a root dnf logging into /tmp never appends to
// the file a planted link names; the call is still served.
TEST_F(LibrepoAccelAbi, TheLogNeverFollowsASymlink) {
    const std::string content = "content";
    const std::string digest = hash_bytes(ChecksumType::Sha256, content);
    const std::filesystem::path target = tmp_ / "precious";
    TempDir::write_at(target, "precious\n");
    std::filesystem::create_symlink(target, log_);
    prepare(content, Cache::None, "sha256", digest);
    const std::string observed = observe("plain", {4, digest});
    EXPECT_NE(observed.find("return=1 matches=1"), std::string::npos) << observed;
    EXPECT_EQ(read_file(target), "precious\n");
    EXPECT_TRUE(std::filesystem::is_symlink(log_));
}

TEST_F(LibrepoAccelAbi, ModeOffAndUnknownModeLeaveEverythingToLibrepo) {
    const std::string content = "content";
    const std::string digest = hash_bytes(ChecksumType::Sha256, content);
    prepare(content, Cache::None, "sha256", digest);
    const std::string original = observe("", {4, digest});
    for (const char* mode : {"off", "fastest"}) {
        prepare(content, Cache::None, "sha256", digest);
        EXPECT_EQ(observe(mode, {4, digest}), original) << mode;
    }
    const std::string log = read_file(log_);
    EXPECT_NE(log.find("fallthrough lr_checksum_fd_compare type=4 mode-off"), std::string::npos);
    EXPECT_NE(log.find("fallthrough lr_checksum_fd_compare type=4 unknown-mode"),
              std::string::npos);
}

TEST(LibrepoAccelIdentity, DebianLibrepoIsVerifiedAndFound) {
    const auto librepo = find_system_librepo();
    ASSERT_TRUE(librepo) << librepo.error().to_string();
    EXPECT_NE(find_verified_librepo_build(librepo->build_id), nullptr)
        << librepo->path << " build-id " << librepo->build_id;
    EXPECT_EQ(parse_librepo_accel_mode("nofsync"), LibrepoAccelMode::NoFsync);
    EXPECT_FALSE(parse_librepo_accel_mode("NOFSYNC"));
    const auto library = find_librepo_accel_library(rpmirror_binary());
    ASSERT_TRUE(library) << library.error().to_string();
    EXPECT_EQ(*library, accel_library());
}

}  // namespace
}  // namespace rpmirror::test
