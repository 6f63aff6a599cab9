// Small text helpers shared by the metadata readers (private).
#pragma once

#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "util/text.hpp"
#include "util/xml.hpp"

namespace rpmirror::metadata_detail {

using text::is_space;
using text::trim;

// Reads the number at the start of `text` the way librepo reads repomd.xml's and metalink's
// numbers (lr_xml_parser_strtoll, i.e. g_ascii_strtoll): leading whitespace, an optional sign,
// then digits up to the first other character, which ends the number and is not an error.
// "1355315696.84" (the yum-era Python createrepo wrote fractional timestamps) is 1355315696: the
// fraction is cut, as librepo cuts it, and whole seconds are what rpmirror keeps and writes back.
// Returns nullopt iff no digit is read ("", "abc"; librepo warns and stores 0 there), and a value
// beyond the range of int64 clamped as strtoll clamps it.
// One deliberate difference: librepo passes base 0, so "0x10" is 16 and "010" is octal 8 to it;
// here digits are decimal ("0x10" is 0, "010" is 10), as every repository tool writes them, and a
// zero-padded <size> must not become a size check that refuses the file.
inline std::optional<std::int64_t> parse_leading_integer(std::string_view text) {
    while (!text.empty() &&
           (is_space(text.front()) || text.front() == '\f' || text.front() == '\v')) {
        text.remove_prefix(1);
    }
    bool is_negative = false;
    if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
        is_negative = text.front() == '-';
        text.remove_prefix(1);
    }
    std::size_t digits = 0;
    while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') {
        ++digits;
    }
    if (digits == 0) {
        return std::nullopt;
    }
    std::uint64_t magnitude = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + digits, magnitude);
    (void)end;
    constexpr std::uint64_t kMaxPositive = std::numeric_limits<std::int64_t>::max();
    if (error == std::errc::result_out_of_range ||
        magnitude > kMaxPositive + (is_negative ? 1 : 0)) {
        return is_negative ? std::numeric_limits<std::int64_t>::min()
                           : std::numeric_limits<std::int64_t>::max();
    }
    if (is_negative) {
        return magnitude == kMaxPositive + 1 ? std::numeric_limits<std::int64_t>::min()
                                             : -static_cast<std::int64_t>(magnitude);
    }
    return static_cast<std::int64_t>(magnitude);
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
