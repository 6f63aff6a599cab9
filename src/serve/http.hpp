// The HTTP rules of `rpmirror serve` that need no server: a request path turned into a job and a
// key (hostile paths refused), a Range header, HTTP dates and the conditional headers. Pure
// functions; thread-safe. The server (server.cpp) applies them to libmicrohttpd's requests.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "rpmirror/util/error.hpp"

namespace rpmirror::serve {

// A request path split into its job and the key beneath the job's repository.
struct RequestTarget {
    std::string job;  // the first segment ("updates")
    std::string key;  // the rest, a store key ("repodata/repomd.xml"); "" for "/updates/"
};

// Splits the raw (still percent-encoded) path of a request ("/updates/Packages/a.rpm") into its
// job and key, decoding %XX escapes. Returns Error{Unsafe} naming the path (with control bytes
// shown as \xNN) iff it is not "/JOB/..." or, after decoding, it has a NUL or another control
// byte, a backslash, an empty, "." or ".." segment, a '/' that was encoded (%2f), or a bad
// escape; every path that can leave the job's repository is one of these.
Result<RequestTarget> parse_request_path(std::string_view raw_path);

// One range of a file of `size` bytes: bytes [first, first + length).
struct ByteRange {
    std::uint64_t first = 0;
    std::uint64_t length = 0;
};

enum class RangeKind {
    Whole,          // no Range header, or one this server ignores (several ranges, another unit,
                    // bad syntax): the whole file (200)
    Partial,        // one satisfiable range (206)
    Unsatisfiable,  // one range that starts past the end (416)
};

struct RangeAnswer {
    RangeKind kind = RangeKind::Whole;
    ByteRange range;  // Partial: the range, clipped to the file
};

// Reads the Range header `header` (nullopt: none) for a file of `size` bytes, as RFC 9110 14.2:
// "bytes=A-B", "bytes=A-", "bytes=-N" (the last N bytes).
RangeAnswer parse_range(std::optional<std::string_view> header, std::uint64_t size);

// `seconds` since the epoch as an IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT").
std::string http_date(std::int64_t seconds);

// An HTTP date (IMF-fixdate, RFC 850 or asctime) as seconds since the epoch; nullopt iff it is
// none of them.
std::optional<std::int64_t> parse_http_date(std::string_view text);

// What a conditional GET or HEAD is answered with.
struct Validators {
    std::string etag;                // quoted: "\"4f0c...\""
    std::int64_t last_modified = 0;  // seconds since the epoch; 0 = unknown
};

// True iff the request's If-None-Match (when given; it then decides alone) or else
// If-Modified-Since says the client holds the file `validators` describe: answer 304.
bool not_modified(const Validators& validators, std::optional<std::string_view> if_none_match,
                  std::optional<std::string_view> if_modified_since);

// True iff a Range may be honoured under the request's If-Range (nullopt: none): it names the
// file's entity tag or a date not before its Last-Modified.
bool if_range_holds(const Validators& validators, std::optional<std::string_view> if_range);

}  // namespace rpmirror::serve
