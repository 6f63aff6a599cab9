// The report stage's own helpers behind rpmirror/report/report.hpp.
#pragma once

#include <string>

#include "rpmirror/report/report.hpp"

namespace rpmirror {

// Returns `bytes` as dnf's format_number does (1024 steps, e.g. "6.4 k", "3.0 M", "335  ").
std::string format_dnf_number(double number);

}  // namespace rpmirror
