// `--shard K/N`: which worker of N runs a job, a fixed function of the job's name.
#include <charconv>
#include <cstdint>
#include <system_error>

#include <fmt/format.h>

#include "checksum/hasher.hpp"
#include "jobs/jobs_config.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "rpmirror/jobs/jobs_config.hpp"

namespace rpmirror {
namespace {

constexpr unsigned kMaxShards = 65536;

std::optional<unsigned> parse_number(std::string_view text) {
    unsigned value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
        return std::nullopt;
    }
    return value;
}

// Lamping & Veach, "A Fast, Minimal Memory, Consistent Hash Algorithm" (2014): `key` into
// 0..buckets-1. The double arithmetic is IEEE 754 (the same result on every platform).
unsigned jump_consistent_hash(std::uint64_t key, unsigned buckets) {
    std::int64_t bucket = -1;
    std::int64_t next = 0;
    while (next < static_cast<std::int64_t>(buckets)) {
        bucket = next;
        key = key * 2862933555777941757ULL + 1;
        next = static_cast<std::int64_t>(
            static_cast<double>(bucket + 1) *
            (static_cast<double>(std::int64_t{1} << 31) / static_cast<double>((key >> 33) + 1)));
    }
    return static_cast<unsigned>(bucket);
}

}  // namespace

std::string Shard::to_string() const {
    return fmt::format("{}/{}", index, count);
}

Result<Shard> parse_shard(std::string_view text, std::string_view shown) {
    const auto slash = text.find('/');
    const auto index =
        slash == std::string_view::npos ? std::nullopt : parse_number(text.substr(0, slash));
    const auto count =
        slash == std::string_view::npos ? std::nullopt : parse_number(text.substr(slash + 1));
    if (!index || !count || *count < 1 || *count > kMaxShards || *index < 1 || *index > *count) {
        return make_error(ErrorCode::BadInput,
                          fmt::format("invalid shard '{}' (expected K/N: worker K of N, "
                                      "1 <= K <= N <= {}, e.g. 1/4)",
                                      text, kMaxShards),
                          std::string(shown));
    }
    return Shard{*index, *count};
}

unsigned shard_of(std::string_view name, unsigned count) {
    const std::string digest = hash_bytes(ChecksumType::Sha256, name);
    std::uint64_t key = 0;
    // The first 8 bytes (16 hex digits), big-endian.
    std::from_chars(digest.data(), digest.data() + 16, key, 16);
    return jump_consistent_hash(key, count == 0 ? 1 : count) + 1;
}

bool in_shard(std::string_view name, const Shard& shard) {
    return shard_of(name, shard.count) == shard.index;
}

}  // namespace rpmirror
