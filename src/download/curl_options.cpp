#include "download/curl_options.hpp"

#include <cctype>
#include <chrono>

namespace rpmirror::download {

bool iequals_prefix(std::string_view text, std::string_view prefix) {
    if (text.size() < prefix.size()) {
        return false;
    }
    for (std::size_t index = 0; index < prefix.size(); ++index) {
        if (std::tolower(static_cast<unsigned char>(text[index])) !=
            std::tolower(static_cast<unsigned char>(prefix[index]))) {
            return false;
        }
    }
    return true;
}

std::optional<std::string> file_url_path(std::string_view url) {
    if (!iequals_prefix(url, "file://")) {
        return std::nullopt;
    }
    std::string_view rest = url.substr(7);
    if (iequals_prefix(rest, "localhost/")) {
        rest.remove_prefix(9);
    }
    if (rest.empty() || rest.front() != '/') {
        return std::nullopt;
    }
    std::string path;
    for (std::size_t index = 0; index < rest.size(); ++index) {
        if (rest[index] == '%' && index + 2 < rest.size() &&
            std::isxdigit(static_cast<unsigned char>(rest[index + 1])) != 0 &&
            std::isxdigit(static_cast<unsigned char>(rest[index + 2])) != 0) {
            path +=
                static_cast<char>(std::stoi(std::string(rest.substr(index + 1, 2)), nullptr, 16));
            index += 2;
        } else {
            path += rest[index];
        }
    }
    return path;
}

std::string user_agent_for(const DownloadOptions& options) {
    return options.user_agent.empty() ? std::string("rpmirror/") + RPMIRROR_VERSION
                                      : options.user_agent;
}

int RedirectGuard::on_request(void* guard, char* primary_ip, char* local_ip, int primary_port,
                              int local_port) {
    (void)primary_ip;
    (void)local_ip;
    (void)primary_port;
    (void)local_port;
    auto& self = *static_cast<RedirectGuard*>(guard);
    char* url = nullptr;
    if (curl_easy_getinfo(self.easy, CURLINFO_EFFECTIVE_URL, &url) != CURLE_OK || url == nullptr) {
        return CURL_PREREQFUNC_OK;
    }
    if (iequals_prefix(url, "https://")) {
        self.reached_https = true;
    } else if (self.reached_https) {
        self.refused_url = url;
        return CURL_PREREQFUNC_ABORT;
    }
    return CURL_PREREQFUNC_OK;
}

bool append_request_headers(CurlSlist& headers, const DownloadOptions& options) {
    bool sets_accept_encoding = false;
    for (const std::string& header : options.headers) {
        sets_accept_encoding = sets_accept_encoding || iequals_prefix(header, "accept-encoding:");
        if (!headers.append(header)) {
            return false;
        }
    }
    return sets_accept_encoding || headers.append("Accept-Encoding:");
}

bool is_encoded(std::string_view content_encoding) {
    return !content_encoding.empty() &&
           !(content_encoding.size() == 8 && iequals_prefix(content_encoding, "identity"));
}

void receive_body_as_sent(CURL* easy) {
    curl_easy_setopt(easy, CURLOPT_ACCEPT_ENCODING, nullptr);
    curl_easy_setopt(easy, CURLOPT_HTTP_CONTENT_DECODING, 0L);
}

long proxy_auth_bits(std::string_view method) {
    // dnf's names, as librepo maps them (LRO_PROXYAUTHMETHODS).
    if (method == "none") {
        return static_cast<long>(CURLAUTH_NONE);
    }
    if (method == "basic") {
        return static_cast<long>(CURLAUTH_BASIC);
    }
    if (method == "digest") {
        return static_cast<long>(CURLAUTH_DIGEST);
    }
    if (method == "negotiate") {
        return static_cast<long>(CURLAUTH_NEGOTIATE);
    }
    if (method == "ntlm") {
        return static_cast<long>(CURLAUTH_NTLM);
    }
    if (method == "digest_ie") {
        return static_cast<long>(CURLAUTH_DIGEST_IE);
    }
    if (method == "ntlm_wb") {
        // libcurl 8.8 dropped NTLM through winbind; the bit is still accepted (and ignored).
        constexpr unsigned long kNtlmWb = 1UL << 5;
        return static_cast<long>(kNtlmWb);
    }
    return static_cast<long>(CURLAUTH_ANY);
}

void apply_connection_options(CURL* easy, const DownloadOptions& o, std::string_view url,
                              const std::string& user_agent, curl_slist* headers,
                              RedirectGuard& guard) {
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(easy, CURLOPT_MAXREDIRS, static_cast<long>(o.max_redirects));
    // A redirect to file:// (or anything else) must never read local files for a server, and
    // an https repository must not be downgraded to plain http. http may move to https (many
    // http:// baseurls answer 301 to https://, and dnf follows), but not back: curl checks
    // each hop's scheme, the guard the order of the hops.
    curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(easy, CURLOPT_REDIR_PROTOCOLS_STR,
                     iequals_prefix(url, "https://") ? "https" : "http,https");
    guard = RedirectGuard{easy, false, {}};
    curl_easy_setopt(easy, CURLOPT_PREREQFUNCTION, &RedirectGuard::on_request);
    curl_easy_setopt(easy, CURLOPT_PREREQDATA, &guard);
    // A misconfigured server or proxy may encode a body nobody asked to be encoded: decode it
    // (gzip, deflate, whatever libcurl supports), so sizes and checksums are judged on the
    // file's bytes. libcurl decodes only with CURLOPT_ACCEPT_ENCODING set; the empty
    // "Accept-Encoding:" request header (append_request_headers) keeps it from asking.
    curl_easy_setopt(easy, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(easy, CURLOPT_HTTP_CONTENT_DECODING, 1L);
    curl_easy_setopt(easy, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS,
                     static_cast<long>(std::chrono::milliseconds(o.connect_timeout).count()));
    if (o.minrate > 0 && o.low_speed_time.count() > 0) {
        curl_easy_setopt(easy, CURLOPT_LOW_SPEED_LIMIT, static_cast<long>(o.minrate));
        curl_easy_setopt(easy, CURLOPT_LOW_SPEED_TIME, static_cast<long>(o.low_speed_time.count()));
    }
    curl_easy_setopt(easy, CURLOPT_USERAGENT, user_agent.c_str());
    if (headers != nullptr) {
        curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
    }
    curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, o.sslverify ? 1L : 0L);
    curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, o.sslverify ? 2L : 0L);
    if (!o.sslcacert.empty()) {
        curl_easy_setopt(easy, CURLOPT_CAINFO, o.sslcacert.c_str());
    }
    if (!o.sslclientcert.empty()) {
        curl_easy_setopt(easy, CURLOPT_SSLCERT, o.sslclientcert.c_str());
    }
    if (!o.sslclientkey.empty()) {
        curl_easy_setopt(easy, CURLOPT_SSLKEY, o.sslclientkey.c_str());
    }
    if (!o.proxy.empty()) {
        curl_easy_setopt(easy, CURLOPT_PROXY, o.proxy.c_str());
    }
    curl_easy_setopt(easy, CURLOPT_PROXYAUTH, proxy_auth_bits(o.proxy_auth_method));
    curl_easy_setopt(easy, CURLOPT_PROXY_SSL_VERIFYPEER, o.proxy_sslverify ? 1L : 0L);
    curl_easy_setopt(easy, CURLOPT_PROXY_SSL_VERIFYHOST, o.proxy_sslverify ? 2L : 0L);
    if (!o.proxy_sslcacert.empty()) {
        curl_easy_setopt(easy, CURLOPT_PROXY_CAINFO, o.proxy_sslcacert.c_str());
    }
    if (!o.proxy_sslclientcert.empty()) {
        curl_easy_setopt(easy, CURLOPT_PROXY_SSLCERT, o.proxy_sslclientcert.c_str());
    }
    if (!o.proxy_sslclientkey.empty()) {
        curl_easy_setopt(easy, CURLOPT_PROXY_SSLKEY, o.proxy_sslclientkey.c_str());
    }
    if (o.sslverifystatus) {
        curl_easy_setopt(easy, CURLOPT_SSL_VERIFYSTATUS, 1L);
    }
    if (!o.proxy_username.empty()) {
        curl_easy_setopt(easy, CURLOPT_PROXYUSERNAME, o.proxy_username.c_str());
        curl_easy_setopt(easy, CURLOPT_PROXYPASSWORD, o.proxy_password.c_str());
    }
    if (!o.username.empty()) {
        curl_easy_setopt(easy, CURLOPT_HTTPAUTH, static_cast<long>(CURLAUTH_BASIC));
        curl_easy_setopt(easy, CURLOPT_USERNAME, o.username.c_str());
        curl_easy_setopt(easy, CURLOPT_PASSWORD, o.password.c_str());
    }
    curl_easy_setopt(easy, CURLOPT_IPRESOLVE,
                     o.ip_resolve == IpResolve::V4   ? static_cast<long>(CURL_IPRESOLVE_V4)
                     : o.ip_resolve == IpResolve::V6 ? static_cast<long>(CURL_IPRESOLVE_V6)
                                                     : static_cast<long>(CURL_IPRESOLVE_WHATEVER));
}

std::string describe_curl_failure(CURL* easy, CURLcode code, std::string_view requested_url,
                                  const char* error_buffer, const RedirectGuard& guard) {
    if (code == CURLE_ABORTED_BY_CALLBACK && !guard.refused_url.empty()) {
        return "refused redirect to '" + guard.refused_url +
               "': a redirect to https is never followed back to http";
    }
    std::string detail = error_buffer != nullptr && error_buffer[0] != '\0'
                             ? std::string(error_buffer)
                             : std::string(curl_easy_strerror(code));
    char* effective = nullptr;
    if (code == CURLE_UNSUPPORTED_PROTOCOL &&
        curl_easy_getinfo(easy, CURLINFO_EFFECTIVE_URL, &effective) == CURLE_OK &&
        effective != nullptr && std::string_view(effective) != requested_url) {
        detail = "refused redirect to '" + std::string(effective) + "': only " +
                 (iequals_prefix(requested_url, "https://") ? "https" : "http and https") +
                 " redirects are followed (" + detail + ")";
    }
    return detail;
}

}  // namespace rpmirror::download
