// S3Config resolution: explicit settings, the environment, and the AWS CLI's credentials and
// config files, in the AWS CLI's order.
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

#include "rpmirror/s3/s3.hpp"
#include "s3/config.hpp"
#include "util/text.hpp"

namespace rpmirror::s3 {

namespace {

using Section = std::map<std::string, std::string>;  // "key" or "s3.key" -> value
using IniFile = std::map<std::string, Section>;      // section name -> settings

std::string trim(std::string_view line) {
    return std::string(text::trim(line));
}

// Parses an AWS CLI ini file. Nested settings ("s3 =" followed by indented "key = value" lines)
// are stored as "s3.key". Returns an empty IniFile iff the file does not exist.
Result<IniFile> read_ini(const std::filesystem::path& path) {
    std::ifstream stream(path);
    IniFile ini;
    if (!stream) {
        return ini;
    }
    std::string line;
    std::string section;
    std::string nested;  // the parent key of indented lines, "" iff none
    bool in_section = false;
    for (long number = 1; std::getline(stream, line); ++number) {
        const std::string text = trim(line);
        if (text.empty() || text[0] == '#' || text[0] == ';') {
            continue;
        }
        const bool indented = line[0] == ' ' || line[0] == '\t';
        if (text.front() == '[') {
            if (text.back() != ']') {
                return make_error(ErrorCode::BadInput,
                                  "line " + std::to_string(number) + ": unterminated section",
                                  path.string());
            }
            section = trim(std::string_view(text).substr(1, text.size() - 2));
            ini[section];
            in_section = true;
            nested.clear();
            continue;
        }
        const auto equals = text.find('=');
        if (equals == std::string::npos || !in_section) {
            return make_error(
                ErrorCode::BadInput,
                "line " + std::to_string(number) +
                    (in_section ? ": expected 'key = value'" : ": a setting before any [section]"),
                path.string());
        }
        const std::string key = trim(std::string_view(text).substr(0, equals));
        const std::string value = trim(std::string_view(text).substr(equals + 1));
        if (indented && !nested.empty()) {
            ini[section][nested + "." + key] = value;
            continue;
        }
        nested = value.empty() ? key : std::string();
        ini[section][key] = value;
    }
    return ini;
}

const Section* find_section(const IniFile& ini, const std::string& name) {
    const auto found = ini.find(name);
    return found == ini.end() ? nullptr : &found->second;
}

std::optional<std::string> setting(const Section* section, const std::string& key) {
    if (section == nullptr) {
        return std::nullopt;
    }
    const auto found = section->find(key);
    if (found == section->end() || found->second.empty()) {
        return std::nullopt;
    }
    return found->second;
}

std::optional<S3Credentials> credentials_in(const Section* section) {
    auto id = setting(section, "aws_access_key_id");
    auto secret = setting(section, "aws_secret_access_key");
    if (!id || !secret) {
        return std::nullopt;
    }
    return S3Credentials{*id, *secret, setting(section, "aws_session_token").value_or("")};
}

std::optional<std::string> nonempty_env(const EnvLookup& env, std::string_view name) {
    auto value = env(name);
    if (value && value->empty()) {
        return std::nullopt;
    }
    return value;
}

// Returns `endpoint` without a trailing '/', or an error iff it is not http(s)://HOST[:PORT].
Result<std::string> check_endpoint(std::string endpoint, const std::string& source) {
    while (!endpoint.empty() && endpoint.back() == '/') {
        endpoint.pop_back();
    }
    std::string_view rest = endpoint;
    if (rest.substr(0, 7) == "http://") {
        rest.remove_prefix(7);
    } else if (rest.substr(0, 8) == "https://") {
        rest.remove_prefix(8);
    } else {
        return make_error(ErrorCode::BadInput,
                          "endpoint from " + source + " must start with http:// or https://",
                          endpoint);
    }
    if (rest.empty() || rest.find_first_of("/?#@ ") != std::string_view::npos) {
        return make_error(ErrorCode::BadInput,
                          "endpoint from " + source + " must be http(s)://HOST[:PORT]", endpoint);
    }
    return endpoint;
}

// Returns the whole of `text` as a decimal integer, or nullopt.
std::optional<long long> parse_integer(std::string_view text) {
    long long value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size()) {
        return std::nullopt;
    }
    return value;
}

// The environment variable `name` as an integer of at least `minimum`: nullopt iff it is unset
// or empty; Error{BadInput} naming it iff it is not such a number ("must be `what`").
Result<std::optional<long long>> integer_env(const EnvLookup& env, std::string_view name,
                                             std::optional<long long> minimum,
                                             std::string_view what) {
    const auto text = nonempty_env(env, name);
    if (!text) {
        return std::optional<long long>();
    }
    const auto value = parse_integer(*text);
    if (!value || (minimum && *value < *minimum)) {
        return make_error(ErrorCode::BadInput,
                          "must be " + std::string(what) + ", not '" + *text + "'",
                          std::string(name));
    }
    return value;
}

}  // namespace

