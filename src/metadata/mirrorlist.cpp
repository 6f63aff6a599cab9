// Mirrorlists: one base URL a line (see src/metadata/metadata.hpp).
#include "metadata/metadata.hpp"
#include "metadata/text.hpp"

namespace rpmirror {

Result<std::vector<std::string>> parse_mirrorlist(std::string_view text, std::string_view name) {
    // A UTF-8 byte order mark (a list saved by an editor) is not part of the first URL. librepo
    // keeps it there, and that mirror then fails; rpmirror would refuse the list as naming a
    // URL of another scheme.
    if (text.starts_with("\xEF\xBB\xBF")) {
        text.remove_prefix(3);
    }
    std::vector<std::string> urls;
    while (!text.empty()) {
        const std::size_t newline = text.find('\n');
        std::string_view line = text.substr(0, newline);
        text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
        // A NUL ends the line's text, as in librepo (C strings): nothing after it is a URL.
        line = line.substr(0, line.find('\0'));
        line = metadata_detail::trim(line);
        if (line.empty() || line.front() == '#') {
            continue;
        }
        if (line.find("://") != std::string_view::npos || line.front() == '/') {
            urls.emplace_back(line);
        }
    }
    if (urls.empty()) {
        return make_error(ErrorCode::BadInput,
                          "mirrorlist " + std::string(name) + " lists no mirrors",
                          std::string(name));
    }
    return urls;
}

}  // namespace rpmirror
