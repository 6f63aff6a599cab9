// PackageIndex: fixed-width records over one string arena.
//
// A record is 88 bytes; its strings (name, version, release, href, sourcerpm) live in the arena,
// NUL-terminated, addressed by 32-bit offset + length; the raw digest bytes follow them there.
// Arch and xml:base repeat across a repository, so they are interned once each.
#include <algorithm>
#include <cstring>
#include <unordered_map>

#include <fmt/format.h>

#include "checksum/hasher.hpp"
#include "index/index.hpp"

namespace rpmirror {
namespace {

struct Ref {
    std::uint32_t offset = 0;
    std::uint32_t length = 0;
};

struct Record {
    Ref name;
    Ref version;
    Ref release;
    Ref href;
    Ref source_rpm;
    std::uint32_t digest_offset = 0;
    std::uint32_t epoch = 0;
    std::uint32_t arch = 0;  // index into the interned table
    std::uint32_t base = 0;  // index into the interned table
    std::uint8_t checksum_type = 0;
    std::uint64_t package_size = 0;
    std::int64_t build_time = 0;
    std::int64_t file_time = 0;
};

constexpr std::uint64_t kMaxArena = std::uint64_t{UINT32_MAX};

}  // namespace

struct PackageIndex::Storage {
    std::vector<Record> records;
    std::vector<char> arena;
    std::vector<Ref> interned;  // distinct arch and xml:base values; interned[0] is ""
    std::unordered_map<std::string, std::uint32_t> interned_lookup;
    std::vector<IndexIssue> issues;
    std::optional<std::uint64_t> declared_count;

    Storage() {
        arena.push_back('\0');
        interned.push_back(Ref{0, 0});
        interned_lookup.emplace(std::string(), 0);
    }

    std::string_view view(Ref ref) const { return {arena.data() + ref.offset, ref.length}; }

    bool fits(std::size_t extra) const { return arena.size() + extra <= kMaxArena; }

    Ref append(std::string_view text) {
        if (text.empty()) {
            return Ref{0, 0};
        }
        const Ref ref{static_cast<std::uint32_t>(arena.size()),
                      static_cast<std::uint32_t>(text.size())};
        arena.insert(arena.end(), text.begin(), text.end());
        arena.push_back('\0');
        return ref;
    }

