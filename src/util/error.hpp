// The error codes' names behind rpmirror/util/error.hpp (for JSON reports).
#pragma once

#include <string_view>

#include "rpmirror/util/error.hpp"

namespace rpmirror {

// Returns the stable lowercase name of `code` ("not-found", "io", ...), for logs and JSON.
std::string_view error_code_name(ErrorCode code);

}  // namespace rpmirror
