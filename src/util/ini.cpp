#include "util/ini.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>

#include <fmt/format.h>

#include "util/text.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror::ini {
namespace {

bool is_blank(char c) {
    return c == ' ' || c == '\t' || c == '\f' || c == '\v';
}

std::string_view strip(std::string_view text) {
    while (!text.empty() && (is_blank(text.front()) || text.front() == '\r')) {
        text.remove_prefix(1);
    }
    while (!text.empty() && (is_blank(text.back()) || text.back() == '\r')) {
        text.remove_suffix(1);
    }
    return text;
}

using text::to_lower;

tl::unexpected<Error> line_error(const std::string& file_name, std::size_t line,
                                 std::string detail) {
    return make_error(ErrorCode::BadInput, fmt::format("line {}: {}", line, detail), file_name);
}

// Removes the trailing blank lines a value collected before the next key (Python's rstrip()).
void finish_value(IniEntry* entry) {
    if (entry == nullptr) {
        return;
    }
    while (!entry->value.empty() &&
           (entry->value.back() == '\n' || is_blank(entry->value.back()))) {
        entry->value.pop_back();
    }
}

}  // namespace

Result<std::vector<IniSection>> parse_ini(std::string_view content, const std::string& file_name) {
    std::vector<IniSection> sections;
    if (content.starts_with("\xEF\xBB\xBF")) {  // a UTF-8 byte order mark
        content.remove_prefix(3);
    }
    IniEntry* current_entry = nullptr;  // the entry continuation lines extend
    std::size_t line_number = 0;
    while (!content.empty()) {
        ++line_number;
        const std::size_t newline = content.find('\n');
        std::string_view raw_line = content.substr(0, newline);
        content.remove_prefix(newline == std::string_view::npos ? content.size() : newline + 1);
        if (!raw_line.empty() && raw_line.back() == '\r') {
            raw_line.remove_suffix(1);
        }
        const std::string_view text = strip(raw_line);
        if (text.empty()) {
            if (current_entry != nullptr) {
                current_entry->value += '\n';  // kept iff a continuation line follows
            }
            continue;
        }
        if (text.front() == '#' || text.front() == ';') {
            continue;
        }
        const bool is_indented = is_blank(raw_line.front());
        if (is_indented && current_entry != nullptr) {
            if (!current_entry->value.empty()) {
                current_entry->value += '\n';
            }
            current_entry->value += text;
            continue;
        }
        finish_value(current_entry);
        current_entry = nullptr;
        if (text.front() == '[') {
            if (text.back() != ']' || text.size() < 3) {
                return line_error(file_name, line_number,
                                  fmt::format("malformed section header '{}'", text));
            }
            const std::string_view name = strip(text.substr(1, text.size() - 2));
            if (name.empty()) {
                return line_error(file_name, line_number,
                                  fmt::format("malformed section header '{}'", text));
            }
            sections.push_back(IniSection{std::string(name), line_number, {}});
            continue;
        }
        const std::size_t equals = text.find('=');
        if (equals == std::string_view::npos) {
            return line_error(file_name, line_number,
                              fmt::format("expected 'key=value', found '{}'", text));
        }
        const std::string_view key = strip(text.substr(0, equals));
        if (key.empty()) {
            return line_error(file_name, line_number,
                              fmt::format("missing key before '=' in '{}'", text));
        }
        if (sections.empty()) {
            return line_error(file_name, line_number,
                              fmt::format("key '{}' outside of any [section]", key));
        }
        sections.back().entries.push_back(IniEntry{to_lower(key),
                                                   std::string(strip(text.substr(equals + 1))),
                                                   line_number, std::string(key)});
        current_entry = &sections.back().entries.back();
    }
    finish_value(current_entry);
    return sections;
}

Result<std::string> read_text_file(const std::filesystem::path& path) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) {
        return make_errno_error("cannot open", path.string(), errno);
    }
    struct stat status {};
    if (::fstat(fd.get(), &status) != 0) {
        return make_errno_error("cannot stat", path.string(), errno);
    }
    if (!S_ISREG(status.st_mode)) {
        return make_error(ErrorCode::Io, "not a regular file", path.string());
    }
    std::string content;
    char buffer[16384];
    for (;;) {
        const ssize_t count = ::read(fd.get(), buffer, sizeof buffer);
        if (count < 0) {
            if (errno == EINTR) {
                continue;
            }
            return make_errno_error("cannot read", path.string(), errno);
        }
        if (count == 0) {
            break;
        }
        content.append(buffer, static_cast<std::size_t>(count));
    }
    return content;
}

}  // namespace rpmirror::ini
