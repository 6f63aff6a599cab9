// A repository written back as a `.repo` section (write_repo_section, rpmirror/config/config.hpp):
// what a mirror records of its source, read back by read_repo_text (load.cpp).
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "config/repo_files.hpp"
#include "rpmirror/config/config.hpp"

namespace rpmirror {

namespace {

// `url` without the password of its user information ("https://user@host/" of
// "https://user:secret@host/"); `key` names it in `left_out` when one was there.
std::string without_password(std::string_view url, std::string_view key,
                             std::vector<std::string>& left_out) {
    const std::size_t scheme = url.find("://");
    if (scheme == std::string_view::npos) {
        return std::string(url);
    }
    const std::size_t authority = scheme + 3;
    const std::size_t end = std::min(url.find_first_of("/?#", authority), url.size());
    const std::size_t at = url.substr(0, end).rfind('@');
    if (at == std::string_view::npos || at < authority) {
        return std::string(url);
    }
    const std::size_t colon = url.substr(0, at).find(':', authority);
    if (colon == std::string_view::npos) {
        return std::string(url);
    }
    const std::string named = fmt::format("the password in {}", key);
    if (std::find(left_out.begin(), left_out.end(), named) == left_out.end()) {
        left_out.push_back(named);
    }
    return std::string(url.substr(0, colon)) + std::string(url.substr(at));
}

// Writes the lines of one section, each value's further lines indented (a continuation).
class SectionWriter {
  public:
    explicit SectionWriter(std::vector<std::string>& left_out) : left_out_(left_out) {}

    void line(std::string_view key, std::string_view value) {
        text_ += key;
        text_ += '=';
        for (const char c : value) {
            text_ += c;
            if (c == '\n') {
                text_ += "    ";
            }
        }
        text_ += '\n';
    }
    void optional(std::string_view key, const std::optional<std::string>& value) {
        if (value) {
            line(key, *value);
        }
    }
    void flag(std::string_view key, bool value) { line(key, value ? "1" : "0"); }
    // One item a line, as dnf reads a list.
    void list(std::string_view key, const std::vector<std::string>& items, bool urls) {
        if (items.empty()) {
            return;
        }
        std::string value;
        for (const std::string& item : items) {
            value += value.empty() ? "" : "\n";
            value += urls ? without_password(item, key, left_out_) : item;
        }
        line(key, value);
    }
    void url(std::string_view key, const std::optional<std::string>& value) {
        if (value) {
            line(key, without_password(*value, key, left_out_));
        }
    }
    // The TLS options of one side, each key `prefix` + "verify", "cacert", "clientcert",
    // "clientkey" (the repository's "ssl", its proxy's "proxy_ssl").
    void tls(std::string_view prefix, bool verify, const std::optional<std::string>& cacert,
             const std::optional<std::string>& clientcert,
             const std::optional<std::string>& clientkey) {
        const std::string side(prefix);
        flag(side + "verify", verify);
        optional(side + "cacert", cacert);
        optional(side + "clientcert", clientcert);
        optional(side + "clientkey", clientkey);
    }
    void secret(std::string_view key, const std::optional<std::string>& value) {
        if (value) {
            left_out_.emplace_back(key);
        }
    }

    std::string& text() { return text_; }

  private:
    std::vector<std::string>& left_out_;
    std::string text_;
};

std::string_view ip_resolve_value(IpResolve resolve) {
    switch (resolve) {
        case IpResolve::V4:
            return "4";
        case IpResolve::V6:
            return "6";
        case IpResolve::Any:
            break;
    }
    return "whatever";
}

}  // namespace

std::string write_repo_section(const RepoConfig& repo, std::vector<std::string>& left_out) {
    SectionWriter out(left_out);
    out.text() = fmt::format("[{}]\n", repo.id);
    out.line("name", repo.name);
    out.list("baseurl", repo.baseurls, true);
    out.url("mirrorlist", repo.mirrorlist);
    out.url("metalink", repo.metalink);
    out.flag("enabled", true);
    out.flag("gpgcheck", repo.gpgcheck);
    out.flag("repo_gpgcheck", repo.repo_gpgcheck);
    out.list("gpgkey", repo.gpgkeys, true);
    out.tls("ssl", repo.sslverify, repo.sslcacert, repo.sslclientcert, repo.sslclientkey);
    out.flag("sslverifystatus", repo.sslverifystatus);
    out.optional("username", repo.username);
    out.secret("password", repo.password);
    if (repo.proxy) {
        out.line("proxy", repo.proxy->empty() ? std::string("_none_")
                                              : without_password(*repo.proxy, "proxy", left_out));
    }
    out.optional("proxy_username", repo.proxy_username);
    out.secret("proxy_password", repo.proxy_password);
    out.line("proxy_auth_method", repo.proxy_auth_method);
    out.tls("proxy_ssl", repo.proxy_sslverify, repo.proxy_sslcacert, repo.proxy_sslclientcert,
            repo.proxy_sslclientkey);
    out.list("includepkgs", repo.includepkgs, false);
    out.list("excludepkgs", repo.excludepkgs, false);
    if (repo.max_parallel_downloads) {
        out.line("max_parallel_downloads", std::to_string(*repo.max_parallel_downloads));
    }
    if (repo.max_downloads_per_mirror) {
        out.line("max_downloads_per_mirror", std::to_string(*repo.max_downloads_per_mirror));
    }
    if (repo.throttle_bytes_per_second) {
        out.line("throttle", std::to_string(*repo.throttle_bytes_per_second));
    } else if (repo.throttle_percent) {
        out.line("throttle", fmt::format("{:f}%", *repo.throttle_percent));
    }
    if (repo.bandwidth_bytes_per_second) {
        out.line("bandwidth", std::to_string(*repo.bandwidth_bytes_per_second));
    }
    out.line("minrate", std::to_string(repo.minrate_bytes_per_second));
    out.line("timeout", std::to_string(repo.timeout_seconds));
    out.line("retries", std::to_string(repo.retries));
    out.optional("user_agent", repo.user_agent);
    out.line("ip_resolve", ip_resolve_value(repo.ip_resolve));
    out.flag("skip_if_unavailable", repo.skip_if_unavailable);
    out.line("priority", std::to_string(repo.priority));
    out.line("cost", std::to_string(repo.cost));
    return std::move(out.text());
}

}  // namespace rpmirror
