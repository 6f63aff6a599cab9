// `rpmirror sync` over HTTPS: nginx with a server certificate from a CA the test makes (openssl
// CLI), configured as a user would, with .repo files and --setopt: an untrusted certificate is
// refused, sslcacert= trusts it, sslclientcert=/sslclientkey= answer a server that requires a
// client certificate, sslverify=0 turns verification off (dnf's semantics), and a redirect from
// the https repository to plain http is refused.
#include <gtest/gtest.h>

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

// The mirror tree holds nothing of rpmirror's own: its state lives in the state directory.
const std::set<std::string> kStateFile{};

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

}  // namespace
}  // namespace rpmirror::test
