// What both configuration readers share — dnf's .repo/dnf.conf reader (load.cpp) and the jobs
// file reader (jobs.cpp): errors located at a file and line, warnings, reading an INI file.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/config/config.hpp"
#include "rpmirror/util/error.hpp"
#include "util/ini.hpp"

namespace rpmirror::config {

// The INI reader (util/ini.hpp) every configuration file is read with.
using ini::IniEntry;
using ini::IniSection;
using ini::parse_ini;
using ini::read_text_file;

// The section of global options: dnf.conf's [main], the jobs file's [main].
inline constexpr std::string_view kMainSection = "main";

// Error{BadInput} with subject `where.file` and the message "line N: `detail`" ("`detail`"
// alone iff the line is 0: the whole file, or a command-line option).
tl::unexpected<Error> located_error(const ConfigLocation& where, std::string detail);

// Appends one warning.
void warn(std::vector<ConfigWarning>& warnings, ConfigWarningKind kind, ConfigLocation where,
          std::string key, std::string message);

// Reads and parses the INI file at `path` (errors as read_text_file and parse_ini).
Result<std::vector<IniSection>> read_ini_file(const std::filesystem::path& path);

}  // namespace rpmirror::config
