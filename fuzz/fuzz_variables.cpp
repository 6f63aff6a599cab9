// Fuzzes dnf variable substitution ($name, ${name}, ${name:-word}, ${name:+word}, nested words),
// with undefined variables both fatal (URL keys) and kept (other values).
#include <cstddef>
#include <cstdint>

#include "config/repo_files.hpp"
#include "config/variables_internal.hpp"
#include "fuzz_support.hpp"
#include "rpmirror/config/config.hpp"

namespace {

rpmirror::VariableContext make_variables() {
    rpmirror::VariableContext vars;
    vars.values = {{"releasever", "9"}, {"basearch", "x86_64"}, {"arch", "x86_64"},
                   {"empty", ""},       {"dollar", "$"},        {"ref", "${releasever}"}};
    return vars;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const rpmirror::VariableContext vars = make_variables();
    const auto text = rpmirror::fuzz::as_text(data, size);

    auto strict = rpmirror::substitute_variables(text, vars);
    if (!strict)
        (void)strict.error().to_string();
    auto kept = rpmirror::config::substitute(text, vars, rpmirror::config::UndefinedPolicy::Keep);
    // Keep never fails (its contract), and agrees with Fail whenever Fail succeeds.
    if (!kept)
        __builtin_trap();
    if (strict && *strict != *kept)
        __builtin_trap();
    return 0;
}
