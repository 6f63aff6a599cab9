// `rpmirror sync` (alias `reposync`): its command line as parsed, shared by cli/sync.cpp and the
// dnf-mode output (cli/reposync_output.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "jobs.hpp"
#include "repo_options.hpp"
#include "s3_options.hpp"
#include "snapshot.hpp"
#include "unattended.hpp"

namespace rpmirror::cli {

struct SyncArgs {
    std::vector<std::string> repo_patterns;
    std::vector<std::string> enablerepo;   // --enablerepo, one value per occurrence
    std::vector<std::string> disablerepo;  // --disablerepo, one value per occurrence
    CLI::App* app = nullptr;               // for the order of --enablerepo/--disablerepo
    CLI::Option* enablerepo_option = nullptr;
    CLI::Option* disablerepo_option = nullptr;
    bool nogpgcheck = false;
    bool refresh = false;
    bool cacheonly = false;
    bool ipv4_only = false;  // -4
    bool ipv6_only = false;  // -6
    // dnf's global options that mean nothing to a mirror, accepted so that dnf command lines
    // (`dnf -y reposync ...` scripts) work unchanged.
    bool assume_yes = false;
    bool assume_no = false;
    bool no_plugins = false;
    std::vector<std::string> plugin_patterns;
    std::string debug_level;
    std::string error_level;
    std::string color;
    RepoSourceArgs sources;
    RunStateArgs state;
    std::string download_path = ".";
    bool norepopath = false;
    std::string metadata_path;
    S3Args s3;  // --s3-*: an s3:// download path
    bool download_metadata = false;
    bool upstream_metadata = false;
    bool publish_partial = false;
    std::string download_policy = "immediate";  // --download-policy
    std::optional<std::string> prefetch;        // --prefetch
    std::string sign_key;
    bool delete_unlisted = false;
    bool force_delete = false;
    bool newest_only = false;
    std::string keep_versions;  // --keep-versions N, read iff the option was given
    CLI::Option* keep_versions_option = nullptr;
    std::vector<std::string> arches;
    bool source = false;
    bool remote_time = false;
    bool download_comps = false;
    std::string safe_write_path;
    bool upstream_layout = false;  // --upstream-layout
    std::string mirror_url;        // --mirror-url
    unsigned keep_releases = 0;    // --keep-releases
    bool flatten_hrefs = false;    // --flatten-hrefs
    bool treeinfo = false;         // --treeinfo
    bool skip_bad_images = false;  // --skip-bad-images
    std::string dedupe = "hardlink";
    std::vector<std::string> dedupe_dirs;
    bool urls = false;
    std::string min_buildtime;
    std::vector<std::string> advisories;
    std::vector<std::string> advisory_severities;
    std::string as_of;
    std::vector<std::string> packages;       // --packages SPEC (repeatable, comma lists)
    std::string packages_file;               // --packages-file FILE
    bool with_dependencies = false;          // --with-dependencies
    bool no_weak_dependencies = false;       // --no-weak-dependencies
    std::string installed_base;              // --installed-base PATH
    std::vector<std::string> modules;        // --modules NAME:STREAM (repeatable, comma lists)
    std::vector<std::string> closure_repos;  // --closure-repos ID (repeatable, comma lists)
    bool gpgcheck = false;
    std::string gpgcheck_keys = "rpmdb";
    unsigned parallel = 0;
    unsigned connections_per_file = 1;                         // --connections-per-file
    std::uint64_t segment_min_size = std::uint64_t{64} << 20;  // --segment-min-size
    bool quiet = false;
    bool verbose = false;
    bool no_cache = false;
    std::string zchunk = "on";  // --zchunk
    std::string json_file;
    SyncSnapshotArgs snapshots;  // --snapshot[=NAME], --keep-snapshots, --snapshot-dir
    UnattendedArgs unattended;   // --metrics-file, --on-change
    JobModeArgs job_mode;        // --config-file, --job, --parallel-jobs, --max-per-host
};

}  // namespace rpmirror::cli
