// What every libcurl transfer of rpmirror shares, whether a package in the multi loop or a small
// document fetched on its own: connection, TLS, proxy, authentication and identity options, and
// the handling of file:// URLs.
#pragma once

#include <curl/curl.h>

#include <optional>
#include <stop_token>
#include <string>
#include <string_view>

#include "download/curl_handles.hpp"
#include "download/download.hpp"

namespace rpmirror::download {

// Returns true iff `text` starts with `prefix`, ignoring ASCII case.
bool iequals_prefix(std::string_view text, std::string_view prefix);

// Returns the local path of a file:// URL (percent-decoded), or nullopt iff it is not one.
std::optional<std::string> file_url_path(std::string_view url);

// Returns the User-Agent for `options` ("rpmirror/<version>" unless set).
std::string user_agent_for(const DownloadOptions& options);

// Appends to `headers` the request headers of every transfer: `options.headers`, and unless
// they set one, an empty "Accept-Encoding:", which keeps libcurl from asking for an encoding
// (see apply_connection_options). Returns false iff libcurl could not allocate an entry.
bool append_request_headers(CurlSlist& headers, const DownloadOptions& options);

// Returns true iff `content_encoding` (a Content-Encoding header's value) says the body is
// encoded: not empty and not "identity".
bool is_encoded(std::string_view content_encoding);

// Watches the requests of one transfer as its redirects are followed: once one went to https,
// a later one to plain http is refused before it is sent. (CURLOPT_REDIR_PROTOCOLS_STR only
// says which schemes any hop may use: an http URL must be allowed to go to https, and so could
// come back to http after it.) Installed by apply_connection_options; must outlive the transfer.
struct RedirectGuard {
    CURL* easy = nullptr;
    bool reached_https = false;
    std::string refused_url;  // the http URL refused after https; "" iff none was

    // CURLOPT_PREREQFUNCTION: called before each request of the transfer, redirects included.
    static int on_request(void* guard, char* primary_ip, char* local_ip, int primary_port,
                          int local_port);
};

// Returns the CURLOPT_PROXYAUTH bits for dnf's proxy_auth_method name ("any" for an unknown one).
long proxy_auth_bits(std::string_view method);

// Sets on `easy` the options common to every transfer of `url`: redirects (at most
// options.max_redirects; from https only to https, from http to http or https, never back from
// https to http: `guard` watches that), content decoding (a body a server sends with
// Content-Encoding gzip or deflate, asked for or not, is received decoded; `headers` from
// append_request_headers keep the request from asking), connect timeout, low-speed abort,
// keep-alive, TLS verification (OCSP status with sslverifystatus) and client certificate,
// proxy (its authentication method and its own TLS settings), basic auth, IP version,
// `user_agent` and `headers` (which must outlive the transfer). Resets `guard`.
void apply_connection_options(CURL* easy, const DownloadOptions& options, std::string_view url,
                              const std::string& user_agent, curl_slist* headers,
                              RedirectGuard& guard);

// Turns content decoding off for `easy` (after apply_connection_options): the body is received
// as sent, whatever its Content-Encoding.
void receive_body_as_sent(CURL* easy);

// Returns what went wrong with a transfer of `requested_url` that ended with `code`: curl's
// message (`error_buffer` if set), and for a redirect refused by its scheme (by curl, or by
// `guard` as a downgrade to http), the target named.
std::string describe_curl_failure(CURL* easy, CURLcode code, std::string_view requested_url,
                                  const char* error_buffer, const RedirectGuard& guard);

// Runs the transfer of `easy` alone in `multi` (which must run no other transfer meanwhile: its
// connections are reused and stay open for later ones) to its end and returns its result, or
// nullopt iff `stop` was requested first (the transfer is abandoned then). A stop request wakes
// the wait at once. Defined in fetch_document.cpp.
std::optional<CURLcode> perform_in(CURLM* multi, CURL* easy, const std::stop_token& stop);

// perform_in a multi handle of its own (no connection outlives the transfer).
std::optional<CURLcode> perform_alone(CURL* easy, const std::stop_token& stop);

// rpmirror::fetch_document in `multi` (as perform_in), or in a multi handle of its own iff
// `multi` is null.
Result<std::string> fetch_document_in(CURLM* multi, const std::string& url,
                                      const DownloadOptions& options, std::uint64_t max_bytes,
                                      std::stop_token stop, std::int64_t* last_modified);

}  // namespace rpmirror::download
