// What every libcurl transfer of rpmirror shares, whether a package in the multi loop or a small
// document fetched on its own: connection, TLS, proxy, authentication and identity options, and
// the handling of file:// URLs.
#pragma once

#include <curl/curl.h>

#include <optional>
#include <string>
#include <string_view>

#include "rpmirror/download.hpp"

namespace rpmirror::download {

// Returns true iff `text` starts with `prefix`, ignoring ASCII case.
bool iequals_prefix(std::string_view text, std::string_view prefix);

// Returns the local path of a file:// URL (percent-decoded), or nullopt iff it is not one.
std::optional<std::string> file_url_path(std::string_view url);

// Returns the User-Agent for `options` ("rpmirror/<version>" unless set).
std::string user_agent_for(const DownloadOptions& options);

// Sets on `easy` the options common to every transfer of `url`: redirects (at most
// options.max_redirects, only to the scheme of `url`: https stays https, http stays http), no
// content decoding (bytes are stored as sent), connect timeout, low-speed abort, keep-alive, TLS
// verification and client certificate, proxy, basic auth, IP version, `user_agent` and `headers`
// (which must outlive the transfer).
void apply_connection_options(CURL* easy, const DownloadOptions& options, std::string_view url,
                              const std::string& user_agent, curl_slist* headers);

// Returns what went wrong with a transfer of `requested_url` that ended with `code`: curl's
// message (`error_buffer` if set), and for a redirect refused by its scheme, the target named.
std::string describe_curl_failure(CURL* easy, CURLcode code, std::string_view requested_url,
                                  const char* error_buffer);

}  // namespace rpmirror::download
