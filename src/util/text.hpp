// Small ASCII text helpers, one of each for the whole library (configuration, HTTP headers,
// metadata, S3 settings): surrounding whitespace and case; sizes for people.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/core.h>

namespace rpmirror::text {

// True iff `c` is ASCII whitespace as XML, HTTP and INI files use it: space, tab, CR, LF.
inline bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

// Returns `text` without leading and trailing is_space characters.
inline std::string_view trim(std::string_view text) {
    while (!text.empty() && is_space(text.front())) {
        text.remove_prefix(1);
    }
    while (!text.empty() && is_space(text.back())) {
        text.remove_suffix(1);
    }
    return text;
}

// Returns `text` with ASCII letters in lowercase (any other byte as it is; no locale).
inline std::string to_lower(std::string_view text) {
    std::string lower(text);
    for (char& c : lower) {
        if (c >= 'A' && c <= 'Z') {
            c = static_cast<char>(c - 'A' + 'a');
        }
    }
    return lower;
}

// `bytes` in decimal megabytes with one decimal ("12.3 MB").
inline std::string megabytes(std::uint64_t bytes) {
    return fmt::format("{:.1f} MB", static_cast<double>(bytes) / 1e6);
}

}  // namespace rpmirror::text
