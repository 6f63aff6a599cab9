// `rpmirror sync` over HTTPS: nginx with a server certificate from a CA the test makes (openssl
// CLI), configured as a user would, with .repo files and --setopt: an untrusted certificate is
// refused, sslcacert= trusts it, sslclientcert=/sslclientkey= answer a server that requires a
// client certificate, sslverify=0 turns verification off (dnf's semantics), an http baseurl
// answering 301 to https is followed, and a redirect from https to plain http is refused, also
// when the https URL was itself reached by a redirect from http.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "integration/sync/sync_fixture.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

class SyncTls : public SyncFixture {
  protected:
    void SetUp() override {
        SyncFixture::SetUp();
        if (IsSkipped()) {
            return;
        }
        make_certificates();
    }

    // A CA, a server certificate for 127.0.0.1 and a client certificate, both signed by the CA.
    void make_certificates() {
        fs::create_directories(pki_);
        TempDir::write_at(pki_ / "server.ext", "subjectAltName=IP:127.0.0.1\n");
        TempDir::write_at(pki_ / "client.ext", "extendedKeyUsage=clientAuth\n");
        const std::string ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
        const std::string script =
            "set -e; cd \"$0\"\n"
            "openssl req -x509 " +
            ec +
            " -days 2 -subj /CN=rpmirror-test-ca -keyout ca.key "
            "-out ca.pem\n"
            "for who in server client; do\n"
            "  openssl req " +
            ec +
            " -subj /CN=127.0.0.1 -keyout $who.key -out $who.csr\n"
            "  openssl x509 -req -in $who.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 "
            "-extfile $who.ext -out $who.pem\n"
            "done\n";
        run_checked({"sh", "-c", script, pki_.string()}, tmp_ / "logs");
    }

    // Starts nginx over TLS serving the sample repository (requiring a client certificate from
    // the CA iff `require_client_certificate`), and writes the .repo file for it with `extra`
    // lines; returns the server.
    NginxServer& serve_tls(bool require_client_certificate, const std::string& extra,
                           const std::string& extra_server_config = {}) {
        NginxOptions options;
        options.tls_certificate = pki_ / "server.pem";
        options.tls_key = pki_ / "server.key";
        if (require_client_certificate) {
            options.tls_client_ca = pki_ / "ca.pem";
        }
        options.extra_server_config = extra_server_config;
        servers_.push_back(std::make_unique<NginxServer>(
            test_repo("sample-repo"), tmp_ / ("nginx-tls-" + std::to_string(servers_.size())),
            options));
        NginxServer& server = *servers_.back();
        TempDir::write_at(tmp_ / "empty-reposdir" / "secure.repo",
                          "[secure]\nname=secure\nbaseurl=" + server.url("/") + "\n" + extra);
        return server;
    }

    // Starts plain-http nginx answering every request with `status` to the same path under
    // `target_base` (e.g. "https://127.0.0.1:PORT"), and returns it.
    NginxServer& serve_redirect(const std::string& target_base, int status = 301) {
        NginxOptions options;
        options.extra_server_config = "    location / { return " + std::to_string(status) + " " +
                                      target_base + "$request_uri; }";
        servers_.push_back(std::make_unique<NginxServer>(
            tmp_ / "nothing", tmp_ / ("nginx-redirect-" + std::to_string(servers_.size())),
            options));
        return *servers_.back();
    }

    // Writes secure.repo with `baseurl` and the test CA trusted.
    void write_repo(const std::string& baseurl) {
        TempDir::write_at(tmp_ / "empty-reposdir" / "secure.repo",
                          "[secure]\nname=secure\nbaseurl=" + baseurl +
                              "\nsslcacert=" + (pki_ / "ca.pem").string() + "\n");
    }

    // Returns the URIs of `server`'s access log entries with `status`, once it has logged at
    // least `at_least` requests.
    static std::vector<std::string> uris_with_status(const NginxServer& server, int status,
                                                     std::size_t at_least) {
        std::vector<std::string> uris;
        for (const auto& entry : server.access_log(at_least)) {
            if (entry.value("status", 0) == status) {
                uris.push_back(entry.value("uri", ""));
            }
        }
        return uris;
    }

    CommandResult sync_secure(const std::vector<std::string>& extra = {}) {
        std::vector<std::string> args{"--repo", "secure", "-p", mirror_.string()};
        args.insert(args.end(), extra.begin(), extra.end());
        return sync(args);
    }

    void expect_mirrored(const CommandResult& result) {
        EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
        EXPECT_EQ(tree_digests(mirror_ / "secure" / "Packages"),
                  tree_digests(test_repo("sample-repo") / "Packages"));
    }

    void expect_failed(const CommandResult& result, const std::string& url,
                       const std::vector<std::string>& any_of) {
        EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
        EXPECT_NE(result.err.find("secure"), std::string::npos) << result.err;
        EXPECT_NE(result.err.find(url), std::string::npos) << result.err;
        bool named = false;
        for (const std::string& word : any_of) {
            named = named || result.err.find(word) != std::string::npos;
        }
        EXPECT_TRUE(named) << "says why:\n" << result.err;
        if (std::getenv("RPMIRROR_TEST_SHOW_ERRORS") != nullptr) {
            std::cout << result.err;
        }
        EXPECT_FALSE(fs::exists(mirror_ / "secure" / "Packages"));
    }

