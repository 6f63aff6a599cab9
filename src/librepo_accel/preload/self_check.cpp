#include "librepo_accel/preload/self_check.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <utility>

#include "checksum/hasher.hpp"
#include "checksum/xattr_names.hpp"
#include "fs/tree.hpp"
#include "librepo_accel/preload/librepo_abi.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror::librepo_accel {
namespace {

namespace abi = rpmirror::librepo_abi;

// A fixed mtime well in the past (no "racy" timestamp for anyone), and another one for a stale
// cache entry.
constexpr struct timespec kCheckMtime = {1'600'000'000, 123'456'789};
constexpr const char* kCheckMtimeText = "1600000000123456789";
constexpr const char* kStaleMtimeText = "1500000000000000000";

// The state of librepo's cache on the file before a call.
enum class Cache { None, MtimeOnly, Right, NotADigest, Stale };
enum class Expected { Right, Wrong, UpperCase, Null };

struct Case {
    int type = abi::kChecksumSha256;
    Expected expected = Expected::Right;
    Cache cache = Cache::None;
    bool caching = true;
    bool cmp = false;  // lr_checksum_fd_cmp rather than lr_checksum_fd_compare
};

std::vector<Case> check_cases() {
    std::vector<Case> cases;
    for (int type = abi::kChecksumMd5; type <= abi::kChecksumSha512; ++type) {
        cases.push_back({.type = type});
    }
    const int sha256 = abi::kChecksumSha256;
    const std::vector<Case> rest = {
        {sha256, Expected::Wrong},
        {sha256, Expected::UpperCase},
        {sha256, Expected::Null},
        {sha256, Expected::Right, Cache::None, false},
        {sha256, Expected::Right, Cache::MtimeOnly},
        {sha256, Expected::Right, Cache::Right},
        {sha256, Expected::Wrong, Cache::Right},
        {sha256, Expected::Right, Cache::Right, false},
        {sha256, Expected::Right, Cache::NotADigest},
        {sha256, Expected::Right, Cache::Stale},
        {sha256, Expected::Wrong, Cache::Stale},
        {abi::kChecksumSha1, Expected::Right, Cache::Right},
        {sha256, Expected::Right, Cache::None, true, true},
        {sha256, Expected::Wrong, Cache::None, true, true},
        {sha256, Expected::Right, Cache::Right, true, true},
    };
    cases.insert(cases.end(), rest.begin(), rest.end());
    return cases;
}

std::string type_name(int type) {
    return std::string(checksum_type_name(kAllChecksumTypes[type - abi::kChecksumMd5]));
}

std::string describe(const Case& c) {
    static constexpr const char* kExpected[] = {"right", "wrong", "upper-case", "NULL"};
    static constexpr const char* kCache[] = {"none", "mtime only", "right", "not a digest",
                                             "stale"};
    return std::string(c.cmp ? "lr_checksum_fd_cmp" : "lr_checksum_fd_compare") + " " +
           type_name(c.type) + ", " + kExpected[static_cast<int>(c.expected)] +
           " expected digest, caching " + (c.caching ? "on" : "off") + ", cache " +
           kCache[static_cast<int>(c.cache)];
}

// user.Librepo.* and user.librepo.* of `fd`, "name=value" each, in name order.
std::vector<std::string> librepo_xattrs(int fd) {
    std::vector<std::string> found;
    for (const std::string& name : xattr_names(fd)) {
        if (!name.starts_with("user.Librepo.") && !name.starts_with("user.librepo.")) {
            continue;
        }
        char value[512];
        const ssize_t size = ::fgetxattr(fd, name.c_str(), value, sizeof(value));
        found.push_back(name + "=" +
                        (size >= 0 ? std::string(value, static_cast<std::size_t>(size)) : "?"));
    }
    std::sort(found.begin(), found.end());
    return found;
}

class CheckFile {
  public:
    // Creates the file in `directory` (unlinked at once) and writes `content`; false iff that or
    // user xattrs fail there.
    bool open(const std::filesystem::path& directory, const std::string& content) {
        std::string name = (directory / ".rpmirror-librepo-check-XXXXXX").string();
        fd_.reset(::mkostemp(name.data(), O_CLOEXEC));
        if (!fd_) {
            return false;
        }
        (void)fs::remove_file(name);  // anonymous from here on
        if (::write(fd_.get(), content.data(), content.size()) !=
            static_cast<ssize_t>(content.size())) {
            return false;
        }
        return ::fsetxattr(fd_.get(), "user.Librepo.checksum.probe", "1", 1, 0) == 0 &&
               ::fremovexattr(fd_.get(), "user.Librepo.checksum.probe") == 0;
    }

    // The cache state `cache` for a file whose `type` digest is `digest`, the fixed mtime, and
    // the offset at 0 (as a file librepo just opened).
    bool prepare(Cache cache, int type, const std::string& digest, const std::string& prefix) {
        for (const std::string& entry : librepo_xattrs(fd_.get())) {
            if (::fremovexattr(fd_.get(), entry.substr(0, entry.find('=')).c_str()) != 0) {
                return false;
            }
        }
        bool ok = true;
        const auto set = [&](const std::string& name, const std::string& value) {
            ok = ok && ::fsetxattr(fd_.get(), (prefix + name).c_str(), value.data(), value.size(),
                                   0) == 0;
        };
        switch (cache) {
            case Cache::None:
                break;
            case Cache::MtimeOnly:
                set("mtime", kCheckMtimeText);
                break;
            case Cache::Right:
                set("mtime", kCheckMtimeText);
                set(type_name(type), digest);
                break;
            case Cache::NotADigest:
                set("mtime", kCheckMtimeText);
                set(type_name(type), "not-a-digest");
                break;
            case Cache::Stale:
                set("mtime", kStaleMtimeText);
                set(type_name(type), digest);
                set("md5", "00000000000000000000000000000000");
                break;
        }
        const struct timespec times[2] = {kCheckMtime, kCheckMtime};
        return ok && ::futimens(fd_.get(), times) == 0 && ::lseek(fd_.get(), 0, SEEK_SET) == 0;
    }

    int fd() const { return fd_.get(); }

  private:
    UniqueFd fd_;
};

// What one call left behind, as one line.
std::string observe(const ChecksumCalls& calls, const Case& c, int fd,
                    const std::string& expected) {
    gboolean matches = 7;
    gchar* calculated = nullptr;
    GError* error = nullptr;
    const char* expected_text = c.expected == Expected::Null ? nullptr : expected.c_str();
    const std::optional<gboolean> result =
        c.cmp ? calls.cmp(c.type, fd, expected_text, c.caching ? TRUE : FALSE, &matches, &error)
              : calls.compare(c.type, fd, expected_text, c.caching ? TRUE : FALSE, &matches,
                              &calculated, &error);
    std::string seen = result ? "return=" + std::to_string(*result) : "handed to librepo";
    seen += " matches=" + std::to_string(matches) +
            " calculated=" + (calculated != nullptr ? calculated : "(null)") +
            " offset=" + std::to_string(::lseek(fd, 0, SEEK_CUR));
    if (error != nullptr) {
        seen += std::string(" error=") + g_quark_to_string(error->domain) + "/" +
                std::to_string(error->code) + "/" + error->message;
        g_error_free(error);
    }
    g_free(calculated);
    for (const std::string& entry : librepo_xattrs(fd)) {
        seen += " " + entry;
    }
    return seen;
}

}  // namespace

SelfCheckResult self_check(const ChecksumCalls& librepo, const ChecksumCalls& accelerator,
                           const std::vector<std::filesystem::path>& directories,
                           const std::string& prefix) {
    SelfCheckResult result;
    // Several of librepo's 2 KiB reads, and not a multiple of them.
    std::string content;
    while (content.size() < 5000) {
        content += "rpmirror's check of librepo's checksum functions\n";
    }
    CheckFile file;
    std::string tried;
    for (const std::filesystem::path& directory : directories) {
        if (file.open(directory, content)) {
            result.directory = directory;
            break;
        }
        tried +=
            (tried.empty() ? "" : ", ") + directory.string() + " (" + std::strerror(errno) + ")";
    }
    if (result.directory.empty()) {
        result.detail =
            "no directory to check librepo in: a file with user xattrs could not be "
            "made in " +
            tried;
        return result;
    }
    for (const Case& c : check_cases()) {
        Hasher hasher(kAllChecksumTypes[c.type - abi::kChecksumMd5]);
        hasher.update(reinterpret_cast<const std::byte*>(content.data()), content.size());
        const std::string digest = hasher.finish();
        std::string expected = digest;
        if (c.expected == Expected::Wrong) {
            expected[0] = expected[0] == '0' ? '1' : '0';
        } else if (c.expected == Expected::UpperCase) {
            std::transform(expected.begin(), expected.end(), expected.begin(),
                           [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
        }
        std::string seen[2];
        const ChecksumCalls* sides[2] = {&librepo, &accelerator};
        for (int side = 0; side < 2; ++side) {
            if (!file.prepare(c.cache, c.type, digest, prefix)) {
                result.verdict = SelfCheckResult::Verdict::Impossible;
                result.detail = "preparing the check file in " + result.directory.string() +
                                " failed: " + std::strerror(errno);
                return result;
            }
            seen[side] = observe(*sides[side], c, file.fd(), expected);
        }
        ++result.calls;
        if (seen[0] != seen[1]) {
            result.verdict = SelfCheckResult::Verdict::Different;
            result.detail = describe(c) + ": librepo: " + seen[0] + "; accelerator: " + seen[1];
            return result;
        }
    }
    result.verdict = SelfCheckResult::Verdict::Same;
    return result;
}

}  // namespace rpmirror::librepo_accel
