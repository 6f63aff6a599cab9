#include "rpmirror/checksum/checksum_list.hpp"
#include "checksum/hasher.hpp"

#include <algorithm>
#include <cctype>

namespace rpmirror {

namespace {

// Undoes sha256sum's escaping. Returns nullopt iff an escape sequence is invalid.
std::optional<std::string> unescape_path(std::string_view escaped) {
    std::string path;
    path.reserve(escaped.size());
    for (std::size_t index = 0; index < escaped.size(); ++index) {
        if (escaped[index] != '\\') {
            path += escaped[index];
            continue;
        }
        if (++index == escaped.size()) {
            return std::nullopt;
        }
        switch (escaped[index]) {
            case '\\':
                path += '\\';
                break;
            case 'n':
                path += '\n';
                break;
            case 'r':
                path += '\r';
                break;
            default:
                return std::nullopt;
        }
    }
    return path;
}

// "SHA256 (path) = hex"
std::optional<ChecksumListEntry> parse_bsd_line(std::string_view line,
                                                std::optional<ChecksumType> forced_type) {
    const std::size_t open_paren = line.find(" (");
    const std::size_t close = line.rfind(") = ");
    if (open_paren == std::string_view::npos || close == std::string_view::npos ||
        close < open_paren + 2) {
        return std::nullopt;
    }
    auto type = parse_checksum_type(line.substr(0, open_paren));
    if (!type || (forced_type && *forced_type != *type)) {
        return std::nullopt;
    }
    const std::string_view hex = line.substr(close + 4);
    if (!is_valid_hex_digest(*type, hex)) {
        return std::nullopt;
    }
    return ChecksumListEntry{std::string(line.substr(open_paren + 2, close - open_paren - 2)),
                             *type, std::string(hex), 0};
}

// "<hex>  <path>" or "<hex> *<path>", optionally prefixed by '\' for an escaped path.
std::optional<ChecksumListEntry> parse_gnu_line(std::string_view line,
                                                std::optional<ChecksumType> forced_type) {
    const bool is_escaped = !line.empty() && line.front() == '\\';
    if (is_escaped) {
        line.remove_prefix(1);
    }
    const std::size_t space = line.find(' ');
    if (space == std::string_view::npos || space + 2 > line.size()) {
        return std::nullopt;
    }
    const std::string_view hex = line.substr(0, space);
    const char mode = line[space + 1];
    if (mode != ' ' && mode != '*') {
        return std::nullopt;
    }
    const std::optional<ChecksumType> type =
        forced_type ? forced_type : checksum_type_for_hex_length(hex.size());
    if (!type || !is_valid_hex_digest(*type, hex)) {
        return std::nullopt;
    }
    const std::string_view raw_path = line.substr(space + 2);
    std::optional<std::string> path =
        is_escaped ? unescape_path(raw_path) : std::optional<std::string>(raw_path);
    if (!path || path->empty()) {
        return std::nullopt;
    }
    return ChecksumListEntry{std::move(*path), *type, std::string(hex), 0};
}

}  // namespace

ChecksumList parse_checksum_list(std::string_view text, std::optional<ChecksumType> forced_type) {
    ChecksumList list;
    std::size_t line_number = 0;
    while (!text.empty()) {
        const std::size_t newline = text.find('\n');
        std::string_view line = text.substr(0, newline);
        text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
        ++line_number;
        if (!line.empty() && line.back() == '\r') {
            line.remove_suffix(1);
        }
        if (std::all_of(line.begin(), line.end(),
                        [](unsigned char c) { return std::isspace(c) != 0; })) {
            continue;
        }
        auto entry = parse_gnu_line(line, forced_type);
        if (!entry) {
            entry = parse_bsd_line(line, forced_type);
        }
        if (!entry) {
            ++list.malformed_line_count;
            continue;
        }
        entry->line_number = line_number;
        list.entries.push_back(std::move(*entry));
    }
    return list;
}

std::string escape_list_path(std::string_view path, bool& escaped) {
    escaped = path.find_first_of("\\\n") != std::string_view::npos;
    if (!escaped) {
        return std::string(path);
    }
    std::string result;
    result.reserve(path.size() + 8);
    for (const char c : path) {
        if (c == '\\') {
            result += "\\\\";
        } else if (c == '\n') {
            result += "\\n";
        } else {
            result += c;
        }
    }
    return result;
}

std::string format_checksum_line(std::string_view hex, std::string_view path) {
    bool escaped = false;
    std::string escaped_path = escape_list_path(path, escaped);
    std::string line;
    line.reserve(hex.size() + escaped_path.size() + 4);
    if (escaped) {
        line += '\\';
    }
    line += hex;
    line += "  ";
    line += escaped_path;
    line += '\n';
    return line;
}

}  // namespace rpmirror