EnvLookup process_environment() {
    return [](std::string_view name) -> std::optional<std::string> {
        const char* value = std::getenv(std::string(name).c_str());
        if (value == nullptr) {
            return std::nullopt;
        }
        return std::string(value);
    };
}

Result<S3Config> resolve_config(const S3Overrides& overrides, const EnvLookup& env) {
    const std::filesystem::path home = env("HOME").value_or("");
    const std::filesystem::path credentials_path =
        nonempty_env(env, "AWS_SHARED_CREDENTIALS_FILE")
            .value_or((home / ".aws/credentials").string());
    const std::filesystem::path config_path =
        nonempty_env(env, "AWS_CONFIG_FILE").value_or((home / ".aws/config").string());
    auto credentials_file = read_ini(credentials_path);
    if (!credentials_file) {
        return tl::unexpected(credentials_file.error());
    }
    auto config_file = read_ini(config_path);
    if (!config_file) {
        return tl::unexpected(config_file.error());
    }
    const std::string profile = overrides.profile
                                    ? *overrides.profile
                                    : nonempty_env(env, "AWS_PROFILE").value_or("default");
    const Section* credentials_section = find_section(*credentials_file, profile);
    const Section* config_section = find_section(
        *config_file, profile == "default" ? std::string("default") : "profile " + profile);
    if (overrides.profile && credentials_section == nullptr && config_section == nullptr) {
        return make_error(
            ErrorCode::BadInput,
            "no such profile in " + credentials_path.string() + " or " + config_path.string(),
            profile);
    }

    S3Config config;
    // Credentials.
    const auto from_profile = [&]() -> std::optional<std::pair<S3Credentials, std::string>> {
        if (auto found = credentials_in(credentials_section)) {
            return std::pair{*found, "profile " + profile + " in " + credentials_path.string()};
        }
        if (auto found = credentials_in(config_section)) {
            return std::pair{*found, "profile " + profile + " in " + config_path.string()};
        }
        return std::nullopt;
    };
    const auto env_id = nonempty_env(env, "AWS_ACCESS_KEY_ID");
    const auto env_secret = nonempty_env(env, "AWS_SECRET_ACCESS_KEY");
    if (overrides.credentials) {
        config.credentials = *overrides.credentials;
        config.credentials_source = "explicit settings";
    } else if (auto found = overrides.profile ? from_profile() : std::nullopt) {
        config.credentials = found->first;
        config.credentials_source = found->second;
    } else if (env_id && env_secret) {
        config.credentials = {*env_id, *env_secret,
                              nonempty_env(env, "AWS_SESSION_TOKEN").value_or("")};
        config.credentials_source = "the environment (AWS_ACCESS_KEY_ID)";
    } else if (auto found = from_profile()) {
        config.credentials = found->first;
        config.credentials_source = found->second;
    } else {
        return make_error(ErrorCode::BadInput,
                          "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or "
                          "aws_access_key_id and aws_secret_access_key in profile " +
                              profile + " of " + credentials_path.string() + " or " +
                              config_path.string(),
                          "s3");
    }

    // Region.
    if (overrides.region) {
        config.region = *overrides.region;
    } else if (auto region = nonempty_env(env, "AWS_REGION")) {
        config.region = *region;
    } else if (auto fallback = nonempty_env(env, "AWS_DEFAULT_REGION")) {
        config.region = *fallback;
    } else if (auto configured = setting(config_section, "region")) {
        config.region = *configured;
    }

    // Endpoint and addressing style.
    std::optional<std::pair<std::string, std::string>> endpoint;  // value, source
    if (overrides.endpoint) {
        endpoint = {*overrides.endpoint, "explicit settings"};
    } else if (auto value = nonempty_env(env, "AWS_ENDPOINT_URL_S3")) {
        endpoint = {*value, "AWS_ENDPOINT_URL_S3"};
    } else if (auto general = nonempty_env(env, "AWS_ENDPOINT_URL")) {
        endpoint = {*general, "AWS_ENDPOINT_URL"};
    } else if (auto nested = setting(config_section, "s3.endpoint_url")) {
        endpoint = {*nested, "profile " + profile + " in " + config_path.string()};
    } else if (auto configured = setting(config_section, "endpoint_url")) {
        endpoint = {*configured, "profile " + profile + " in " + config_path.string()};
    }
    if (endpoint) {
        auto checked = check_endpoint(endpoint->first, endpoint->second);
        if (!checked) {
            return tl::unexpected(checked.error());
        }
        config.endpoint = *checked;
        config.path_style = true;
    } else {
        config.endpoint = "https://s3." + config.region + ".amazonaws.com";
        config.path_style = false;
    }
    if (overrides.path_style) {
        config.path_style = *overrides.path_style;
    } else if (auto style = setting(config_section, "s3.addressing_style")) {
        if (*style == "path") {
            config.path_style = true;
        } else if (*style == "virtual") {
            config.path_style = false;
        } else if (*style != "auto") {
            return make_error(ErrorCode::BadInput,
                              "addressing_style of profile " + profile +
                                  " must be path, virtual or auto, not '" + *style + "'",
                              config_path.string());
        }
    }

    // CA bundle, as the AWS CLI: the environment, then the profile.
    std::optional<std::pair<std::string, std::string>> ca_bundle;  // value, source
    if (auto value = nonempty_env(env, "AWS_CA_BUNDLE")) {
        ca_bundle = {*value, "AWS_CA_BUNDLE"};
    } else if (auto configured = setting(config_section, "ca_bundle")) {
        ca_bundle = {*configured,
                     "ca_bundle of profile " + profile + " in " + config_path.string()};
    }
    if (ca_bundle) {
        std::error_code error;
        if (!std::filesystem::is_regular_file(ca_bundle->first, error) ||
            ::access(ca_bundle->first.c_str(), R_OK) != 0) {
            return make_error(ErrorCode::BadInput,
                              "CA bundle (" + ca_bundle->second + ") is not a readable file",
                              ca_bundle->first);
        }
        config.ca_bundle = ca_bundle->first;
    }
    // Not from the AWS chain: rpmirror's own knobs (retries fast in tests, a known clock error,
    // the lease's time to live, how long a silent request is waited for).
    auto delay = integer_env(env, "RPMIRROR_S3_RETRY_DELAY_MS", 0, "a number of milliseconds");
    auto offset = integer_env(env, "RPMIRROR_S3_CLOCK_OFFSET", std::nullopt,
                              "a number of seconds (may be negative)");
    auto ttl =
        integer_env(env, "RPMIRROR_S3_LEASE_TTL", 1, "a whole number of seconds, at least 1");
    auto stall =
        integer_env(env, "RPMIRROR_S3_STALL_TIMEOUT", 1, "a whole number of seconds, at least 1");
    for (const auto* read : {&delay, &offset, &ttl, &stall}) {
        if (!*read) {
            return tl::unexpected(read->error());
        }
    }
    if (*delay) {
        config.retry_base_delay = std::chrono::milliseconds(**delay);
    }
    if (*offset) {
        config.clock_offset = std::chrono::seconds(**offset);
    }
    if (*ttl) {
        config.lease_ttl = std::chrono::seconds(**ttl);
    }
    if (*stall) {
        config.stall_timeout = std::chrono::seconds(**stall);
    }
    return config;
}

}  // namespace rpmirror::s3
