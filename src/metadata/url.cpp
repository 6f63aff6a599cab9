// Joining hrefs to mirror base URLs.
#include "rpmirror/metadata.hpp"

namespace rpmirror {

namespace {

bool is_unreserved_or_slash(unsigned char byte) {
    return (byte >= 'A' && byte <= 'Z') || (byte >= 'a' && byte <= 'z') ||
           (byte >= '0' && byte <= '9') || byte == '-' || byte == '.' || byte == '_' ||
           byte == '~' || byte == '/';
}

}  // namespace

std::string percent_encode_path(std::string_view text) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string encoded;
    encoded.reserve(text.size());
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (is_unreserved_or_slash(byte)) {
            encoded += c;
        } else {
            encoded += '%';
            encoded += kHex[byte >> 4];
            encoded += kHex[byte & 0x0f];
        }
    }
    return encoded;
}

std::string join_url(std::string_view base, std::string_view href, bool percent_encode) {
    while (!href.empty() && href.front() == '/') {
        href.remove_prefix(1);
    }
    if (base.empty()) {
        return percent_encode ? percent_encode_path(href) : std::string(href);
    }
    // Trailing slashes go, but never those of "scheme://" ("file:///" keeps "file://").
    const std::size_t scheme_end = base.find("://");
    const std::size_t keep = scheme_end == std::string_view::npos ? 0 : scheme_end + 3;
    while (base.size() > keep && base.back() == '/') {
        base.remove_suffix(1);
    }
    std::string joined(base);
    joined += '/';
    if (percent_encode) {
        joined += percent_encode_path(href);
    } else {
        joined += href;
    }
    return joined;
}

std::string_view pick_base_url(std::string_view mirror_base,
                               const std::optional<std::string>& xml_base) {
    if (xml_base && !xml_base->empty()) {
        return *xml_base;
    }
    return mirror_base;
}

}  // namespace rpmirror
