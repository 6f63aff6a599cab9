// Output helpers shared by the subcommands.
#pragma once

#include <cstdio>
#include <fstream>
#include <string>

#include <fmt/core.h>

#include "rpmirror/util/error.hpp"

namespace rpmirror::cli {

// Prints "rpmirror: <error>" to stderr.
inline void print_error(const Error& error) {
    fmt::print(stderr, "rpmirror: {}\n", error.to_string());
}

// Writes a report (JSON) to `destination`: a file, or stdout iff it is "-".
// Returns false iff the file cannot be written.
inline bool write_report(const std::string& destination, const std::string& text) {
    if (destination == "-") {
        std::fwrite(text.data(), 1, text.size(), stdout);
        return true;
    }
    std::ofstream stream(destination, std::ios::binary | std::ios::trunc);
    stream << text;
    return static_cast<bool>(stream.flush());
}

}  // namespace rpmirror::cli
