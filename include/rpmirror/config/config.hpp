// Repository configuration: reading dnf's `.repo` files, `-c/--config`, `--repofrompath` and
// `--setopt`, substituting dnf's variables ($releasever, $basearch, ${x:-word}, ...), and selecting
// the repositories a run mirrors (`--repo`).
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
//  read;
//    `--setopt GLOB.KEY=VALUE` overrides it in the repositories whose id matches GLOB (fnmatch).
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

#include "rpmirror/download/ip_resolve.hpp"
#include "rpmirror/util/error.hpp"

namespace rpmirror {

// Where a repository or a setting was defined: a file and a 1-based line, or a command-line option
// ("--repofrompath", "--setopt") with line 0.
struct ConfigLocation {
    std::string file;
    std::size_t line = 0;

    // Returns "file:line", or just "file" iff line is 0.
    std::string to_string() const;
};

enum class ConfigWarningKind {
    UnknownKey,    // a key dnf does not know either (probably a typo)
    IgnoredKey,    // a key dnf knows but rpmirror does not use (priority, metadata_expire, ...)
    DuplicateKey,  // a key given twice in one section; the later value wins (as in dnf)
    NoMatch,       // a `--setopt REPOID.KEY=VALUE` whose REPOID matched no repository
};

struct ConfigWarning {
    ConfigWarningKind kind;
    ConfigLocation where;
    std::string key;
    std::string message;  // complete sentence without the location

    // Returns "file:line: message".
    std::string to_string() const;
};

// One repository, every field typed and every variable already substituted.
// Defaults are dnf's (libdnf ConfigMain / ConfigRepo).
struct RepoConfig {
    std::string id;
    std::string name;                   // defaults to `id` when the file gives none
    std::vector<std::string> baseurls;  // tried in order
    std::optional<std::string> mirrorlist;
    std::optional<std::string> metalink;
    bool enabled = true;
    bool gpgcheck = false;
    bool repo_gpgcheck = false;
    std::vector<std::string> gpgkeys;
    bool sslverify = true;
    std::optional<std::string> sslcacert;
    std::optional<std::string> sslclientcert;
    std::optional<std::string> sslclientkey;
    // nullopt: not configured (libcurl's defaults, including the *_proxy environment variables).
    // Empty string: proxy explicitly disabled (`proxy=` or `proxy=_none_`), environment included.
    std::optional<std::string> proxy;
    std::optional<std::string> proxy_username;
    std::optional<std::string> proxy_password;
    // `proxy_auth_method`: any, none, basic, digest, negotiate, ntlm, digest_ie, ntlm_wb (dnf's
    // spellings, case-insensitive), kept lower-case.
    std::string proxy_auth_method = "any";
    // TLS towards an https proxy (proxy_sslverify, proxy_sslcacert, proxy_sslclientcert,
    // proxy_sslclientkey).
    bool proxy_sslverify = true;
    std::optional<std::string> proxy_sslcacert;
    std::optional<std::string> proxy_sslclientcert;
    std::optional<std::string> proxy_sslclientkey;
    bool sslverifystatus = false;  // OCSP stapling required (CURLOPT_SSL_VERIFYSTATUS)
    std::optional<std::string> username;
    std::optional<std::string> password;
    std::vector<std::string> includepkgs;  // globs; empty = everything
    // --with-dependencies: the repository's share of the dependency closure: exactly these
    // packages are mirrored. nullopt: no closure.
    std::optional<std::vector<std::string>> closure;
    // Directories holding records of the repository's current metadata, already verified (the
    // closure's fetch): a record found there with its size is copied, then verified as a
    // download, instead of downloaded.
    std::vector<std::filesystem::path> record_sources;
    std::vector<std::string> excludepkgs;  // globs; includes [main]'s excludepkgs
    // Unset unless the configuration sets them: dnf's defaults (3 and 3) would throttle
    // rpmirror's engine, which uses -j (default 16) and no per-mirror cap instead.
    std::optional<unsigned> max_parallel_downloads;    // 1..256 (dnf stops at 20)
    std::optional<unsigned> max_downloads_per_mirror;  // >= 1
    // `throttle`: at most one of the two is set; both unset means no limit (throttle=0).
    std::optional<std::uint64_t> throttle_bytes_per_second;
    std::optional<double>
        throttle_percent;  // (0, 100], a share of `bandwidth` (ignored without it)
    std::optional<std::uint64_t> bandwidth_bytes_per_second;  // unset iff bandwidth=0
    std::uint64_t minrate_bytes_per_second = 1000;
    std::uint32_t timeout_seconds = 30;
    std::uint32_t retries = 10;  // 0 = retry forever, as dnf
    std::optional<std::string> user_agent;
    IpResolve ip_resolve = IpResolve::Any;
    bool skip_if_unavailable = false;
    // dnf's choice between repositories offering a package (the dependency closure, the
    // prefetch): the lower `priority` (1..99) wins over a better version elsewhere, then the lower
    // `cost` between equal versions.
    int priority = 99;
    int cost = 1000;

