// Checksum lists in the format of GNU coreutils' sha256sum (and md5sum, sha1sum, ...), so that
// `rpmirror checksum` can stand in for them.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/checksum/checksum.hpp"

namespace rpmirror {

struct ChecksumListEntry {
    std::string path;  // unescaped
    ChecksumType type;
    std::string expected_hex;  // as written in the list
    std::size_t line_number;   // 1-based
};

struct ChecksumList {
    std::vector<ChecksumListEntry> entries;
    std::size_t malformed_line_count = 0;
};

// Parses `text`, one entry per line, in any of the forms sha256sum writes:
//   "<hex>  <path>" (text mode), "<hex> *<path>" (binary mode), a leading '\' meaning the path is
//   escaped ("\\" and "\n"), and the BSD form "SHA256 (<path>) = <hex>" written by --tag.
// With `forced_type`, every digest must have that type's length; without it, the type is the one
// whose digests have the given length (GNU lines) or the one named by the tag (BSD lines).
// Lines that fit none of the forms are counted in malformed_line_count, never guessed at.
// Blank lines are skipped silently. A final line without '\n' is accepted.
ChecksumList parse_checksum_list(std::string_view text, std::optional<ChecksumType> forced_type);

// Returns `path` as sha256sum prints it: unchanged, or with '\' and newlines escaped; `escaped`
// is set iff the line must be prefixed with '\'.
std::string escape_list_path(std::string_view path, bool& escaped);

// Returns the line sha256sum would print for `path` with `hex` ("<hex>  <path>\n", escaped as
// needed).
std::string format_checksum_line(std::string_view hex, std::string_view path);

}  // namespace rpmirror
