// What one file has learnt about its mirrors, and which mirror its next attempt uses: pure
// functions of the downloader's retry policy, kept apart from the curl loop so they can be read
// and tested on their own.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace rpmirror::download {

// How an attempt failed, and so what comes next.
enum class FailureKind {
    Transient,    // retry (same or another mirror) after a backoff; received bytes are kept
    Permanent,    // this mirror cannot serve this file: next mirror, from scratch
    RestartSame,  // the partial data is unusable: same mirror again, from scratch, at once
    Local,        // our side failed (disk, unsafe path): the file fails
};

// One file's record of one mirror it has tried.
struct MirrorMark {
    std::string base_url;
    bool ruled_out = false;           // a Permanent failure: never again for this file
    unsigned transient_failures = 0;  // Transient failures so far
};

// Records in `marks` that an attempt on `base_url` failed with `kind` (Permanent rules the
// mirror out, Transient counts; RestartSame and Local leave the marks as they are, but still
// mark the mirror as tried).
void mark_failure(std::vector<MirrorMark>& marks, const std::string& base_url, FailureKind kind);

struct MirrorChoice {
    std::string base_url;        // "" iff the file has no mirror (its href is an absolute URL)
    bool after_backoff = false;  // wait before the attempt (true) or start it at once (false)
};

// Returns the mirror for the next attempt of a file whose attempt on `failed_base` ("" for an
// absolute URL) just failed with `kind` (not Local), given the mirrors' current preference
// `order` and the file's `marks` (already updated for that failure); nullopt iff none is left.
//   RestartSame: the same mirror, at once.
//   No mirror (absolute URL): Transient retries it after a backoff; Permanent leaves none.
//   Otherwise: the first mirror of `order` this file has not tried, at once; else the mirror
//   not ruled out with the fewest transient failures (the first in `order` on a tie), after a
//   backoff; else none.
std::optional<MirrorChoice> choose_next_mirror(const std::vector<std::string>& order,
                                               const std::vector<MirrorMark>& marks,
                                               const std::string& failed_base, FailureKind kind);

}  // namespace rpmirror::download
