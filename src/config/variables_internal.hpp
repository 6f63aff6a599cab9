// Variable substitution with a choice of what happens to undefined variables, shared by the
// public substitute_variables() and the repo-file loader.
#pragma once

#include <string>
#include <string_view>

#include <tl/expected.hpp>

#include "config/repo_files.hpp"
#include "rpmirror/config/config.hpp"

namespace rpmirror::config {

enum class UndefinedPolicy {
    Fail,  // an undefined variable (or a malformed `${`) is an error: URL keys
    Keep,  // kept literally, as dnf does for every other value
};

struct SubstitutionFailure {
    std::string variable;  // the undefined variable's name; empty for a malformed reference
    std::string detail;    // what was wrong, for messages
};

// Substitutes every reference in `text` (see substitute_variables() for the syntax). With Keep,
// never fails. Thread-safe.
tl::expected<std::string, SubstitutionFailure> substitute(std::string_view text,
                                                          const VariableContext& vars,
                                                          UndefinedPolicy policy);

}  // namespace rpmirror::config
