// Small text helpers shared by the metadata readers (private).
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "util/xml.hpp"

namespace rpmirror::metadata_detail {

inline bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

// Returns `text` without leading and trailing ASCII whitespace.
inline std::string_view trim(std::string_view text) {
    while (!text.empty() && is_space(text.front())) {
        text.remove_prefix(1);
    }
    while (!text.empty() && is_space(text.back())) {
        text.remove_suffix(1);
    }
    return text;
}

// Returns the decimal number `text` (surrounding whitespace allowed), or nullopt iff it is not
// one or does not fit in T.
template <typename T>
std::optional<T> parse_number(std::string_view text) {
    text = trim(text);
    if (!text.empty() && text.front() == '+') {
        text.remove_prefix(1);
    }
    T value{};
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
        return std::nullopt;
    }
    return value;
}

// Returns `text` in lowercase ASCII.
inline std::string to_lower(std::string_view text) {
    std::string lower(text);
    for (char& c : lower) {
        if (c >= 'A' && c <= 'Z') {
            c = static_cast<char>(c - 'A' + 'a');
        }
    }
    return lower;
}

// Parses all of `document` (named `name` in errors) into `handler`, which must have a member
// `xml::PushParser* parser` that is set for the duration of the parse.
template <typename Handler>
Result<void> parse_xml_document(Handler& handler, std::string_view document,
                                std::string_view name) {
    xml::PushParser parser(handler, std::string(name));
    handler.parser = &parser;
    auto result = parser.feed(document);
    if (result) {
        result = parser.finish();
    }
    handler.parser = nullptr;
    return result;
}

}  // namespace rpmirror::metadata_detail
