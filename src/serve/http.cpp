// See http.hpp.
#include "serve/http.hpp"

#include <time.h>

#include <array>
#include <charconv>
#include <cstdio>

#include <fmt/core.h>

namespace rpmirror::serve {

namespace {

// `text` with control bytes and non-ASCII shown as \xNN, for messages.
std::string shown(std::string_view text) {
    std::string out;
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte < 0x20 || byte >= 0x7f) {
            out += fmt::format("\\x{:02x}", byte);
        } else {
            out += c;
        }
    }
    return out;
}

int hex_value(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

// One segment decoded; nullopt with `why` set iff it is refused.
std::optional<std::string> decode_segment(std::string_view raw, std::string& why) {
    std::string out;
    for (std::size_t i = 0; i < raw.size(); ++i) {
        char c = raw[i];
        if (c == '%') {
            const int high = i + 2 < raw.size() ? hex_value(raw[i + 1]) : -1;
            const int low = i + 2 < raw.size() ? hex_value(raw[i + 2]) : -1;
            if (high < 0 || low < 0) {
                why = "has a bad percent escape";
                return std::nullopt;
            }
            c = static_cast<char>(high * 16 + low);
            i += 2;
            if (c == '/') {
                why = "has an encoded '/'";
                return std::nullopt;
            }
        }
        const auto byte = static_cast<unsigned char>(c);
        if (byte == 0) {
            why = "contains a NUL byte";
            return std::nullopt;
        }
        if (byte < 0x20 || byte == 0x7f) {
            why = fmt::format("contains control character 0x{:02x}", byte);
            return std::nullopt;
        }
        if (c == '\\') {
            why = "contains a backslash";
            return std::nullopt;
        }
        out += c;
    }
    if (out.empty()) {
        why = "has an empty path segment";
        return std::nullopt;
    }
    if (out == "." || out == "..") {
        why = "has a '" + out + "' segment";
        return std::nullopt;
    }
    return out;
}

std::optional<std::uint64_t> parse_number(std::string_view text) {
    std::uint64_t value = 0;
    if (text.empty()) {
        return std::nullopt;
    }
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc{} || end != text.data() + text.size()) {
        return std::nullopt;
    }
    return value;
}

std::string_view trim(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) {
        text.remove_prefix(1);
    }
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) {
        text.remove_suffix(1);
    }
    return text;
}

// The opaque part of an entity tag, the weak prefix dropped (If-None-Match compares weakly).
std::string_view opaque(std::string_view tag) {
    tag = trim(tag);
    if (tag.starts_with("W/")) {
        tag.remove_prefix(2);
    }
    return tag;
}

}  // namespace

Result<RequestTarget> parse_request_path(std::string_view raw_path) {
    const std::string subject = "request path '" + shown(raw_path) + "'";
    if (!raw_path.starts_with('/')) {
        return make_error(ErrorCode::Unsafe, "does not start with '/'", subject);
    }
    std::string_view rest = raw_path.substr(1);
    RequestTarget target;
    bool first = true;
    while (true) {
        const std::size_t slash = rest.find('/');
        const std::string_view raw = rest.substr(0, slash);
        if (slash == std::string_view::npos && raw.empty() && !first) {
            break;  // a trailing '/': the directory itself
        }
        std::string why;
        auto segment = decode_segment(raw, why);
        if (!segment) {
            return make_error(ErrorCode::Unsafe, why, subject);
        }
        if (first) {
            target.job = std::move(*segment);
            first = false;
        } else {
            target.key += target.key.empty() ? "" : "/";
            target.key += *segment;
        }
        if (slash == std::string_view::npos) {
            break;
        }
        rest.remove_prefix(slash + 1);
    }
    return target;
}

RangeAnswer parse_range(std::optional<std::string_view> header, std::uint64_t size) {
    if (!header) {
        return {};
    }
    std::string_view text = trim(*header);
    if (!text.starts_with("bytes=")) {
        return {};
    }
    text = trim(text.substr(6));
    if (text.find(',') != std::string_view::npos) {
        return {};  // several ranges: the whole file is a valid answer
    }
    const std::size_t dash = text.find('-');
    if (dash == std::string_view::npos) {
        return {};
    }
    const std::string_view first_text = trim(text.substr(0, dash));
    const std::string_view last_text = trim(text.substr(dash + 1));
    if (first_text.empty()) {  // the last N bytes
        const auto suffix = parse_number(last_text);
        if (!suffix) {
            return {};
        }
        if (*suffix == 0 || size == 0) {
            return {RangeKind::Unsatisfiable, {}};
        }
        const std::uint64_t length = std::min(*suffix, size);
        return {RangeKind::Partial, {size - length, length}};
    }
    const auto first = parse_number(first_text);
    std::optional<std::uint64_t> last;
    if (!last_text.empty()) {
        last = parse_number(last_text);
        if (!last) {
            return {};
        }
    }
    if (!first || (last && *last < *first)) {
        return {};
    }
    if (*first >= size) {
        return {RangeKind::Unsatisfiable, {}};
    }
    const std::uint64_t end = last ? std::min(*last, size - 1) : size - 1;
    return {RangeKind::Partial, {*first, end - *first + 1}};
}

std::string http_date(std::int64_t seconds) {
    const time_t when = static_cast<time_t>(seconds);
    struct tm parts {};
    ::gmtime_r(&when, &parts);
    static constexpr std::array<const char*, 7> kDays{"Sun", "Mon", "Tue", "Wed",
                                                      "Thu", "Fri", "Sat"};
    static constexpr std::array<const char*, 12> kMonths{"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                         "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    return fmt::format("{}, {:02d} {} {:04d} {:02d}:{:02d}:{:02d} GMT", kDays[parts.tm_wday % 7],
                       parts.tm_mday, kMonths[parts.tm_mon % 12], parts.tm_year + 1900,
                       parts.tm_hour, parts.tm_min, parts.tm_sec);
}

std::optional<std::int64_t> parse_http_date(std::string_view text) {
    const std::string copy(trim(text));
    static constexpr std::array<const char*, 3> kFormats{
        "%a, %d %b %Y %H:%M:%S GMT", "%A, %d-%b-%y %H:%M:%S GMT", "%a %b %e %H:%M:%S %Y"};
    for (const char* format : kFormats) {
        struct tm parts {};
        const char* end = ::strptime(copy.c_str(), format, &parts);
        if (end != nullptr && *end == '\0') {
            return static_cast<std::int64_t>(::timegm(&parts));
        }
    }
    return std::nullopt;
}

bool not_modified(const Validators& validators, std::optional<std::string_view> if_none_match,
                  std::optional<std::string_view> if_modified_since) {
    if (if_none_match) {
        std::string_view list = *if_none_match;
        while (!list.empty()) {
            const std::size_t comma = list.find(',');
            const std::string_view tag = opaque(list.substr(0, comma));
            if (tag == "*" || (!validators.etag.empty() && tag == opaque(validators.etag))) {
                return true;
            }
            list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
        }
        return false;
    }
    if (if_modified_since && validators.last_modified > 0) {
        const auto since = parse_http_date(*if_modified_since);
        return since && validators.last_modified <= *since;
    }
    return false;
}

bool if_range_holds(const Validators& validators, std::optional<std::string_view> if_range) {
    if (!if_range) {
        return true;
    }
    const std::string_view value = trim(*if_range);
    if (value.starts_with('"')) {  // strong comparison
        return value == validators.etag;
    }
    const auto date = parse_http_date(value);
    return date && validators.last_modified > 0 && validators.last_modified <= *date;
}

}  // namespace rpmirror::serve
