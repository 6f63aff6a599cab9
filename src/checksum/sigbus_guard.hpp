// Turns SIGBUS on a file mapping into an error instead of a crash.
//
// Touching a page of a MAP_SHARED mapping beyond the end of a file that was truncated after it
// was mapped raises SIGBUS. The hashing loop runs under a guard: a process-wide SIGBUS handler
// (installed once, chaining to any previous handler) checks whether the faulting address lies in
// the calling thread's guarded range and, iff so, siglongjmps back to the guard, which reports
// failure. Faults anywhere else go to the previous handler (or the default action).
#pragma once

#include <cstddef>
#include <functional>

namespace rpmirror {

// Calls `consume(offset, length)` for consecutive chunks of at most `chunk_size` bytes covering
// [data, data + size). Returns true iff every chunk was consumed; false iff reading the mapping
// raised SIGBUS (the file shrank). `consume` must not own resources that need destructors to run
// across the fault (it is abandoned with siglongjmp), which holds for EVP_DigestUpdate.
// Thread-safe: the guarded range is thread-local.
bool consume_mapping_guarded(
    const std::byte* data, std::size_t size, std::size_t chunk_size,
    const std::function<void(std::size_t offset, std::size_t length)>& consume);

}  // namespace rpmirror
