// Private helpers shared by the checksum sources.
#pragma once

#include <span>
#include <string>

#include "rpmirror/checksum/checksum.hpp"

struct evp_md_st;

namespace rpmirror {

// Returns the process-wide EVP_MD for `type`, fetched on first use. Thread-safe.
const evp_md_st* evp_md_for(ChecksumType type);

// Returns `bytes` as lowercase hex.
std::string to_hex(std::span<const unsigned char> bytes);

}  // namespace rpmirror
