// Test seam of the file hasher (private; not part of the public API).
#pragma once

#include <cstdint>
#include <functional>

namespace rpmirror::testing {

// When set, called on the calling thread after each chunk of a file is hashed, with the number of
// bytes hashed so far. Lets tests change a file at an exact point of its hashing (e.g. truncate
// it) without sleeps or races.
extern thread_local std::function<void(std::uint64_t bytes_hashed)>* after_chunk_hook;

}  // namespace rpmirror::testing
