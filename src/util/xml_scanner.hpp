// A byte-offset XML scanner: finds the markup in a buffer of createrepo_c-style metadata and
// reads a start tag's attributes, so that a rewrite can copy spans of the document byte for
// byte (util/xml.hpp's libxml2 push parser reports events, not where they are in the text).
// Text content never holds a raw '<' (it is escaped), so every '<' starts markup; comments,
// CDATA and processing instructions are skipped whole. Documents are assumed to have passed the
// XML parser already: this is no validator.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace rpmirror::xml_scan {

struct Markup {
    enum class Kind { Open, Close, Other } kind = Kind::Other;
    std::size_t begin = 0;  // offset of '<'
    std::size_t end = 0;    // offset just past '>'
    std::string_view name;  // element name with any prefix
    bool self_closing = false;
};

// Returns the markup starting at `at` (a '<'), or nullopt iff it is not complete in `text`.
std::optional<Markup> read_markup(std::string_view text, std::size_t at);

// Resolves the predefined entities and character references of an attribute value.
std::string unescape(std::string_view value);

// Escapes `text` for element content or an attribute value in either quotes: & < > " ' as
// the predefined entities.
std::string escape(std::string_view text);

// Returns the raw value of attribute `name` in the start tag `tag`, or nullopt.
// Also returns its offset within `tag` through `offset`.
std::optional<std::string_view> attribute(std::string_view tag, std::string_view name,
                                          std::size_t* offset = nullptr);

}  // namespace rpmirror::xml_scan
