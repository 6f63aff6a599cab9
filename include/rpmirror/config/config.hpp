// Repository configuration as dnf 4 reads it: the repositories (RepoConfig) that `.repo` files,
// -c/--config, --repofrompath and --setopt define, variables substituted, and the options that
// choose which ones a run mirrors. Unknown or ignored keys are warnings (ConfigWarning), never
// dropped silently and never fatal.
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

// Returns the byte count of "123", "1.5k", "2M", "1G" (binary multiples, case-insensitive, as
// dnf's size options), or nullopt iff `text` is not one.
std::optional<std::uint64_t> parse_byte_size(std::string_view text);

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
    // --releasever, in order. At most one for load_repo_sources; several only for `sync
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

// Every repository `request`'s sources define (enabled or not), in dnf's order: the config file,
// the repos directories (files sorted by name), --repofrompath; [main] defaults, --setopt and
// variables applied, findings appended to `warnings`. Returns Error{NotFound} iff -c names a
// missing file, Error{Io} iff a file cannot be read, Error{BadInput} naming the file and line (or
// the option) iff a line, value, repo id or option is invalid.
Result<std::vector<RepoConfig>> load_repo_sources(const RepoSourceRequest& request,
                                                  std::vector<ConfigWarning>& warnings);

}  // namespace rpmirror
