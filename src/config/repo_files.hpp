// The .repo parser behind rpmirror/config/config.hpp: reading dnf's `.repo` files,
// `-c/--config`, `--repofrompath` and `--setopt`, substituting dnf's variables ($releasever,
// $basearch, ${x:-word}, ...), and selecting the repositories a run mirrors (`--repo`).
//
// The first stage of the pipeline: its output, a list of RepoConfig, tells the metadata stage where
// each repository lives (baseurl / mirrorlist / metalink, already variable-substituted) and the
// download stage how to reach it (TLS, proxy, credentials, limits).
//
// Semantics follow dnf 4 (libdnf's ConfigParser and ConfigRepo). Where dnf is silent or lenient
// rpmirror is explicit:
//  - Unknown keys produce a ConfigWarning (UnknownKey); keys dnf knows but rpmirror does not use
//    (priority, cost, metadata_expire, countme, ...) produce a ConfigWarning (IgnoredKey). Nothing
//    is dropped silently and nothing unknown is fatal.
//  - The [main] section of the `-c` config file supplies defaults for every repository (as dnf's
//    ConfigRepo inherits from ConfigMain) for these keys: gpgcheck, repo_gpgcheck, sslverify,
//    sslcacert, sslclientcert, sslclientkey, proxy, proxy_username, proxy_password, username,
//    password, excludepkgs/exclude (appended to each repo's list, as dnf applies both),
//    max_parallel_downloads, max_downloads_per_mirror, throttle, bandwidth, minrate, timeout,
//    retries, user_agent, ip_resolve, skip_if_unavailable; and `reposdir` (where `.repo` files are
//    read). Other dnf [main] keys are IgnoredKey warnings (includepkgs in [main], a global filter
//    in dnf, is one of them: set it per repo). A [main] section in a `.repo` file is ignored as dnf
//    ignores it, with one IgnoredKey warning.
//  - `--setopt KEY=VALUE` (no repo id) overrides KEY in every repository, after the files were
//    read; `--setopt GLOB.KEY=VALUE` overrides it in the repositories whose id matches GLOB
//    (fnmatch).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/config/config.hpp"

namespace rpmirror {

// The values dnf substitutes for `$name` in configuration values.
struct VariableContext {
    std::map<std::string, std::string, std::less<>> values;

