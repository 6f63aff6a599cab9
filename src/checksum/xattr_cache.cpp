// The checksum cache in extended attributes (format documented in rpmirror/checksum/checksum.hpp).
#include <sys/xattr.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <string>
#include <vector>

#include "checksum/hasher.hpp"
#include "checksum/xattr_names.hpp"
#include "fs/beneath.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "util/text.hpp"

namespace rpmirror {

namespace {

constexpr std::string_view kOwnPrefix = "user.rpmirror.checksum.";
constexpr std::string_view kOwnVersion = "v1";
constexpr std::array<std::string_view, 2> kLibrepoPrefixes = {"user.librepo.checksum.",
                                                              "user.Librepo.checksum."};
// The prefix librepo 1.14 (dnf 4) reads and writes (librepo/xattr_internal.h).
constexpr std::string_view kLibrepoWritePrefix = "user.Librepo.checksum.";

// Returns the value of attribute `name` of `fd`, or nullopt iff it is absent or unreadable.
std::optional<std::string> get_attribute(int fd, const std::string& name) {
    std::array<char, 512> value{};
    const ssize_t length = ::fgetxattr(fd, name.c_str(), value.data(), value.size());
    if (length < 0) {
        return std::nullopt;  // ENODATA, ENOTSUP, ERANGE (too long to be ours): no entry
    }
    return std::string(value.data(), static_cast<std::size_t>(length));
}

template <typename Integer>
std::optional<Integer> parse_integer(std::string_view text) {
    Integer value{};
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size()) {
        return std::nullopt;
    }
    return value;
}

// Splits "v1 <size> <mtime_ns> <inode> <hex>" into its five fields.
std::optional<std::array<std::string_view, 5>> split_own_entry(std::string_view entry) {
    std::array<std::string_view, 5> fields;
    for (std::size_t index = 0; index < fields.size(); ++index) {
        const std::size_t space = entry.find(' ');
        const bool is_last = index + 1 == fields.size();
        if (is_last != (space == std::string_view::npos)) {
            return std::nullopt;
        }
        fields[index] = entry.substr(0, space);
        entry = is_last ? std::string_view() : entry.substr(space + 1);
    }
    return fields;
}

std::optional<std::string> read_own_entry(int fd, const struct stat& st, ChecksumType type) {
    const auto entry =
        get_attribute(fd, std::string(kOwnPrefix) + std::string(checksum_type_name(type)));
    if (!entry) {
        return std::nullopt;
    }
    const auto fields = split_own_entry(*entry);
    if (!fields || (*fields)[0] != kOwnVersion) {
        return std::nullopt;
    }
    const auto size = parse_integer<std::uint64_t>((*fields)[1]);
    const auto mtime = parse_integer<std::int64_t>((*fields)[2]);
    const auto inode = parse_integer<std::uint64_t>((*fields)[3]);
    const std::string_view hex = (*fields)[4];
    if (!size || !mtime || !inode || !is_valid_hex_digest(type, hex)) {
        return std::nullopt;
    }
    if (*size != static_cast<std::uint64_t>(st.st_size) || *mtime != fs::timespec_ns(st.st_mtim) ||
        *inode != static_cast<std::uint64_t>(st.st_ino)) {
        return std::nullopt;
    }
    return std::string(hex);
}

std::optional<std::string> read_librepo_entry(int fd, const struct stat& st, ChecksumType type) {
    for (const std::string_view prefix : kLibrepoPrefixes) {
        const auto mtime_text = get_attribute(fd, std::string(prefix) + "mtime");
        if (!mtime_text) {
            continue;
        }
        const auto mtime = parse_integer<std::int64_t>(*mtime_text);
        if (!mtime || *mtime != fs::timespec_ns(st.st_mtim)) {
            continue;
        }
        auto hex = get_attribute(fd, std::string(prefix) + std::string(checksum_type_name(type)));
        if (hex && is_valid_hex_digest(type, *hex)) {
            return hex;
        }
    }
    return std::nullopt;
}

bool is_racy(const struct stat& st) {
    struct timespec now {};
    ::clock_gettime(CLOCK_REALTIME, &now);
    const std::int64_t now_ns = fs::timespec_ns(now);
    return now_ns - fs::timespec_ns(st.st_mtim) < kRacyWindowNs;
}

// Records `hex` as librepo 1.14 does (lr_checksum_fd_compare): `user.Librepo.checksum.mtime` =
// st_mtim in nanoseconds as decimal text, `user.Librepo.checksum.<type>` = lowercase hex, so that
// dnf trusts the file without hashing it. Best effort.
void write_librepo_entry(int fd, const struct stat& st, ChecksumType type, std::string_view hex) {
    const std::string mtime_key = std::string(kLibrepoWritePrefix) + "mtime";
    const std::string mtime_text = std::to_string(fs::timespec_ns(st.st_mtim));
    if (get_attribute(fd, mtime_key) != mtime_text) {
        clear_librepo_entries(fd);
        if (::fsetxattr(fd, mtime_key.c_str(), mtime_text.data(), mtime_text.size(), 0) != 0) {
            return;
        }
    }
    const std::string digest_key =
        std::string(kLibrepoWritePrefix) + std::string(checksum_type_name(type));
    (void)::fsetxattr(fd, digest_key.c_str(), hex.data(), hex.size(), 0);
}

// Returns true iff rpmirror's entry of a type other than `type` is valid for `st`: one recorded
// for this very size, mtime and inode (by the downloader, which wrote every byte).
bool has_own_entry_of_another_type(int fd, const struct stat& st, ChecksumType type) {
    return std::any_of(std::begin(kAllChecksumTypes), std::end(kAllChecksumTypes),
                       [&](ChecksumType other) {
                           return other != type && read_own_entry(fd, st, other).has_value();
                       });
}

}  // namespace