    std::uint32_t intern(std::string_view text) {
        // Lookups with a temporary key: arches and bases are short and rare enough.
        const auto found = interned_lookup.find(std::string(text));
        if (found != interned_lookup.end()) {
            return found->second;
        }
        const auto position = static_cast<std::uint32_t>(interned.size());
        interned.push_back(append(text));
        interned_lookup.emplace(std::string(text), position);
        return position;
    }
};

PackageIndex::PackageIndex() : storage_(std::make_unique<Storage>()) {}
PackageIndex::PackageIndex(PackageIndex&&) noexcept = default;
PackageIndex& PackageIndex::operator=(PackageIndex&&) noexcept = default;
PackageIndex::~PackageIndex() = default;

std::size_t PackageIndex::size() const {
    return storage_ ? storage_->records.size() : 0;
}

PackageView PackageIndex::operator[](std::size_t position) const {
    const Storage& storage = *storage_;
    const Record& record = storage.records[position];
    PackageView package;
    package.name = storage.view(record.name);
    package.arch = storage.view(storage.interned[record.arch]);
    package.epoch = record.epoch;
    package.version = storage.view(record.version);
    package.release = storage.view(record.release);
    package.checksum_type = static_cast<ChecksumType>(record.checksum_type);
    package.digest = std::span<const std::uint8_t>(
        reinterpret_cast<const std::uint8_t*>(storage.arena.data() + record.digest_offset),
        digest_hex_length(package.checksum_type) / 2);
    package.package_size = record.package_size;
    package.build_time = record.build_time;
    package.file_time = record.file_time;
    package.location_href = storage.view(record.href);
    package.location_base = storage.view(storage.interned[record.base]);
    package.source_rpm = storage.view(record.source_rpm);
    return package;
}

Result<void> PackageIndex::add(const PackageView& package) {
    Storage& storage = *storage_;
    const std::size_t digest_size = digest_hex_length(package.checksum_type) / 2;
    if (package.digest.size() != digest_size) {
        return make_error(ErrorCode::BadInput,
                          fmt::format("{}-byte digest for checksum type {}", package.digest.size(),
                                      checksum_type_name(package.checksum_type)),
                          package.nevra());
    }
    const std::size_t needed = package.name.size() + package.version.size() +
                               package.release.size() + package.location_href.size() +
                               package.source_rpm.size() + package.arch.size() +
                               package.location_base.size() + digest_size + 8;
    if (!storage.fits(needed)) {
        return make_error(ErrorCode::BadInput, "the package index exceeds its 4 GiB string arena",
                          package.nevra());
    }
    Record record;
    record.name = storage.append(package.name);
    record.version = storage.append(package.version);
    record.release = storage.append(package.release);
    record.href = storage.append(package.location_href);
    record.source_rpm = storage.append(package.source_rpm);
    record.digest_offset = static_cast<std::uint32_t>(storage.arena.size());
    storage.arena.insert(storage.arena.end(), package.digest.begin(), package.digest.end());
    record.epoch = package.epoch;
    record.arch = storage.intern(package.arch);
    record.base = storage.intern(package.location_base);
    record.checksum_type = static_cast<std::uint8_t>(package.checksum_type);
    record.package_size = package.package_size;
    record.build_time = package.build_time;
    record.file_time = package.file_time;
    storage.records.push_back(record);
    return {};
}

std::span<const IndexIssue> PackageIndex::issues() const {
    return storage_->issues;
}
void PackageIndex::add_issue(IndexIssue issue) {
    storage_->issues.push_back(std::move(issue));
}

std::optional<std::uint64_t> PackageIndex::declared_count() const {
    return storage_->declared_count;
}
void PackageIndex::set_declared_count(std::optional<std::uint64_t> count) {
    storage_->declared_count = count;
}

std::size_t PackageIndex::memory_bytes() const {
    const Storage& storage = *storage_;
    std::size_t bytes = storage.records.capacity() * sizeof(Record) + storage.arena.capacity() +
                        storage.interned.capacity() * sizeof(Ref);
    for (const auto& [text, position] : storage.interned_lookup) {
        bytes += sizeof(text) + text.capacity() + sizeof(position) + 2 * sizeof(void*);
    }
    for (const IndexIssue& issue : storage.issues) {
        bytes += sizeof(issue) + issue.message.capacity();
    }
    return bytes;
}

void PackageIndex::reserve(std::size_t packages, std::size_t string_bytes) {
    storage_->records.reserve(packages);
    storage_->arena.reserve(std::min<std::uint64_t>(string_bytes, kMaxArena));
}

void PackageIndex::shrink_to_fit() {
    // Only when at least a quarter is spare: shrinking copies, which briefly needs both buffers.
    const auto worth_it = [](const auto& vector) {
        return vector.size() < vector.capacity() - vector.capacity() / 4;
    };
    if (worth_it(storage_->records)) {
        storage_->records.shrink_to_fit();
    }
    if (worth_it(storage_->arena)) {
        storage_->arena.shrink_to_fit();
    }
    storage_->interned.shrink_to_fit();
}

std::string PackageView::checksum_hex() const {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string hex;
    hex.reserve(digest.size() * 2);
    for (const std::uint8_t byte : digest) {
        hex += kHex[byte >> 4];
        hex += kHex[byte & 0x0f];
    }
    return hex;
}

std::string PackageView::nevra() const {
    if (epoch != 0) {
        return fmt::format("{}-{}:{}-{}.{}", name, epoch, version, release, arch);
    }
    return fmt::format("{}-{}-{}.{}", name, version, release, arch);
}

std::string PackageView::strict_nevra() const {
    return fmt::format("{}-{}:{}-{}.{}", name, epoch, version, release, arch);
}

}  // namespace rpmirror
