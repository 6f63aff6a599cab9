// Dependency closure: the packages a list of package specs needs to install on a machine, drawn
// from several repositories, solved with libsolv (the solver dnf itself uses) over the
// repositories' primary metadata. A partial mirror made of exactly these packages installs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "index/index.hpp"
#include "rpmirror/config/config.hpp"
#include "rpmirror/index/updateinfo.hpp"
#include "rpmirror/util/error.hpp"

namespace rpmirror {

// One repository the closure may draw from: its id and its primary.xml (any compression
// libsolv's solv_xfopen reads: gz, xz, zstd, bz2), as its repomd.xml lists it.
struct ClosureRepo {
    std::string id;
    std::filesystem::path primary;
    int priority = 99;  // dnf's: the lower wins over a better version elsewhere
    int cost = 1000;    // dnf's: the lower wins between equal versions
    // Its modules.yaml (any compression), when it lists one: empty for a repository without
    // modules.
    std::filesystem::path modules = {};
};

struct ClosureRequest {
    // Package specs as dnf's install takes them: a name, a glob over names, name.arch,
    // name-version[-release][.arch], or a provide ("/usr/bin/foo", "libfoo.so.1()(64bit)").
    std::vector<std::string> packages;
    // Package names installed as well when the repositories have them (a comps group's
    // mandatory and default packages, which dnf skips when no repository has them): one no
    // repository has is left out without an error.
    std::vector<std::string> optional_packages;
    // The machines' architecture: what they can install (its compatible arches and noarch).
    std::string arch;
    // Weak dependencies as dnf installs them by default: Recommends and Supplements yes (off:
    // none); Suggests never.
    bool weak_dependencies = true;
    // What the machines already have, which the closure leaves out (with whatever it provides):
    // empty for an empty machine; a directory: an installroot, whose rpm database is read whole
    // ("/" for this machine's: every package with all it provides, as dnf reads it); a file:
    // NEVRAs one per line as `rpm -qa` prints them (name-[epoch:]version-release.arch; blank
    // lines and # comments skipped), where a NEVRA the repositories have counts with everything
    // it provides there, and one they lack provides only itself.
    std::filesystem::path installed_base;
    // --keep-versions N (1: the closure of the best candidates only): besides, the N newest
    // versions of every name.arch the closure holds, each with a closure of its own (that
    // version installed on the base, its dependencies chosen as dnf would), until no new
    // name.arch comes in. So an older kept version installs from the mirror too.
    std::uint32_t keep_versions = 1;
    // --advisories/--advisory-severity: the packages the selected advisories list (of the
    // repositories' updateinfo, issued by built_by when given) are what is installed, each alone,
    // instead of `packages`; with `packages` too, only those that a spec selects. A listed
    // package the repositories lack or the arch cannot install is skipped; one that cannot be
    // installed is left out with a warning (Closure::left_out).
    AdvisoryFilter advisories;
    // Filled by assign_closure from the repositories' updateinfo: the selected advisories'
    // packages, as closure_nevra gives them.
    std::vector<std::string> advised_nevras;
    // `modules = NAME:STREAM ...`: the module streams the machines enable, besides each other
    // module's default stream. As dnf filters modular packages: a module stream's packages are
    // candidates iff the stream is enabled or its module's default; a package that is not
    // modular is no candidate when an active stream has a package of its name.
    std::vector<std::string> modules;
    // --as-of: a package built after this (seconds since the epoch) is no candidate, as if the
    // repositories stood as they did then.
    std::optional<std::int64_t> built_by;
    // A mirror's closure (true): each selected package's installation alone too, as a machine
    // that installs only it would choose. false: the installation of all of them together only,
    // as one `dnf install` makes it (the boot-install prefetch).
    bool each_alone = true;
};

struct Closure {
    // Per repository id, the NEVRAs ("name-epoch:version-release.arch") of the packages the
    // closure takes from it; every repository given has an entry (empty when it contributes
    // nothing).
    std::map<std::string, std::set<std::string>> shares;
    // What to warn about: older kept versions (keep_versions > 1) whose own closure cannot be
    // solved, so left out ("NEVRA (a kept older version) cannot be installed: WHY"); listed
    // packages that each install alone but conflict with each other ("the packages cannot all
    // be installed on one machine ...: WHY").
    std::vector<std::string> left_out;
};

// Solves, on a machine of `request.arch` that has `request.installed_base` (or nothing), over
// `repos`, the installation of each package `request.packages` selects alone (as a machine
// installing only it would, and as `dnf download --resolve` does; unless !request.each_alone)
// and of all of them together,
// choosing among candidates as dnf does (libsolv's policy: best version and arch, then the
// repository given first), and with keep_versions > 1 the older versions' closures too. Returns
// the union of the packages installed, each in the repository it comes from: so where
// alternatives provide one thing, every package's own choice is there. Returns Error{BadInput}
// naming the spec and the repositories searched iff a spec matches nothing, or naming the filter
// iff the advisories select no package to install, or naming the spec
// and each unresolvable dependency (libsolv's description of the problem: the package and what
// nothing provides) iff a package cannot be installed alone, or naming the stream iff a stream of
// `request.modules` is in no modules.yaml or two name one module, or naming the file and line iff
// the installed base is no NEVRA list; Error{Io} naming the file iff a primary or the installed
// base cannot be read; Error{Interrupted} iff `stop` is requested between two solves. Packages that
// install alone but not together are a Closure::left_out warning (with !request.each_alone, an
// error naming libsolv's problems).
Result<Closure> resolve_closure(std::span<const ClosureRepo> repos, const ClosureRequest& request,
                                std::stop_token stop = {});

// The request of a sync's closure: `packages`, what the machines have, whether they take weak
// dependencies and the module streams they enable; from `selection`, the arch (closure_arch), the
// versions kept (closure_keep_versions), --as-of and the advisory filter.
ClosureRequest closure_request(std::vector<std::string> packages, const SelectionOptions& selection,
                               bool weak_dependencies, std::filesystem::path installed_base,
                               std::vector<std::string> modules = {});

// The versions per name.arch a closure keeps (ClosureRequest::keep_versions): --keep-versions N
// (-n: 1), or 1 without -n (the closure picks each package's version).
std::uint32_t closure_keep_versions(const SelectionOptions& selection);

// The architecture a closure is solved for: the first of `arches` (-a) that a machine runs (not
// noarch, not src), else this machine's (uname).
std::string closure_arch(const std::vector<std::string>& arches);

}  // namespace rpmirror
