// Small text helpers shared by the metadata readers (private).
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "util/text.hpp"
#include "util/xml.hpp"

namespace rpmirror::metadata_detail {

using text::is_space;
using text::trim;

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

using text::to_lower;

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
