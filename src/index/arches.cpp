// The architecture names rpm knows, and --arch checked against them and the repository
// (index/index.hpp).
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "index/index.hpp"
#include "util/text.hpp"

#ifndef RPMIRROR_RPM_HOME
#define RPMIRROR_RPM_HOME "/usr/lib/rpm"
#endif

namespace rpmirror {

namespace {

// Every name rpm's rpmrc gives an architecture: the first field of its arch_canon, arch_compat
// and buildarch_compat lines ("arch_compat: x86_64: amd64 em64t athlon noarch"), and the names
// they map to. Empty iff the file cannot be read.
std::set<std::string> read_rpmrc_arches() {
    std::set<std::string> arches;
    std::ifstream rpmrc(std::string(RPMIRROR_RPM_HOME) + "/rpmrc");
    std::string line;
    while (std::getline(rpmrc, line)) {
        const std::size_t colon = line.find(':');
        if (colon == std::string::npos) {
            continue;
        }
        const std::string tag = std::string(text::trim(std::string_view(line).substr(0, colon)));
        if (tag != "arch_canon" && tag != "arch_compat" && tag != "buildarch_compat") {
            continue;
        }
        std::string rest = line.substr(colon + 1);
        const std::size_t second = rest.find(':');
        if (second == std::string::npos) {
            continue;
        }
        arches.emplace(text::trim(std::string_view(rest).substr(0, second)));
        if (tag == "arch_canon") {
            continue;  // "athlon: athlon 1": a name and a number
        }
        std::istringstream names(rest.substr(second + 1));
        for (std::string name; names >> name;) {
            arches.insert(name);
        }
    }
    arches.erase("");
    return arches;
}

}  // namespace

bool rpm_knows_arch(std::string_view arch) {
    static const std::set<std::string> known = read_rpmrc_arches();
    return arch == "noarch" || arch == "src" || arch == "nosrc" ||
           known.contains(std::string(arch));
}

Result<void> check_arches(const PackageIndex& index, const SelectionOptions& options,
                          std::string_view repo_id) {
    if (options.source_only || options.only_nevras || options.arches.empty()) {
        return {};
    }
    std::set<std::string, std::less<>> present;
    for (std::size_t position = 0; position < index.size(); ++position) {
        const std::string_view arch = index[position].arch;
        if (!present.contains(arch)) {
            present.emplace(arch);
        }
    }
    for (const std::string& arch : options.arches) {
        if (present.contains(arch) || rpm_knows_arch(arch)) {
            continue;
        }
        return make_error(ErrorCode::BadInput,
                          fmt::format("--arch {}: no such architecture: rpm does not know it and "
                                      "no package of the repository has it (it has: {}); "
                                      "nothing was changed",
                                      arch, fmt::join(present, ", ")),
                          std::string(repo_id));
    }
    return {};
}

}  // namespace rpmirror