    // Returns the value of `name`, or nullptr iff it is not defined.
    const std::string* find(std::string_view name) const;
};

struct VariableOptions {
    std::optional<std::string> releasever;  // --releasever
    std::optional<std::string> basearch;    // --basearch
    // Directories whose regular files define variables (file name = variable name, first line =
    // value); later directories win. Missing directories are skipped.
    std::vector<std::filesystem::path> varsdirs = {"/etc/yum/vars", "/etc/dnf/vars"};
    // The environment (for DNF_VAR_name and DNF0..DNF9); nullopt means the process's environ.
    std::optional<std::map<std::string, std::string>> environment;
    // The machine name `uname -m` reports; nullopt means ask uname(2).
    std::optional<std::string> machine;
};

// Builds the variables: detected defaults (arch = machine, basearch = dnf's base arch of it) <
// varsdirs < environment (DNF_VAR_name, DNF0..DNF9) < command line (releasever, basearch).
// releasever_major / releasever_minor are derived from the final releasever (split at the first
// '.'; minor is empty without one) and replace any other definition of them. releasever is never
// detected: without --releasever, a vars file or DNF_VAR_releasever it stays undefined.
// Returns Error{Io} naming the file iff a vars file exists but cannot be read.
// Thread-safe (reads environ only when `options.environment` is nullopt).
Result<VariableContext> make_variable_context(const VariableOptions& options);

// Returns dnf's base architecture for a machine name (i686 -> i386, armv7l -> armhfp, amd64 ->
// x86_64, ...); an unknown machine name is returned unchanged. Thread-safe.
std::string base_arch_for(std::string_view machine);

// Substitutes `$name`, `${name}`, `${name:-word}` and `${name:+word}` (bash semantics: `:-` uses
// word iff name is undefined or empty, `:+` uses word iff name is defined and non-empty; word may
// itself contain references). Names are [A-Za-z0-9_]+. A `$` not followed by a name or `{` is kept.
// Returns Error{BadInput} naming the variable iff a reference that must be evaluated is undefined,
// or iff a `${` is not closed or holds no valid name, or words nest deeper than 32 levels.
// Linear in the text's length. Thread-safe.
Result<std::string> substitute_variables(std::string_view text, const VariableContext& vars);

// Where repositories come from, as dnf: the main config file's repo sections, every `*.repo` in
// the repos directories (sorted by name), then `--repofrompath`; finally `--setopt` overrides.
struct ConfigSources {
    // -c/--config: read, and Error{NotFound} iff missing. When unset, `default_config_file` is read
    // iff it exists.
    std::optional<std::filesystem::path> config_file;
    std::optional<std::filesystem::path> default_config_file = "/etc/dnf/dnf.conf";
    // The repos directories; nullopt means the config file's [main] reposdir, else dnf's defaults
    // (/etc/yum.repos.d, /etc/yum/repos.d, /etc/distro.repos.d). `--setopt reposdir=A,B` beats
    // both. Directories that do not exist are skipped, as dnf does.
    std::optional<std::vector<std::filesystem::path>> reposdirs;
    std::vector<std::string> repofrompath;  // each "ID,URL-or-path"
    std::vector<std::string> setopts;       // each "KEY=VALUE" or "REPOID-GLOB.KEY=VALUE"
    // Base for relative --repofrompath paths; empty means the current directory.
    std::filesystem::path working_directory;
    // -x/--exclude/--excludepkgs: globs added to [main]'s excludepkgs (so to every repository's).
    std::vector<std::string> exclude_globs;
    // --disableexcludes (comma lists split): "all", "main" ([main]'s excludepkgs and -x) or repo
    // ids (that repository's own includepkgs and excludepkgs); replaces [main]'s
    // disable_excludes when not empty.
    std::vector<std::string> disable_excludes;
    // --installroot, as dnf 4: when it is not "/", `default_config_file` and the config file's
    // reposdir (or dnf's default reposdirs) are read beneath it when they exist there (a reposdir
    // list moves as a whole when any of its directories exists there); paths given on the
    // command line (config_file, reposdirs, --setopt reposdir=) are the host's.
    std::filesystem::path installroot = "/";
};

// Returns the root dnf 4 reads variable directories beneath for `sources`: its installroot iff the
// repos directories are read from there (see ConfigSources::installroot; always when they come
// from the command line), else "/". (dnf reads `varsdir` given on the command line from the host
// regardless: the caller does not prefix those.) Returns Error{Io} iff the config file exists
// but cannot be read. Thread-safe.
Result<std::filesystem::path> variables_root(const ConfigSources& sources);

// Reads every source and returns all repositories (enabled or not), in order: config file, repos
// directories (files sorted by name, sections in file order), --repofrompath; with [main] defaults,
// setopts and variables applied. Appends non-fatal findings to `warnings`.
// Returns Error{NotFound} iff -c names a missing file; Error{Io} iff a file or directory cannot be
// read; Error{BadInput} naming file and line iff a line is malformed, a value is invalid for its
// key (e.g. `enabled=maybe`), a repo id is invalid or defined twice (naming both places), a URL key
// (baseurl, mirrorlist, metalink, gpgkey) uses an undefined variable (naming variable, key, repo),
// a --repofrompath lacks its comma, a --setopt is malformed or names an unknown key, or a
// --disableexcludes value is neither all, main nor a valid repo id.
// Thread-safe if `warnings` is not shared.
Result<std::vector<RepoConfig>> load_repo_configs(const ConfigSources& sources,
                                                  const VariableContext& vars,
                                                  std::vector<ConfigWarning>& warnings);

// Reads one `.repo` (or dnf.conf-like) file and returns its repositories, without [main] defaults
// (a [main] section is ignored with a warning). Errors as load_repo_configs.
Result<std::vector<RepoConfig>> read_repo_file(const std::filesystem::path& path,
                                               const VariableContext& vars,
                                               std::vector<ConfigWarning>& warnings);

// Parses `content`, the text of one `.repo` file that messages call `shown`, as read_repo_file
// reads a file, with no variables defined (a `$name` in a URL key is an error). Errors as
// read_repo_file, naming `shown` and the line. Thread-safe.
Result<std::vector<RepoConfig>> read_repo_text(std::string_view content, const std::string& shown,
                                               std::vector<ConfigWarning>& warnings);

// The `[id]` section of a `.repo` file that read_repo_text reads back as `repo` (its values as
// they are, variables already substituted): every option rpmirror honours but its secrets,
// `password` and `proxy_password` and the password in a URL's user information
// (`https://user:SECRET@host/`, written `https://user@host/`), which are left out and named in
// `left_out` ("password", "proxy_password", "the password in baseurl"). Paths (sslclientkey,
// sslcacert) are kept: the files they name keep their own modes. Thread-safe.
std::string write_repo_section(const RepoConfig& repo, std::vector<std::string>& left_out);

// Parses one `--repofrompath ID,URL` argument (split at the first comma). A value without "://"
// is a local path and becomes a file:// URL of its absolute, lexically normalised form, relative
// paths resolved against `working_directory` (empty: the current directory). The repo is enabled,
// named ID, with gpgcheck off. Variables are not substituted here (load_repo_configs does).
// Returns Error{BadInput} naming the argument iff there is no comma, the ID is invalid or the URL
// is empty. Thread-safe.
Result<RepoConfig> repo_from_path(std::string_view id_comma_url,
                                  const std::filesystem::path& working_directory = {});

// Applies `--setopt` arguments to `repos` in order (later ones win): "KEY=VALUE" to every repo,
// "GLOB.KEY=VALUE" to repos whose id matches GLOB (fnmatch; the key is after the last '.').
// Values are variable-substituted and validated as in a file. `reposdir` is accepted and skipped
// (load_repo_configs uses it). A GLOB matching no repo is a NoMatch warning; a key dnf knows but
// rpmirror ignores is an IgnoredKey warning.
// Returns Error{BadInput} naming the argument iff it has no '=', the key is unknown, or the value
// is invalid; `repos` may then be partly modified. Thread-safe if the arguments are not shared.
Result<void> apply_setopts(std::vector<RepoConfig>& repos, std::span<const std::string> setopts,
                           const VariableContext& vars, std::vector<ConfigWarning>& warnings);

// Chooses the repositories to mirror. Without patterns: the enabled ones. With patterns
// (--repo/--repoid, fnmatch globs): every repo matching any pattern, enabled regardless of its
// `enabled=` (as `dnf reposync --repo`), all others dropped. Order is kept.
// Returns Error{BadInput} naming the pattern iff a pattern matches no repository, or naming the
// repo and where it was defined iff a selected repo has no baseurl, mirrorlist or metalink.
// Thread-safe.
Result<std::vector<RepoConfig>> select_repos(std::vector<RepoConfig> repos,
                                             std::span<const std::string> patterns);

// Chooses the repositories to mirror as dnf 4 reposync does: starting from each repository's
// `enabled=`, applies in order the toggles, then iff --repo was given "*" disabled and the --repo
// patterns enabled, then --source's `-source` repositories; returns the enabled ones in
// configuration order (their `enabled` set to true). Without --repo, repositories from
// --repofrompath are enabled after the toggles (dnf never lets --disablerepo disable them). Returns
// Error{BadInput} "Unknown repo: 'PATTERN'" naming the option iff an enabling pattern
// (--repo, --enablerepo) matches no repository; a --disablerepo pattern matching none is a
// NoMatch warning ("No repository match: PATTERN"). Error{BadInput} naming the repo and where it
// was defined iff a selected repo has no baseurl, mirrorlist or metalink. Thread-safe if
// `warnings` is not shared.
Result<std::vector<RepoConfig>> select_repos(std::vector<RepoConfig> repos,
                                             const RepoSelection& selection,
                                             std::vector<ConfigWarning>& warnings);

// Returns true iff `id` is a valid repo id: non-empty, only [A-Za-z0-9-_.:], and not "." or "..".
// (dnf's rule, plus the two names that would escape the download directory.) Thread-safe.
bool is_valid_repo_id(std::string_view id);

// Parses a dnf boolean: 1/0, yes/no, true/false, on/off, case-insensitive. Returns nullopt iff
// `text` is none of them. Thread-safe.
std::optional<bool> parse_config_bool(std::string_view text);

// Reads a --packages-file (a job's packages-file): package specs separated by whitespace or
// newlines, `#` starting a comment to the end of its line. Returns Error{Io} naming the file iff
// it cannot be read, Error{BadInput} naming it iff it holds no spec.
Result<std::vector<std::string>> read_package_list(const std::filesystem::path& path);

// What dnf 4's [main] says about where it keeps its cache and what it installs, for a prefetch
// into that cache (rpmirror/prefetch/prefetch.hpp).
struct DnfMainSettings {
    // Where dnf keeps each repository's metadata and packages: `--setopt cachedir=` as it is,
    // else [main] cachedir (default /var/cache/dnf) beneath `sources.installroot` when that is
    // not "/" (dnf 4 prepends the installroot to the configured value, then applies --setopt).
    std::filesystem::path cachedir;
    bool install_weak_deps = true;  // [main] install_weak_deps (--setopt wins)
};

// Reads `sources`' config file (as load_repo_configs chooses it) and --setopt arguments for
// DnfMainSettings. Returns Error{BadInput} naming the file and line (or the --setopt) iff a value
// is not a path or a boolean, Error{Io} iff the config file cannot be read; a missing default
// config file gives dnf's defaults. Thread-safe.
Result<DnfMainSettings> load_dnf_main_settings(const ConfigSources& sources,
                                               const VariableContext& vars);

// The config stage's sources and variables as `request` gives them.
struct ResolvedSources {
    ConfigSources sources;
    VariableContext variables;
};

// Returns them; Error{BadInput} naming --forcearch iff its value is not an architecture name, or
// --releasever iff given more than once; variables_root's or make_variable_context's error.
Result<ResolvedSources> resolve_repo_sources(const RepoSourceRequest& request);

}  // namespace rpmirror
