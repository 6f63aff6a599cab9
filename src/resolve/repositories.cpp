// The request of a sync's closure from its selection (resolve/resolve.hpp).
#include <sys/utsname.h>

#include <string>
#include <vector>

#include "resolve/resolve.hpp"

namespace rpmirror {

ClosureRequest closure_request(std::vector<std::string> packages, const SelectionOptions& selection,
                               bool weak_dependencies, std::filesystem::path installed_base,
                               std::vector<std::string> modules) {
    ClosureRequest request;
    request.modules = std::move(modules);
    request.packages = std::move(packages);
    request.arch = closure_arch(selection.arches);
    request.weak_dependencies = weak_dependencies;
    request.installed_base = std::move(installed_base);
    request.keep_versions = closure_keep_versions(selection);
    request.built_by = selection.as_of;
    request.advisories = selection.advisories;
    return request;
}

std::uint32_t closure_keep_versions(const SelectionOptions& selection) {
    return selection.newest_only ? std::max<std::uint32_t>(selection.keep_versions, 1) : 1;
}

std::string closure_arch(const std::vector<std::string>& arches) {
    for (const std::string& arch : arches) {
        if (arch != "noarch" && arch != "src" && arch != "nosrc") {
            return arch;
        }
    }
    struct utsname names {};
    return ::uname(&names) == 0 ? std::string(names.machine) : std::string("x86_64");
}

}  // namespace rpmirror
