// Digest types and the streaming Hasher over OpenSSL 3 EVP.
#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <mutex>
#include <stdexcept>

#include "checksum/evp.hpp"
#include "checksum/hasher.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "util/text.hpp"

namespace rpmirror {

namespace {

struct TypeInfo {
    ChecksumType type;
    std::string_view name;          // as repomd.xml spells it
    std::string_view openssl_name;  // for EVP_MD_fetch
    std::size_t hex_length;
};

constexpr std::array<TypeInfo, 6> kTypes = {{
    {ChecksumType::Md5, "md5", "MD5", 32},
    {ChecksumType::Sha1, "sha1", "SHA1", 40},
    {ChecksumType::Sha224, "sha224", "SHA224", 56},
    {ChecksumType::Sha256, "sha256", "SHA256", 64},
    {ChecksumType::Sha384, "sha384", "SHA384", 96},
    {ChecksumType::Sha512, "sha512", "SHA512", 128},
}};

const TypeInfo& info(ChecksumType type) {
    return kTypes.at(static_cast<std::size_t>(type));
}

}  // namespace

const evp_md_st* evp_md_for(ChecksumType type) {
    // Fetched once per process: EVP_MD_fetch does a locked lookup in the provider tables, far
    // too slow to repeat per file. Never freed: OpenSSL may already be torn down at exit.
    static const std::array<EVP_MD*, kTypes.size()> fetched = [] {
        std::array<EVP_MD*, kTypes.size()> mds{};
        for (const TypeInfo& type_info : kTypes) {
            mds[static_cast<std::size_t>(type_info.type)] =
                EVP_MD_fetch(nullptr, std::string(type_info.openssl_name).c_str(), nullptr);
        }
        return mds;
    }();
    const EVP_MD* md = fetched.at(static_cast<std::size_t>(type));
    if (md == nullptr) {
        // Only possible if OpenSSL's default provider is missing (e.g. MD5 in FIPS mode).
        throw std::runtime_error("OpenSSL cannot provide digest " +
                                 std::string(info(type).openssl_name));
    }
    return md;
}

Result<ChecksumType> parse_checksum_type(std::string_view name) {
    const std::string lower = text::to_lower(name);
    if (lower == "sha") {
        return ChecksumType::Sha1;
    }
    for (const TypeInfo& type_info : kTypes) {
        if (lower == type_info.name) {
            return type_info.type;
        }
    }
    return make_error(ErrorCode::Unsupported,
                      "unknown checksum type (expected md5, sha1, sha224, sha256, sha384 or "
                      "sha512)",
                      std::string(name));
}

std::string_view checksum_type_name(ChecksumType type) {
    return info(type).name;
}

std::size_t digest_hex_length(ChecksumType type) {
    return info(type).hex_length;
}

std::optional<ChecksumType> checksum_type_for_hex_length(std::size_t hex_length) {
    for (const TypeInfo& type_info : kTypes) {
        if (type_info.hex_length == hex_length) {
            return type_info.type;
        }
    }
    return std::nullopt;
}

bool is_valid_hex_digest(ChecksumType type, std::string_view digest) {
    return digest.size() == digest_hex_length(type) &&
           std::all_of(digest.begin(), digest.end(),
                       [](unsigned char c) { return std::isxdigit(c) != 0; });
}

std::string to_hex(std::span<const unsigned char> bytes) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string hex(bytes.size() * 2, '\0');
    for (std::size_t index = 0; index < bytes.size(); ++index) {
        hex[2 * index] = kDigits[bytes[index] >> 4];
        hex[2 * index + 1] = kDigits[bytes[index] & 0x0f];
    }
    return hex;
}

void Hasher::CtxDeleter::operator()(evp_md_ctx_st* ctx) const {
    EVP_MD_CTX_free(ctx);
}

Hasher::Hasher(ChecksumType type) : type_(type), ctx_(EVP_MD_CTX_new()) {
    if (!ctx_) {
        throw std::bad_alloc();
    }
    reset(type);
}

Hasher::Hasher(Hasher&&) noexcept = default;
Hasher& Hasher::operator=(Hasher&&) noexcept = default;
Hasher::~Hasher() = default;

void Hasher::update(std::span<const std::byte> bytes) {
    update(bytes.data(), bytes.size());
}

void Hasher::update(const void* data, std::size_t size) {
    EVP_DigestUpdate(ctx_.get(), data, size);
}

std::string Hasher::finish() {
    std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
    unsigned int digest_length = 0;
    EVP_DigestFinal_ex(ctx_.get(), digest.data(), &digest_length);
    reset();
    return to_hex(std::span<const unsigned char>(digest.data(), digest_length));
}

void Hasher::reset() {
    reset(type_);
}

void Hasher::reset(ChecksumType type) {
    type_ = type;
    if (EVP_DigestInit_ex2(ctx_.get(), evp_md_for(type), nullptr) != 1) {
        throw std::runtime_error("EVP_DigestInit_ex2 failed for " +
                                 std::string(checksum_type_name(type)));
    }
}

std::string hash_bytes(ChecksumType type, std::span<const std::byte> bytes) {
    Hasher hasher(type);
    hasher.update(bytes);
    return hasher.finish();
}

std::string hash_bytes(ChecksumType type, std::string_view bytes) {
    return hash_bytes(type, std::as_bytes(std::span<const char>(bytes.data(), bytes.size())));
}

}  // namespace rpmirror
