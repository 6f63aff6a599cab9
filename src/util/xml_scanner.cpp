// The byte-offset XML scanner of util/xml_scanner.hpp (markup, attributes, entities).
#include "util/xml_scanner.hpp"

#include <cstdlib>
#include <cstring>

namespace rpmirror::xml_scan {

std::optional<Markup> read_markup(std::string_view text, std::size_t at) {
    Markup markup;
    markup.begin = at;
    const std::string_view rest = text.substr(at);
    const auto skip_to = [&](std::string_view terminator) -> std::optional<Markup> {
        const std::size_t found = rest.find(terminator, 1);
        if (found == std::string_view::npos) {
            return std::nullopt;
        }
        markup.end = at + found + terminator.size();
        return markup;
    };
    if (rest.starts_with("<!--")) {
        return skip_to("-->");
    }
    if (rest.starts_with("<![CDATA[")) {
        return skip_to("]]>");
    }
    if (rest.size() < 2) {
        return std::nullopt;
    }
    if (rest[1] == '?') {
        return skip_to("?>");
    }
    if (rest[1] == '!') {
        return skip_to(">");  // a DOCTYPE (the XML parser has vetted upstream's documents)
    }
    std::size_t name_begin = 1;
    markup.kind = Markup::Kind::Open;
    if (rest[1] == '/') {
        markup.kind = Markup::Kind::Close;
        name_begin = 2;
    }
    // Attribute values may hold '>': find the end outside quotes.
    char quote = 0;
    for (std::size_t i = name_begin; i < rest.size(); ++i) {
        const char c = rest[i];
        if (quote != 0) {
            if (c == quote) {
                quote = 0;
            }
        } else if (c == '"' || c == '\'') {
            quote = c;
        } else if (c == '>') {
            markup.end = at + i + 1;
            markup.self_closing = rest[i - 1] == '/';
            std::size_t name_end = name_begin;
            while (name_end < i && std::strchr(" \t\r\n/>", rest[name_end]) == nullptr) {
                ++name_end;
            }
            markup.name = rest.substr(name_begin, name_end - name_begin);
            return markup;
        }
    }
    return std::nullopt;
}

std::string escape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            case '\'':
                out += "&apos;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

std::string unescape(std::string_view value) {
    std::string out;
    out.reserve(value.size());
    for (std::size_t i = 0; i < value.size(); ++i) {
        if (value[i] != '&') {
            out += value[i];
            continue;
        }
        const std::size_t semicolon = value.find(';', i);
        if (semicolon == std::string_view::npos) {
            out += value.substr(i);
            break;
        }
        const std::string_view entity = value.substr(i + 1, semicolon - i - 1);
        if (entity == "amp") {
            out += '&';
        } else if (entity == "lt") {
            out += '<';
        } else if (entity == "gt") {
            out += '>';
        } else if (entity == "quot") {
            out += '"';
        } else if (entity == "apos") {
            out += '\'';
        } else if (entity.starts_with('#')) {
            const bool hex = entity.size() > 1 && (entity[1] == 'x' || entity[1] == 'X');
            const std::string digits(entity.substr(hex ? 2 : 1));
            const unsigned long code = std::strtoul(digits.c_str(), nullptr, hex ? 16 : 10);
            if (code < 0x80) {
                out += static_cast<char>(code);
            } else if (code < 0x800) {
                out += static_cast<char>(0xc0 | (code >> 6));
                out += static_cast<char>(0x80 | (code & 0x3f));
            } else if (code < 0x10000) {
                out += static_cast<char>(0xe0 | (code >> 12));
                out += static_cast<char>(0x80 | ((code >> 6) & 0x3f));
                out += static_cast<char>(0x80 | (code & 0x3f));
            } else {
                out += static_cast<char>(0xf0 | (code >> 18));
                out += static_cast<char>(0x80 | ((code >> 12) & 0x3f));
                out += static_cast<char>(0x80 | ((code >> 6) & 0x3f));
                out += static_cast<char>(0x80 | (code & 0x3f));
            }
        } else {
            out += value.substr(i, semicolon - i + 1);
        }
        i = semicolon;
    }
    return out;
}

std::optional<std::string_view> attribute(std::string_view tag, std::string_view name,
                                          std::size_t* offset) {
    std::size_t i = 1;
    while (i < tag.size() && std::strchr(" \t\r\n/>", tag[i]) == nullptr) {
        ++i;
    }
    while (i < tag.size()) {
        while (i < tag.size() && std::strchr(" \t\r\n", tag[i]) != nullptr) {
            ++i;
        }
        const std::size_t name_begin = i;
        while (i < tag.size() && std::strchr(" \t\r\n=/>", tag[i]) == nullptr) {
            ++i;
        }
        const std::string_view attr_name = tag.substr(name_begin, i - name_begin);
        while (i < tag.size() && std::strchr(" \t\r\n", tag[i]) != nullptr) {
            ++i;
        }
        if (i >= tag.size() || tag[i] != '=') {
            if (attr_name.empty()) {
                return std::nullopt;
            }
            continue;
        }
        ++i;
        while (i < tag.size() && std::strchr(" \t\r\n", tag[i]) != nullptr) {
            ++i;
        }
        if (i >= tag.size() || (tag[i] != '"' && tag[i] != '\'')) {
            return std::nullopt;
        }
        const char quote = tag[i++];
        const std::size_t value_begin = i;
        const std::size_t value_end = tag.find(quote, i);
        if (value_end == std::string_view::npos) {
            return std::nullopt;
        }
        if (attr_name == name) {
            if (offset != nullptr) {
                *offset = value_begin;
            }
            return tag.substr(value_begin, value_end - value_begin);
        }
        i = value_end + 1;
    }
    return std::nullopt;
}

}  // namespace rpmirror::xml_scan
