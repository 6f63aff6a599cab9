// dnf's proxy_auth_method names as libcurl's CURLOPT_PROXYAUTH bits (librepo's mapping).
#include <gtest/gtest.h>

#include "download/curl_options.hpp"

namespace rpmirror::download {
namespace {

TEST(CurlOptions, ProxyAuthMethodNamesMapToLibcurlBits) {
    EXPECT_EQ(proxy_auth_bits("any"), static_cast<long>(CURLAUTH_ANY));
    EXPECT_EQ(proxy_auth_bits("none"), static_cast<long>(CURLAUTH_NONE));
    EXPECT_EQ(proxy_auth_bits("basic"), static_cast<long>(CURLAUTH_BASIC));
    EXPECT_EQ(proxy_auth_bits("digest"), static_cast<long>(CURLAUTH_DIGEST));
    EXPECT_EQ(proxy_auth_bits("negotiate"), static_cast<long>(CURLAUTH_NEGOTIATE));
    EXPECT_EQ(proxy_auth_bits("ntlm"), static_cast<long>(CURLAUTH_NTLM));
    EXPECT_EQ(proxy_auth_bits("digest_ie"), static_cast<long>(CURLAUTH_DIGEST_IE));
    EXPECT_EQ(proxy_auth_bits("ntlm_wb"), 1L << 5);
}

}  // namespace
}  // namespace rpmirror::download
