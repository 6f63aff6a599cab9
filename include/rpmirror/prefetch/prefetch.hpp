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

// The name of `repo`'s directory in dnf's cache, as libdnf 0.x names it: "<id>-<16 hex>", the hex
// being the first 8 bytes of the SHA-256 of its metalink, else its mirrorlist, else its first
// baseurl, else its id (after variable substitution). Thread-safe.
std::string dnf_cache_directory_name(const RepoConfig& repo);

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

struct PrefetchRequest {
    // The repositories dnf will read (enabled ones, as dnf selects them).
    std::vector<RepoConfig> repos;
    // dnf's cache directory (DnfMainSettings::cachedir): each repository's metadata goes to
    // <cachedir>/<dnf_cache_directory_name>/repodata/, its packages to .../packages/.
    std::filesystem::path cachedir;
    std::vector<std::string> packages;  // what dnf is asked to install
    // Comps groups dnf is asked to install (`@GROUP`: an id or a name): their mandatory and
    // default packages, those the repositories have. One that no repository's comps has, or that
    // names a module (dnf reads `@NAME` as a module first), leaves the prefetch out.
    std::vector<std::string> groups;
    std::filesystem::path installroot = "/";  // whose rpm database says what is installed
    std::string arch;                         // the machine's (--forcearch, else uname)
    bool weak_dependencies = true;            // dnf's install_weak_deps
    bool refresh = false;                     // refetch metadata even when dnf's copy is fresh
    // Metadata dnf keeps using without asking the server, as libdnf decides it: newer than
    // this (dnf's metadata_expire default, 48 h) and not listed in expired_repos.json.
    std::int64_t metadata_expire_seconds = 172'800;
    // Connections at once over all repositories (each may use them all when alone).
    unsigned parallel = 32;
    // Where each repository's sync keeps its state and locks while the prefetch runs (removed
    // at the end); empty = a temporary directory.
    std::filesystem::path state_dir;
};

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

// Prefetches for `request` (see the top of this file): metadata of every repository, each in its
// own thread, into dnf's cache unless dnf's copy is fresh (then it is used as it is); the
// dependency closure of `request.packages` solved with libsolv over those primaries on the
// installroot's rpm database (resolve_closure); each repository's share downloaded, verified and
// its checksum recorded where librepo reads it (user.Librepo.checksum.*), then moved into
// packages/. Never fails for what dnf would survive: every failure is a warning in the report
// and leaves dnf's cache as dnf would accept it (metadata replaced only as a whole, packages only
// complete and verified). Returns Error{Io} only iff the cache directory itself cannot be
// created, Error{Interrupted} iff `stop` was requested.
Result<PrefetchReport> prefetch_for_dnf(const PrefetchRequest& request, std::stop_token stop = {});

// `rpmirror exec --prefetch`'s prefetch of `install` (a parsed `dnf install`): the repositories
// dnf would use for it (its -c, --setopt, --releasever, --forcearch, -x, --disableexcludes,
// --repofrompath, --installroot and repository selection; the config stage's warnings are left
// to dnf, which reads the same files), dnf's main settings (cachedir, install_weak_deps), then
// prefetch_for_dnf. Returns the first error of the configuration or of the prefetch.
Result<PrefetchReport> prefetch_for_dnf_install(const DnfInstallCommand& install,
                                                std::stop_token stop = {});

}  // namespace rpmirror
