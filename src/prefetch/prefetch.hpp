// The prefetch behind rpmirror/prefetch/prefetch.hpp's prefetch_for_dnf_install: the request it
// builds from dnf's command line and configuration, and where dnf's cache keeps a repository.
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

#include "rpmirror/prefetch/prefetch.hpp"

namespace rpmirror {

// The name of `repo`'s directory in dnf's cache, as libdnf 0.x names it: "<id>-<16 hex>", the hex
// being the first 8 bytes of the SHA-256 of its metalink, else its mirrorlist, else its first
// baseurl, else its id (after variable substitution). Thread-safe.
std::string dnf_cache_directory_name(const RepoConfig& repo);

struct PrefetchRequest {
    // The repositories dnf will read (enabled ones, as dnf selects them).
    std::vector<RepoConfig> repos;
    // dnf's cache directory ([main] cachedir): each repository's metadata goes to
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

// The connections each repository's package step may hold, out of `total`, for shares of
// `packages[i]` packages. Each repository keeps its own connections (those its metadata came
// over), so a small share that took many tokens first would leave the largest share to open new
// connections once they came back, late: the largest share (the first of equal ones) may use all
// `total`; every other one its part of them, at least min(its packages, 4) so that a few large
// files still go side by side; the budget hands the largest what the others leave.
std::vector<unsigned> package_step_connections(std::span<const std::size_t> packages,
                                               unsigned total);

// Prefetches for `request` (see the top of this file): metadata of every repository, each in its
// own thread, into dnf's cache unless dnf's copy is fresh (then it is used as it is); the
// dependency closure of `request.packages` solved with libsolv over those primaries on the
// installroot's rpm database (resolve_closure), from each primary as soon as it is verified,
// while the other records download; each repository's share downloaded, verified and
// its checksum recorded where librepo reads it (user.Librepo.checksum.*), then moved into
// packages/. Never fails for what dnf would survive: every failure is a warning in the report
// and leaves dnf's cache as dnf would accept it (metadata replaced only as a whole, packages only
// complete and verified). Returns Error{Io} only iff the cache directory itself cannot be
// created, Error{Interrupted} iff `stop` was requested.
Result<PrefetchReport> prefetch_for_dnf(const PrefetchRequest& request, std::stop_token stop = {});

}  // namespace rpmirror