    fs::path pki_ = tmp_ / "pki";
    fs::path mirror_ = tmp_ / "mirror";
};

TEST_F(SyncTls, UntrustedCertificateFailsNamingTheProblemAndTheUrl) {
    NginxServer& server = serve_tls(false, "");

    const CommandResult result = sync_secure();

    expect_failed(result, server.url("/repodata/repomd.xml"),
                  {"SSL certificate problem: unable to get local issuer certificate"});
}

TEST_F(SyncTls, SslcacertInTheRepoFileTrustsTheServer) {
    serve_tls(false, "sslcacert=" + (pki_ / "ca.pem").string() + "\n");

    expect_mirrored(sync_secure());
}

TEST_F(SyncTls, ClientCertificateIsPresentedWhenTheServerRequiresOne) {
    serve_tls(true, "sslcacert=" + (pki_ / "ca.pem").string() +
                        "\nsslclientcert=" + (pki_ / "client.pem").string() +
                        "\nsslclientkey=" + (pki_ / "client.key").string() + "\n");

    expect_mirrored(sync_secure());
}

TEST_F(SyncTls, MissingClientCertificateFailsClearly) {
    NginxServer& server = serve_tls(true, "sslcacert=" + (pki_ / "ca.pem").string() + "\n");

    const CommandResult result = sync_secure();

    // nginx answers a request without a client certificate with 400 "No required SSL
    // certificate was sent".
    expect_failed(result, server.url("/repodata/repomd.xml"),
                  {"HTTP 400 (400 No required SSL certificate was sent)"});
}

TEST_F(SyncTls, SslverifyOffFromSetoptAcceptsTheUntrustedServer) {
    serve_tls(false, "");

    expect_mirrored(sync_secure({"--setopt=secure.sslverify=0"}));
}

TEST_F(SyncTls, RedirectFromHttpsToHttpIsRefused) {
    NginxServer& plain = serve(test_repo("sample-repo"));
    NginxServer& server = serve_tls(false, "sslcacert=" + (pki_ / "ca.pem").string() + "\n",
                                    "    location = /repodata/repomd.xml { return 302 " +
                                        plain.url("/repodata/repomd.xml") + "; }");

    const CommandResult result = sync_secure();

    expect_failed(result, server.url("/repodata/repomd.xml"),
                  {"refused redirect to '" + plain.url("/repodata/repomd.xml") +
                   "': only https redirects are followed"});
    EXPECT_TRUE(uris_since(plain, 0).empty()) << "the plain http server is never asked";
}

TEST_F(SyncTls, RedirectFromHttpToHttpsIsFollowed) {
    NginxServer& secure = serve_tls(false, "");
    NginxServer& plain = serve_redirect(secure.url());
    write_repo(plain.url("/"));

    expect_mirrored(sync_secure());

    // Every request went to http first and was sent on to https, where the files came from.
    const auto packages = package_digests(test_repo("sample-repo"));
    const std::vector<std::string> redirected = uris_with_status(plain, 301, packages.size() + 1);
    EXPECT_EQ(redirected.size(), plain.access_log().size());
    EXPECT_NE(std::find(redirected.begin(), redirected.end(), "/repodata/repomd.xml"),
              redirected.end());
    const std::vector<std::string> served = uris_with_status(secure, 200, packages.size() + 1);
    EXPECT_NE(std::find(served.begin(), served.end(), "/repodata/repomd.xml"), served.end());
    EXPECT_EQ(package_uris(served).size(), packages.size());
    EXPECT_EQ(package_uris(redirected), package_uris(served));
}

TEST_F(SyncTls, RedirectFromHttpToHttpsAndBackToHttpIsRefused) {
    NginxServer& downgraded = serve(test_repo("sample-repo"));
    NginxServer& secure = serve_tls(false, "",
                                    "    location = /repodata/repomd.xml { return 302 " +
                                        downgraded.url("/repodata/repomd.xml") + "; }");
    NginxServer& plain = serve_redirect(secure.url());
    write_repo(plain.url("/"));

    const CommandResult result = sync_secure();

    expect_failed(result, plain.url("/repodata/repomd.xml"),
                  {"refused redirect to '" + downgraded.url("/repodata/repomd.xml") +
                   "': a redirect to https is never followed back to http"});
    EXPECT_TRUE(uris_since(downgraded, 0).empty()) << "the request to http is never sent";
}

TEST_F(SyncTls, PackageRedirectFromHttpToHttpsAndBackToHttpIsRefused) {
    NginxServer& downgraded = serve(test_repo("sample-repo"));
    NginxServer& secure = serve_tls(
        false, "", "    location /Packages/ { return 302 " + downgraded.url() + "$request_uri; }");
    NginxServer& plain = serve_redirect(secure.url());
    write_repo(plain.url("/"));

    const CommandResult result = sync_secure();

    EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
    const auto packages = package_digests(test_repo("sample-repo"));
    for (const auto& [href, digest] : packages) {
        EXPECT_NE(result.err.find(plain.url("/" + href) + ": refused redirect to '" +
                                  downgraded.url("/" + href) +
                                  "': a redirect to https is never followed back to http"),
                  std::string::npos)
            << result.err;
    }
    EXPECT_TRUE(uris_since(downgraded, 0).empty()) << "no request to http is ever sent";
    EXPECT_TRUE(tree_digests(mirror_ / "secure" / "Packages").empty());
}

}  // namespace
}  // namespace rpmirror::test
