// Prefetch for a launch-time `dnf install`: before dnf runs, the metadata of every repository it
// will read and the packages its transaction will need are fetched the way rpmirror fetches
// (repositories in parallel, many connections, hashed while they stream in) into dnf's own cache,
// where dnf finds them and only verifies and installs. dnf stays the installer: a prefetch that
// guesses wrong (a package dnf does not use, one it misses) costs time, never correctness, as dnf
// verifies whatever it finds in its cache and downloads whatever is not there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/config/config.hpp"
#include "rpmirror/util/error.hpp"

namespace rpmirror {

// A `dnf install` as its command line says it, the part of dnf's options a prefetch needs.
struct DnfInstallCommand {
    std::vector<std::string> packages;  // the specs after `install`, but groups
    std::vector<std::string> groups;    // "@GROUP" specs, without the '@'
    std::string installroot;            // --installroot ("" = "/")
    std::string config_file;            // -c/--config
    std::vector<std::string> setopts;   // --setopt KEY=VALUE
    std::vector<std::string> releasevers;
    std::string forcearch;
    std::vector<std::string> excludes;          // -x/--exclude/--excludepkgs
    std::vector<std::string> disable_excludes;  // --disableexcludes
    std::vector<std::string> repofrompath;
    RepoSelection selection;  // --repo/--repoid, --enablerepo, --disablerepo
    bool refresh = false;     // --refresh: metadata in the cache counts as expired
    bool quiet = false;       // -q
};

// Parses `argv` (the command and its arguments, argv[0] being "dnf", "dnf-3", "yum" or a path to
// one) as `dnf [OPTIONS] install|in [OPTIONS] SPEC...`. Returns the command; or, iff it is some
// other command or anything a prefetch cannot model (an option not known to be harmless to it,
// -C/--cacheonly, a local file or URL, an @^environment, a @module:stream or @module/profile
// spec), Error{Unsupported} saying which word it is and why: the caller then runs dnf without a
// prefetch. Thread-safe.
Result<DnfInstallCommand> parse_dnf_install_command(std::span<const std::string> argv);

struct PrefetchReport {
    std::filesystem::path cachedir;    // dnf's cache directory the prefetch filled
    std::size_t repositories = 0;      // whose metadata is in place (fetched or fresh)
    std::size_t metadata_fetched = 0;  // of those, fetched now
    std::size_t packages = 0;          // packages placed in dnf's cache
    std::uint64_t bytes = 0;           // their size
    // What went wrong without stopping anything ("repository X: ...", "cannot work out what dnf
    // installs: ..."): dnf then fetches that part itself.
    std::vector<std::string> warnings;
    double metadata_seconds = 0;
    double resolve_seconds = 0;
    double download_seconds = 0;
};

// `rpmirror exec --prefetch`'s prefetch of `install` (a parsed `dnf install`): the repositories
// dnf would use for it (its -c, --setopt, --releasever, --forcearch, -x, --disableexcludes,
// --repofrompath, --installroot and repository selection; the config stage's warnings are left
// to dnf, which reads the same files), dnf's main settings (cachedir, install_weak_deps), then
// the prefetch into dnf's cache. Returns the first error of the configuration or of the prefetch.
Result<PrefetchReport> prefetch_for_dnf_install(const DnfInstallCommand& install,
                                                std::stop_token stop = {});

}  // namespace rpmirror