std::vector<std::string> xattr_names(int fd) {
    std::vector<std::string> found;
    const ssize_t length = ::flistxattr(fd, nullptr, 0);
    if (length <= 0) {
        return found;
    }
    std::vector<char> names(static_cast<std::size_t>(length));
    const ssize_t read = ::flistxattr(fd, names.data(), names.size());
    for (std::size_t at = 0; read > 0 && at < static_cast<std::size_t>(read);) {
        found.emplace_back(names.data() + at);
        at += found.back().size() + 1;
    }
    return found;
}

void clear_librepo_entries(int fd, std::string_view prefix) {
    for (const std::string& name : xattr_names(fd)) {
        if (name.starts_with(prefix)) {
            (void)::fremovexattr(fd, name.c_str());
        }
    }
}

void CacheTrust::vouch(std::uint64_t inode, std::uint64_t size, std::int64_t mtime_ns,
                       std::int64_t ctime_ns) {
    records_.emplace(inode, size, mtime_ns, ctime_ns);
}

bool CacheTrust::vouches_for(const struct stat& st) const {
    return records_.contains({static_cast<std::uint64_t>(st.st_ino),
                              static_cast<std::uint64_t>(st.st_size), fs::timespec_ns(st.st_mtim),
                              fs::timespec_ns(st.st_ctim)});
}

std::optional<std::string> read_own_cached_digest(int fd, const struct stat& st,
                                                  ChecksumType type) {
    return read_own_entry(fd, st, type);
}

std::optional<std::string> read_cached_digest(int fd, const struct stat& st, ChecksumType type) {
    if (auto own = read_own_entry(fd, st, type)) {
        return own;
    }
    return read_librepo_entry(fd, st, type);
}

bool write_cached_digest(int fd, const struct stat& st, ChecksumType type, std::string_view hex,
                         bool trust_recent) {
    if (!is_valid_hex_digest(type, hex)) {
        return false;
    }
    // A racy file already vouched for at this stat by another type's entry: one more type
    // recorded adds no exposure (dnf's scenario: the same mirror synced from a sha512 copy of
    // the repository right after a sha256 one).
    if (!trust_recent && is_racy(st) && !has_own_entry_of_another_type(fd, st, type)) {
        return false;
    }
    const std::string entry =
        text::to_lower(std::string(kOwnVersion) + ' ' + std::to_string(st.st_size) + ' ' +
                       std::to_string(fs::timespec_ns(st.st_mtim)) + ' ' +
                       std::to_string(st.st_ino) + ' ' + std::string(hex));
    const std::string name = std::string(kOwnPrefix) + std::string(checksum_type_name(type));
    if (::fsetxattr(fd, name.c_str(), entry.data(), entry.size(), 0) != 0) {
        return false;
    }
    write_librepo_entry(fd, st, type, entry.substr(entry.rfind(' ') + 1));
    return true;
}

}  // namespace rpmirror
