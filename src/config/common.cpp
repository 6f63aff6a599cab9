// What both configuration readers share (see config/common.hpp).
#include "config/common.hpp"

#include <utility>

#include <fmt/format.h>

namespace rpmirror::config {

tl::unexpected<Error> located_error(const ConfigLocation& where, std::string detail) {
    if (where.line > 0) {
        return make_error(ErrorCode::BadInput, fmt::format("line {}: {}", where.line, detail),
                          where.file);
    }
    return make_error(ErrorCode::BadInput, std::move(detail), where.file);
}

void warn(std::vector<ConfigWarning>& warnings, ConfigWarningKind kind, ConfigLocation where,
          std::string key, std::string message) {
    warnings.push_back(ConfigWarning{kind, std::move(where), std::move(key), std::move(message)});
}

Result<std::vector<IniSection>> read_ini_file(const std::filesystem::path& path) {
    auto content = read_text_file(path);
    if (!content) {
        return tl::unexpected(std::move(content.error()));
    }
    return parse_ini(*content, path.string());
}

}  // namespace rpmirror::config
