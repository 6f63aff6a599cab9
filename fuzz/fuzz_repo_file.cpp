// Fuzzes the `.repo` reader: dnf's INI dialect, every repo option's value parser and the variable
// substitution applied to values (read_repo_file, the path load_repo_configs takes per file).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "config/repo_files.hpp"
#include "fuzz_support.hpp"
#include "rpmirror/config/config.hpp"

namespace {

rpmirror::VariableContext make_variables() {
    rpmirror::VariableContext vars;
    vars.values = {{"releasever", "9"},    {"releasever_major", "9"}, {"releasever_minor", ""},
                   {"basearch", "x86_64"}, {"arch", "x86_64"},        {"contentdir", "pub"}};
    return vars;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const rpmirror::VariableContext vars = make_variables();
    static rpmirror::fuzz::MemoryFile file;
    file.assign(data, size);

    std::vector<rpmirror::ConfigWarning> warnings;
    auto repos = rpmirror::read_repo_file(file.path(), vars, warnings);
    for (const auto& warning : warnings)
        (void)warning.to_string();
    if (!repos) {
        (void)repos.error().to_string();
        return 0;
    }
    for (const auto& repo : *repos) {
        // The reader's contract: every repo it returns has a valid id.
        if (!rpmirror::is_valid_repo_id(repo.id))
            __builtin_trap();
        (void)repo.defined_at.to_string();
    }
    // Selection and --setopt run on what the reader returned.
    const std::vector<std::string> setopts = {"*.enabled=1", "retries=3"};
    (void)rpmirror::apply_setopts(*repos, setopts, vars, warnings);
    (void)rpmirror::select_repos(*repos, {});
    return 0;
}