    ConfigLocation defined_at;  // the [repoid] line, or "--repofrompath"
    // Where each key given a value got the one it has (the last line or --setopt that set it; a
    // [main] default's line in dnf.conf), by the key as written: what a message about a setting
    // names ("skip_if_unavailable=1 from /etc/dnf/dnf.conf:7").
    std::map<std::string, ConfigLocation, std::less<>> set_at;
};

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

// How the command line enables and disables repositories, as dnf 4 does it.
struct RepoSelection {
    // One --enablerepo/--disablerepo pattern (fnmatch glob; comma lists already split), in
    // command-line order.
    struct Toggle {
        bool enable = true;
        std::string pattern;
    };
    std::vector<Toggle> toggles;
    // --repo/--repoid: "disable every repository, then enable these", after the toggles (as
    // dnf reposync's configure() does after dnf applied them): with --repo, the toggles only
    // matter for their errors and warnings.
    std::vector<std::string> repo_patterns;
    // --source: after the above, every enabled repository R enables `R-source` (or
    // `X-source-rpms` for R = `X-rpms`), as dnf's enable_source_repos().
    bool enable_source_repos = false;
};

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

// Returns the byte count of "123", "1.5k", "2M", "1G" (binary multiples, case-insensitive, as
// dnf's size options), or nullopt iff `text` is not one.
std::optional<std::uint64_t> parse_byte_size(std::string_view text);

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

// Splits each of `values` as dnf splits a list option (at commas and whitespace), dropping empty
// items: {"a,b", "c"} is {"a", "b", "c"}.
std::vector<std::string> split_lists(std::span<const std::string> values);

// Where repository definitions come from as dnf's command line gives them (-c, --reposdir,
// --repofrompath, --setopt, --releasever, --basearch, --forcearch, --varsdir, -x,
// --disableexcludes, --installroot); every `rpmirror` command that reads .repo files takes them.
struct RepoSourceRequest {
    std::vector<std::string> repofrompath;
    std::string config_file;  // empty: dnf's default (beneath installroot)
    std::vector<std::string> reposdirs;
    std::vector<std::string> varsdirs;  // given: the host's directories, as dnf
    std::vector<std::string> setopts;
    // --releasever, in order. At most one for resolve_repo_sources; several only for `sync
    // --upstream-layout`, which resolves each release in turn.
    std::vector<std::string> releasevers;
    std::string basearch;
    std::string forcearch;                      // $arch, and $basearch from it
    std::vector<std::string> excludes;          // comma lists (split_lists)
    std::vector<std::string> disable_excludes;  // comma lists
    std::string installroot;                    // empty: "/"
};

// The absolute installroot of `request` ("/" when not given).
std::filesystem::path installroot_of(const RepoSourceRequest& request);

// The config stage's sources and variables as `request` gives them.
struct ResolvedSources {
    ConfigSources sources;
    VariableContext variables;
};

// Returns them; Error{BadInput} naming --forcearch iff its value is not an architecture name, or
// --releasever iff given more than once; variables_root's or make_variable_context's error.
Result<ResolvedSources> resolve_repo_sources(const RepoSourceRequest& request);

// Every repository `request`'s sources define (enabled or not): resolve_repo_sources, then
// load_repo_configs (findings appended to `warnings`); the first error of either.
Result<std::vector<RepoConfig>> load_repo_sources(const RepoSourceRequest& request,
                                                  std::vector<ConfigWarning>& warnings);

}  // namespace rpmirror
