// Joining hrefs to mirror base URLs, and which URLs from upstream are accepted.
#include <cctype>

#include "metadata/metadata.hpp"

namespace rpmirror {

namespace {

bool is_unreserved_or_slash(unsigned char byte) {
    return (byte >= 'A' && byte <= 'Z') || (byte >= 'a' && byte <= 'z') ||
           (byte >= '0' && byte <= '9') || byte == '-' || byte == '.' || byte == '_' ||
           byte == '~' || byte == '/';
}

// Returns true iff `url` starts with `scheme` followed by "://", ignoring ASCII case.
bool has_scheme(std::string_view url, std::string_view scheme) {
    if (url.size() < scheme.size() + 3 || url.substr(scheme.size(), 3) != "://") {
        return false;
    }
    for (std::size_t index = 0; index < scheme.size(); ++index) {
        if (std::tolower(static_cast<unsigned char>(url[index])) != scheme[index]) {
            return false;
        }
    }
    return true;
}

}  // namespace

bool is_http_url(std::string_view url) {
    return has_scheme(url, "http") || has_scheme(url, "https");
}

Result<std::vector<std::string>> usable_listed_mirrors(const std::vector<std::string>& listed,
                                                       std::string_view list_url) {
    const bool users_own_file = has_scheme(list_url, "file");
    std::vector<std::string> usable;
    for (const std::string& url : listed) {
        if (has_scheme(url, "ftp") || has_scheme(url, "rsync")) {
            continue;
        }
        if (!is_http_url(url) && !users_own_file) {
            return make_error(ErrorCode::Unsafe,
                              "lists the mirror '" + url +
                                  "': only http and https URLs are accepted from an upstream "
                                  "mirror list; refused",
                              std::string(list_url));
        }
        usable.push_back(url);
    }
    return usable;
}

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
