// Which cached checksums may be believed: the CacheTrust (rpmirror/checksum/checksum.hpp) that
// rpmirror's own records make, for a program that hashes files of its mirrors (`rpmirror
// checksum`) with HashOptions::trust.
#pragma once

#include <filesystem>
#include <memory>

#include "rpmirror/checksum/checksum.hpp"

namespace rpmirror {

// The CacheTrust of every sync state and catalogue in `state_dir` ("" = the default state
// directory): for what may look at files of any mirror (--dedupe's candidates, `rpmirror
// checksum`).
std::shared_ptr<const CacheTrust> cache_trust_of_state_dir(const std::filesystem::path& state_dir);

}  // namespace rpmirror
