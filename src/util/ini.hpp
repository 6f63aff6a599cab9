// The INI dialect of dnf's configuration files (libdnf's ConfigParser, itself modelled on Python's
// ConfigParser): `[section]` headers, `key=value` / `key = value`, full-line comments starting with
// `#` or `;` (possibly indented), continuation lines (a line starting with whitespace continues the
// previous value; blank lines inside a value are kept), keys lower-cased, no inline comments.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/util/error.hpp"

namespace rpmirror::ini {

struct IniEntry {
    std::string key;    // lower-cased, as written otherwise
    std::string value;  // continuation lines joined with '\n'; surrounding whitespace stripped
    std::size_t line;   // 1-based line of `key=`
    std::string written_key;  // the key as written, case kept (.treeinfo's paths)
};

struct IniSection {
    std::string name;
    std::size_t line;  // 1-based line of the `[name]` header
    std::vector<IniEntry> entries;
};

// Parses `content` (the text of `file_name`, used only in messages).
// Returns Error{BadInput} with subject `file_name` and "line N: ..." iff a line is neither blank,
// a comment, a section header, `key=value` nor a continuation, a key precedes every section, or a
// section header is malformed. Duplicate sections and keys are returned as they are. Thread-safe.
Result<std::vector<IniSection>> parse_ini(std::string_view content, const std::string& file_name);

// Returns the whole content of the regular file at `path`.
// Returns Error{NotFound} iff it does not exist, Error{Io} with errno for any other failure.
Result<std::string> read_text_file(const std::filesystem::path& path);

}  // namespace rpmirror::ini
