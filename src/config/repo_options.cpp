#include "config/repo_options.hpp"
#include "config/repo_files.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

#include <fmt/format.h>

namespace rpmirror {

std::optional<bool> parse_config_bool(std::string_view text) {
    const std::string lowered = text::to_lower(text);
    if (lowered == "1" || lowered == "yes" || lowered == "true" || lowered == "on") {
        return true;
    }
    if (lowered == "0" || lowered == "no" || lowered == "false" || lowered == "off") {
        return false;
    }
    return std::nullopt;
}

namespace config {
namespace {

// dnf refuses more than 20 parallel downloads (libdnf ConfigMain max_parallel_downloads);
// rpmirror's engine is built for many more (a high-latency link needs them), so it allows 256.
constexpr unsigned kMaxParallelDownloads = 256;

using SetResult = tl::expected<void, std::string>;

tl::unexpected<std::string> invalid(std::string_view key, std::string_view value,
                                    std::string_view expected) {
    return tl::unexpected(
        fmt::format("invalid value '{}' for key '{}' (expected {})", value, key, expected));
}

tl::expected<bool, std::string> parse_bool(std::string_view key, std::string_view value) {
    if (const std::optional<bool> parsed = parse_config_bool(value)) {
        return *parsed;
    }
    return tl::unexpected(
        fmt::format("invalid boolean '{}' for key '{}' (expected 1/0, yes/no, true/false, on/off)",
                    value, key));
}

std::optional<std::uint64_t> parse_unsigned(std::string_view text) {
    if (text.empty()) {
        return std::nullopt;
    }
    std::uint64_t number = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
    if (error != std::errc() || end != text.data() + text.size()) {
        return std::nullopt;
    }
    return number;
}

}  // namespace

// "123", "1.5k", "2M", "1G" (binary multiples, case-insensitive), as libdnf's strToBytes.
std::optional<std::uint64_t> parse_bytes(std::string_view text) {
    double multiplier = 1;
    if (!text.empty()) {
        switch (text.back()) {
            case 'k':
            case 'K':
                multiplier = 1024.0;
                break;
            case 'm':
            case 'M':
                multiplier = 1024.0 * 1024.0;
                break;
            case 'g':
            case 'G':
                multiplier = 1024.0 * 1024.0 * 1024.0;
                break;
            default:
                break;
        }
        if (multiplier != 1) {
            text.remove_suffix(1);
        }
    }
    if (text.empty() || !std::isdigit(static_cast<unsigned char>(text.front())) ||
        std::count(text.begin(), text.end(), '.') > 1 ||
        !std::all_of(text.begin(), text.end(), [](char c) {
            return c == '.' || std::isdigit(static_cast<unsigned char>(c));
        })) {
        return std::nullopt;
    }
    double number = 0;
    const auto [end, error] =
        std::from_chars(text.data(), text.data() + text.size(), number, std::chars_format::fixed);
    if (error != std::errc() || end != text.data() + text.size()) {
        return std::nullopt;
    }
    const double bytes = std::floor(number * multiplier);
    if (!(bytes < 18446744073709551616.0)) {  // 2^64
        return std::nullopt;
    }
    return static_cast<std::uint64_t>(bytes);
}

namespace {

std::optional<std::string> optional_string(std::string_view value) {
    if (value.empty()) {
        return std::nullopt;
    }
    return std::string(value);
}

SetResult set_name(RepoConfig& repo, std::string_view, std::string_view value) {
    repo.name = std::string(value);
    return {};
}
SetResult set_baseurl(RepoConfig& repo, std::string_view, std::string_view value) {
    repo.baseurls = split_list(value);
    // dnf (librepo) takes a plain absolute path as a local repository.
    for (std::string& url : repo.baseurls) {
        if (url.starts_with('/')) {
            url = "file://" + url;
        }
    }
    return {};
}
SetResult set_mirrorlist(RepoConfig& repo, std::string_view, std::string_view value) {
    repo.mirrorlist = optional_string(value);
    return {};
}
SetResult set_metalink(RepoConfig& repo, std::string_view, std::string_view value) {
    repo.metalink = optional_string(value);
    return {};
}
SetResult set_gpgkey(RepoConfig& repo, std::string_view, std::string_view value) {
    repo.gpgkeys = split_list(value);
    return {};
}
SetResult set_includepkgs(RepoConfig& repo, std::string_view, std::string_view value) {
    repo.includepkgs = split_list(value);
    return {};
}
SetResult set_excludepkgs(RepoConfig& repo, std::string_view, std::string_view value) {
    repo.excludepkgs = split_list(value);
    return {};
}

template <bool RepoConfig::*Field>
SetResult set_bool(RepoConfig& repo, std::string_view key, std::string_view value) {
    auto parsed = parse_bool(key, value);
    if (!parsed) {
        return tl::unexpected(std::move(parsed.error()));
    }
    repo.*Field = *parsed;
    return {};
}

template <std::optional<std::string> RepoConfig::*Field>
SetResult set_optional_string(RepoConfig& repo, std::string_view, std::string_view value) {
    repo.*Field = optional_string(value);
    return {};
}

SetResult set_proxy(RepoConfig& repo, std::string_view, std::string_view value) {
    // dnf spells "no proxy at all" as an empty value or _none_.
    repo.proxy =
        (value.empty() || text::to_lower(value) == "_none_") ? std::string() : std::string(value);
    return {};
}

SetResult set_max_parallel_downloads(RepoConfig& repo, std::string_view key,
                                     std::string_view value) {
    const auto number = parse_unsigned(value);
    if (!number || *number < 1 || *number > kMaxParallelDownloads) {
        return invalid(key, value, fmt::format("an integer from 1 to {}", kMaxParallelDownloads));
    }
    repo.max_parallel_downloads = static_cast<unsigned>(*number);
    return {};
}

SetResult set_max_downloads_per_mirror(RepoConfig& repo, std::string_view key,
                                       std::string_view value) {
    const auto number = parse_unsigned(value);
    if (!number || *number < 1 || *number > std::numeric_limits<unsigned>::max()) {
        return invalid(key, value, "a positive integer");
    }
    repo.max_downloads_per_mirror = static_cast<unsigned>(*number);
    return {};
}

SetResult set_throttle(RepoConfig& repo, std::string_view key, std::string_view value) {
    constexpr std::string_view kExpected =
        "bytes per second with an optional k, M or G suffix, or a percentage such as 50%";
    repo.throttle_bytes_per_second.reset();
    repo.throttle_percent.reset();
    if (!value.empty() && value.back() == '%') {
        const std::string_view number_text = value.substr(0, value.size() - 1);
        double percent = 0;
        const auto [end, error] =
            std::from_chars(number_text.data(), number_text.data() + number_text.size(), percent,
                            std::chars_format::fixed);
        if (number_text.empty() || error != std::errc() ||
            end != number_text.data() + number_text.size() || !(percent >= 0 && percent <= 100)) {
            return invalid(key, value, kExpected);
        }
        if (percent > 0) {
            repo.throttle_percent = percent;
        }
        return {};
    }
    const auto bytes = parse_bytes(value);
    if (!bytes) {
        return invalid(key, value, kExpected);
    }
    if (*bytes > 0) {
        repo.throttle_bytes_per_second = *bytes;
    }
    return {};
}

SetResult set_bandwidth(RepoConfig& repo, std::string_view key, std::string_view value) {
    const auto bytes = parse_bytes(value);
    if (!bytes) {
        return invalid(key, value, "bytes per second with an optional k, M or G suffix");
    }
    repo.bandwidth_bytes_per_second =
        *bytes > 0 ? std::optional<std::uint64_t>(*bytes) : std::nullopt;
    return {};
}

SetResult set_minrate(RepoConfig& repo, std::string_view key, std::string_view value) {
    const auto bytes = parse_bytes(value);
    if (!bytes) {
        return invalid(key, value, "bytes per second with an optional k, M or G suffix");
    }
    repo.minrate_bytes_per_second = *bytes;
    return {};
}

SetResult set_timeout(RepoConfig& repo, std::string_view key, std::string_view value) {
    std::uint64_t multiplier = 1;
    std::string_view number_text = value;
    if (!number_text.empty()) {
        switch (std::tolower(static_cast<unsigned char>(number_text.back()))) {
            case 's':
                multiplier = 1;
                number_text.remove_suffix(1);
                break;
            case 'm':
                multiplier = 60;
                number_text.remove_suffix(1);
                break;
            case 'h':
                multiplier = 3600;
                number_text.remove_suffix(1);
                break;
            case 'd':
                multiplier = 86400;
                number_text.remove_suffix(1);
                break;
            default:
                break;
        }
    }
    const auto number = parse_unsigned(number_text);
    if (!number || *number > std::numeric_limits<std::uint32_t>::max() / multiplier) {
        return invalid(key, value,
                       "a whole number of seconds, optionally with an s, m, h or d suffix");
    }
    repo.timeout_seconds = static_cast<std::uint32_t>(*number * multiplier);
    return {};
}

SetResult set_retries(RepoConfig& repo, std::string_view key, std::string_view value) {
    const auto number = parse_unsigned(value);
    if (!number || *number > std::numeric_limits<std::uint32_t>::max()) {
        return invalid(key, value, "a non-negative integer");
    }
    repo.retries = static_cast<std::uint32_t>(*number);
    return {};
}

SetResult set_priority(RepoConfig& repo, std::string_view key, std::string_view value) {
    const auto number = parse_unsigned(value);
    if (!number || *number < 1 || *number > 99) {
        return invalid(key, value, "an integer from 1 to 99");
    }
    repo.priority = static_cast<int>(*number);
    return {};
}

SetResult set_cost(RepoConfig& repo, std::string_view key, std::string_view value) {
    const auto number = parse_unsigned(value);
    if (!number || *number > static_cast<std::uint64_t>(std::numeric_limits<int>::max())) {
        return invalid(key, value, "a non-negative integer");
    }
    repo.cost = static_cast<int>(*number);
    return {};
}

SetResult set_ip_resolve(RepoConfig& repo, std::string_view key, std::string_view value) {
    const std::string lowered = text::to_lower(value);
    if (lowered == "4" || lowered == "ipv4") {
        repo.ip_resolve = IpResolve::V4;
    } else if (lowered == "6" || lowered == "ipv6") {
        repo.ip_resolve = IpResolve::V6;
    } else if (lowered == "whatever") {
        repo.ip_resolve = IpResolve::Any;
    } else {
        return invalid(key, value, "4, 6, ipv4, ipv6 or whatever");
    }
    return {};
}

SetResult set_proxy_auth_method(RepoConfig& repo, std::string_view key, std::string_view value) {
    static constexpr std::string_view kMethods[] = {"any",       "none", "basic",     "digest",
                                                    "negotiate", "ntlm", "digest_ie", "ntlm_wb"};
    const std::string lowered = text::to_lower(value);
    if (std::find(std::begin(kMethods), std::end(kMethods), lowered) == std::end(kMethods)) {
        return invalid(key, value,
                       "any, none, basic, digest, negotiate, ntlm, digest_ie or ntlm_wb");
    }
    repo.proxy_auth_method = lowered;
    return {};
}

SetResult set_type(RepoConfig&, std::string_view key, std::string_view value) {
    const std::string lowered = text::to_lower(value);
    if (lowered.empty() || lowered == "rpm-md" || lowered == "rpm" || lowered == "yum" ||
        lowered == "repomd" || lowered == "rpmmd") {
        return {};
    }
    return tl::unexpected(fmt::format(
        "unsupported repository type '{}' for key '{}' (expected rpm-md, rpm or yum)", value, key));
}

// key, is_url, is_main_default, is_global, setter
constexpr RepoOption kRepoOptions[] = {
    {"name", false, false, false, set_name},
    {"baseurl", true, false, false, set_baseurl},
    {"mirrorlist", true, false, false, set_mirrorlist},
    {"metalink", true, false, false, set_metalink},
    {"enabled", false, false, false, set_bool<&RepoConfig::enabled>},
    {"gpgcheck", false, true, true, set_bool<&RepoConfig::gpgcheck>},
    {"repo_gpgcheck", false, true, true, set_bool<&RepoConfig::repo_gpgcheck>},
    {"gpgkey", true, false, false, set_gpgkey},
    {"sslverify", false, true, true, set_bool<&RepoConfig::sslverify>},
    {"sslcacert", false, true, true, set_optional_string<&RepoConfig::sslcacert>},
    {"sslclientcert", false, true, true, set_optional_string<&RepoConfig::sslclientcert>},
    {"sslclientkey", false, true, true, set_optional_string<&RepoConfig::sslclientkey>},
    {"proxy", false, true, true, set_proxy},
    {"proxy_username", false, true, true, set_optional_string<&RepoConfig::proxy_username>},
    {"proxy_password", false, true, true, set_optional_string<&RepoConfig::proxy_password>},
    {"proxy_auth_method", false, true, true, set_proxy_auth_method},
    {"proxy_sslverify", false, true, true, set_bool<&RepoConfig::proxy_sslverify>},
    {"proxy_sslcacert", false, true, true, set_optional_string<&RepoConfig::proxy_sslcacert>},
    {"proxy_sslclientcert", false, true, true,
     set_optional_string<&RepoConfig::proxy_sslclientcert>},
    {"proxy_sslclientkey", false, true, true, set_optional_string<&RepoConfig::proxy_sslclientkey>},
    {"sslverifystatus", false, true, true, set_bool<&RepoConfig::sslverifystatus>},
    {"username", false, true, true, set_optional_string<&RepoConfig::username>},
    {"password", false, true, true, set_optional_string<&RepoConfig::password>},
    {"includepkgs", false, false, true, set_includepkgs},
    {"excludepkgs", false, true, true, set_excludepkgs},
    {"max_parallel_downloads", false, true, true, set_max_parallel_downloads},
    {"max_downloads_per_mirror", false, true, true, set_max_downloads_per_mirror},
    {"throttle", false, true, true, set_throttle},
    {"bandwidth", false, true, true, set_bandwidth},
    {"minrate", false, true, true, set_minrate},
    {"timeout", false, true, true, set_timeout},
    {"retries", false, true, true, set_retries},
    {"user_agent", false, true, true, set_optional_string<&RepoConfig::user_agent>},
    {"ip_resolve", false, true, true, set_ip_resolve},
    {"skip_if_unavailable", false, true, true, set_bool<&RepoConfig::skip_if_unavailable>},
    {"type", false, false, false, set_type},
    {"priority", false, false, false, set_priority},
    {"cost", false, false, false, set_cost},
};

// Repo options of dnf 4 (libdnf ConfigRepo) / dnf 5 that do not change what or how rpmirror
// downloads, and per-repository keys of yum plugins that Amazon Linux's own .repo files carry
// (fastestmirror_enabled, report_instanceid).
constexpr std::string_view kIgnoredRepoKeys[] = {
    "basecachedir",
    "countme",
    "deltarpm",
    "deltarpm_percentage",
    "enabled_metadata",
    "enablegroups",
    "failovermethod",
    "fastestmirror",
    "fastestmirror_enabled",
    "gpgcakey",
    "gpgkey_dns_verification",
    "http_caching",
    "keepalive",
    "mediaid",
    "metadata_expire",
    "mirrorlist_expire",
    "module_hotfixes",
    "protected_packages",
    "report_instanceid",
};

// [main]-only options of dnf 4 (libdnf ConfigMain, dnf.conf(5)) / dnf 5 that have no meaning for
// mirroring.
constexpr std::string_view kIgnoredMainKeys[] = {
    "allow_vendor_change",
    "arch",
    "assumeno",
    "assumeyes",
    "autocheck_running_kernel",
    "basearch",
    "best",
    "bugtracker_url",
    "cachedir",
    "cacheonly",
    "check_config_file_age",
    "clean_requirements_on_remove",
    "color",
    "color_list_available_downgrade",
    "color_list_available_install",
    "color_list_available_reinstall",
    "color_list_available_upgrade",
    "color_list_installed_extra",
    "color_list_installed_newer",
    "color_list_installed_older",
    "color_list_installed_reinstall",
    "color_search_match",
    "color_update_installed",
    "color_update_local",
    "color_update_remote",
    "comment",
    "config_file_path",
    "debug_solver",
    "debuglevel",
    "defaultyes",
    "destdir",
    "diskspacecheck",
    "downloadonly",
    "enabled",
    "enablegroups",
    "errorlevel",
    "exclude_from_weak",
    "exclude_from_weak_autodetect",
    "exit_on_lock",
    "group_package_types",
    "history_list_view",
    "history_record",
    "history_record_packages",
    "ignorearch",
    "install_weak_deps",
    "installonly_limit",
    "installonlypkgs",
    "installroot",
    "keepcache",
    "localpkg_gpgcheck",
    "log_compress",
    "log_rotate",
    "log_size",
    "logdir",
    "logfilelevel",
    "metadata_timer_sync",
    "module_obsoletes",
    "module_platform_id",
    "module_stream_switch",
    "multilib_policy",
    "obsoletes",
    "persistdir",
    "pluginconfpath",
    "pluginpath",
    "plugins",
    "protect_running_kernel",
    "protected_packages",
    "recent",
    "releasever",
    "reset_nice",
    "rpmverbosity",
    "showdupesfromrepos",
    "skip_broken",
    "strict",
    "system_cachedir",
    "transformdb",
    "tsflags",
    "upgrade_group_objects_upgrade",
    "usr_drift_protected_paths",
    "varsdir",
    "weakexcludes",
    "zchunk",
};

}  // namespace

const RepoOption* find_repo_option(std::string_view key) {
    if (key == "exclude") {
        key = "excludepkgs";
    }
    for (const RepoOption& option : kRepoOptions) {
        if (option.key == key) {
            return &option;
        }
    }
    return nullptr;
}

bool is_ignored_repo_key(std::string_view key) {
    return std::find(std::begin(kIgnoredRepoKeys), std::end(kIgnoredRepoKeys), key) !=
           std::end(kIgnoredRepoKeys);
}

bool is_ignored_main_key(std::string_view key) {
    return std::find(std::begin(kIgnoredMainKeys), std::end(kIgnoredMainKeys), key) !=
           std::end(kIgnoredMainKeys);
}

std::vector<std::string> split_list(std::string_view value) {
    std::vector<std::string> items;
    std::size_t start = 0;
    for (std::size_t index = 0; index <= value.size(); ++index) {
        const bool is_separator = index == value.size() || value[index] == ',' ||
                                  std::isspace(static_cast<unsigned char>(value[index])) != 0;
        if (is_separator) {
            if (index > start) {
                items.emplace_back(value.substr(start, index - start));
            }
            start = index + 1;
        }
    }
    return items;
}

}  // namespace config

std::optional<std::uint64_t> parse_byte_size(std::string_view text) {
    return config::parse_bytes(text);
}

}  // namespace rpmirror
