// `rpmirror serve` end to end: a mirror made by the real sync, served by the real binary, read by
// dnf and curl; ranges and conditional requests; hostile paths; a new publication picked up with
// the old revision's records still served.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "checksum/hasher.hpp"
#include "integration/serve/serve_fixture.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "support/nginx.hpp"
#include "support/source_tree.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

class ServeTest : public ServeFixture {
  protected:
    // How many requests for `path` the server's access log shows, answered with 200.
    std::size_t served(const std::string& path) const {
        const std::string line = "\"GET " + path + "\" 200";
        const std::string log = server_log();
        std::size_t count = 0;
        for (std::size_t at = log.find(line); at != std::string::npos;
             at = log.find(line, at + line.size())) {
            ++count;
        }
        return count;
    }

    // nginx's configuration of dist/nginx/rpmirror-serve.conf for this test: listening on
    // 127.0.0.1:`port` with the certificate and key of `pki`, the mirror directory as its root,
    // the running server as its upstream. Throws (failing the test) iff the example no longer
    // has a line this replaces.
    std::string front_config(int port, const fs::path& pki) const {
        std::string conf = read_file(source_root() / "dist" / "nginx" / "rpmirror-serve.conf");
        const auto replace = [&conf](const std::string& from, const std::string& to) {
            const std::size_t at = conf.find(from);
            if (at == std::string::npos) {
                throw std::runtime_error("dist/nginx/rpmirror-serve.conf: no '" + from + "'");
            }
            conf.replace(at, from.size(), to);
        };
        replace("listen 443 ssl http2;",
                "listen 127.0.0.1:" + std::to_string(port) + " ssl http2;");
        replace("listen [::]:443 ssl http2;", "");
        replace("/etc/ssl/certs/mirror.example.org.pem", (pki / "cert.pem").string());
        replace("/etc/ssl/private/mirror.example.org.key", (pki / "key.pem").string());
        replace("root /srv/rpmirror;", "root " + mirror_root().string() + ";");
        replace("server 127.0.0.1:8080;", "server " + base_.substr(base_.find("//") + 2) + ";");
        return conf;
    }
};

TEST_F(ServeTest, DnfReadsAndDownloadsTheMirrorThroughServe) {
    sync_job();
    start_server();
    const std::vector<std::string> dnf = isolated_dnf(tmp_ / "dnf");
    std::vector<std::string> query = dnf;
    query.insert(query.end(), {"--repofrompath=m," + url("/sample/"), "--repo=m", "repoquery", "-a",
                               "--qf", "%{name}"});
    const CommandResult listed = run_to_end(query, tmp_ / "logs");
    ASSERT_EQ(listed.exit_code, 0) << listed.err << server_log();
    EXPECT_EQ(lines_of(listed.out).size(), 5U) << listed.out;
    EXPECT_NE(listed.out.find("rpmirror-sample-tiny"), std::string::npos) << listed.out;

    std::vector<std::string> download = dnf;
    download.insert(download.end(),
                    {"--repofrompath=m," + url("/sample/"), "--repo=m", "download", "--destdir",
                     (tmp_ / "got").string(), "rpmirror-sample-medium"});
    const CommandResult got = run_to_end(download, tmp_ / "logs");
    ASSERT_EQ(got.exit_code, 0) << got.err << server_log();
    EXPECT_EQ(read_file(tmp_ / "got" / kMedium), read_file(mirror() / kMediumHref));
    // One access log line per request.
    EXPECT_NE(server_log().find("\"GET /sample/repodata/repomd.xml\" 200"), std::string::npos)
        << server_log();
    EXPECT_NE(server_log().find("\"GET /sample/" + kMediumHref + "\" 200"), std::string::npos)
        << server_log();
}

TEST_F(ServeTest, RangesHeadAndConditionalRequests) {
    sync_job();
    start_server();
    const std::string path = "/sample/" + kSmallHref;
    const std::string file = read_file(mirror() / kSmallHref);
    const std::string etag = "\"" + hash_bytes(ChecksumType::Sha256, file) + "\"";

    const HttpReply whole = get(path);
    ASSERT_EQ(whole.status, 200) << server_log();
    EXPECT_EQ(whole.body, file);
    EXPECT_EQ(whole.headers.at("content-length"), std::to_string(file.size()));
    EXPECT_EQ(whole.headers.at("etag"), etag) << "the metadata's checksum is the entity tag";
    EXPECT_EQ(whole.headers.at("accept-ranges"), "bytes");
    ASSERT_TRUE(whole.headers.contains("last-modified"));

    // One connection for several requests (keep-alive): the second transfer connects no more.
    const CommandResult two = run_to_end({"curl", "-sS", "-o", "/dev/null", "-o", "/dev/null", "-w",
                                          "%{num_connects}\n", url(path), url(path)},
                                         tmp_ / "logs");
    EXPECT_EQ(two.out, "1\n0\n") << two.err;

    const HttpReply head = get(path, {}, true);
    EXPECT_EQ(head.status, 200);
    EXPECT_EQ(head.headers.at("content-length"), std::to_string(file.size()));
    EXPECT_EQ(head.downloaded, 0) << "no body";

    const HttpReply first = get(path, {"Range: bytes=0-9"});
    EXPECT_EQ(first.status, 206);
    EXPECT_EQ(first.body, file.substr(0, 10));
    EXPECT_EQ(first.headers.at("content-range"), "bytes 0-9/" + std::to_string(file.size()));

    const HttpReply tail = get(path, {"Range: bytes=-7"});
    EXPECT_EQ(tail.status, 206);
    EXPECT_EQ(tail.body, file.substr(file.size() - 7));

    const HttpReply middle = get(path, {"Range: bytes=100-"});
    EXPECT_EQ(middle.status, 206);
    EXPECT_EQ(middle.body, file.substr(100));

    const HttpReply past = get(path, {"Range: bytes=" + std::to_string(file.size()) + "-"});
    EXPECT_EQ(past.status, 416);
    EXPECT_EQ(past.headers.at("content-range"), "bytes */" + std::to_string(file.size()));

    const HttpReply stale_if_range = get(path, {"Range: bytes=0-9", "If-Range: \"other\""});
    EXPECT_EQ(stale_if_range.status, 200);
    EXPECT_EQ(stale_if_range.body, file);

    const HttpReply cached = get(path, {"If-None-Match: " + etag});
    EXPECT_EQ(cached.status, 304);
    EXPECT_TRUE(cached.body.empty());
    EXPECT_EQ(get(path, {"If-None-Match: \"other\""}).status, 200);
    const HttpReply since = get(path, {"If-Modified-Since: " + whole.headers.at("last-modified")});
    EXPECT_EQ(since.status, 304);

    const HttpReply repomd = get("/sample/repodata/repomd.xml");
    EXPECT_EQ(repomd.status, 200);
    EXPECT_EQ(repomd.body, read_file(mirror() / "repodata" / "repomd.xml"));
    EXPECT_EQ(
        get("/sample/repodata/repomd.xml", {"If-None-Match: " + repomd.headers.at("etag")}).status,
        304);
}

TEST_F(ServeTest, OnlyListedFilesAndNoHostilePath) {
    sync_job();
    const std::string secret = "secret bytes that must never be served\n";
    TempDir::write_at(mirror() / "secret.txt", secret);
    TempDir::write_at(mirror_root() / "outside.txt", secret);
    TempDir::write_at(tmp_ / "outside.rpm", secret);
    // A listed package replaced by a symlink to a file outside the mirror.
    fs::remove(mirror() / kDataHref);
    fs::create_symlink(tmp_ / "outside.rpm", mirror() / kDataHref);
    fs::create_symlink(tmp_.path(), mirror() / "escape");
    start_server();
    const std::vector<std::string> refused{
        "/sample/secret.txt",
        "/sample/../outside.txt",
        "/sample/%2e%2e/outside.txt",
        "/sample/%2E%2E/outside.txt",
        "/sample/Packages/..%2f..%2fsecret.txt",
        "/sample/Packages/%2e%2e/secret.txt",
        "/sample/Packages\\..\\secret.txt",
        "/sample/./secret.txt",
        "/sample//secret.txt",
        "/sample/escape/outside.rpm",
        "/sample/" + kDataHref,
        "/sample/repodata/",
        "/sample/",
        "/",
        "/other/repodata/repomd.xml",
        "/sample/%00/secret.txt",
        "/sample/.rpmirror/treeinfo.json",
        "/%2e%2e/etc/passwd",
        "/sample/../../../../../../etc/passwd",
    };
    for (const std::string& path : refused) {
        const HttpReply reply = get(path);
        EXPECT_EQ(reply.status, 404) << path << "\n" << server_log();
        EXPECT_EQ(reply.body.find("secret bytes"), std::string::npos) << path;
        EXPECT_EQ(reply.body.find("root:"), std::string::npos) << path;
    }
    EXPECT_EQ(get("/sample/" + kTinyHref).status, 200) << "listed files are still served";
}

TEST_F(ServeTest, ANewPublicationIsServedAndTheOldRecordsStayForTheGracePeriod) {
    sync_job();
    start_server();
    const HttpReply old_index = get("/sample/repodata/repomd.xml");
    ASSERT_EQ(old_index.status, 200);
    const fs::path old_primary = only_file_ending(mirror() / "repodata", "-primary.xml.gz");
    const std::string old_primary_bytes = read_file(old_primary);
    const std::string old_primary_path = "/sample/repodata/" + old_primary.filename().string();

    fs::remove(upstream_ / kDocsHref);
    recreate_repo(upstream_, "2", tmp_ / "logs");
    sync_job();
    ASSERT_FALSE(fs::exists(old_primary)) << "the sync removed the old revision's records";

    const HttpReply new_index = get("/sample/repodata/repomd.xml");
    ASSERT_EQ(new_index.status, 200);
    EXPECT_EQ(new_index.body, read_file(mirror() / "repodata" / "repomd.xml"));
    EXPECT_NE(new_index.headers.at("etag"), old_index.headers.at("etag"));
    const fs::path new_primary = only_file_ending(mirror() / "repodata", "-primary.xml.gz");
    EXPECT_EQ(get("/sample/repodata/" + new_primary.filename().string()).body,
              read_file(new_primary));
    const HttpReply old = get(old_primary_path);
    EXPECT_EQ(old.status, 200) << "a client that read the old repomd.xml still gets its primary";
    EXPECT_EQ(old.body, old_primary_bytes);
    EXPECT_EQ(get("/sample/" + kDocsHref).status, 200)
        << "the old revision lists it, and it is held";

    // Without a grace period only the current revision is served.
    start_server({"--grace", "0"});
    EXPECT_EQ(get(old_primary_path).status, 404);
    EXPECT_EQ(get("/sample/" + kDocsHref).status, 404) << "no longer listed";
    EXPECT_EQ(get("/sample/" + kTinyHref).status, 200);
}

TEST_F(ServeTest, MetricsCountRequestsHitsMissesAndBytes) {
    sync_job();
    start_server();
    const std::string file = read_file(mirror() / kTinyHref);
    EXPECT_EQ(get("/sample/" + kTinyHref).status, 200);
    EXPECT_EQ(get("/sample/" + kTinyHref, {"Range: bytes=0-4"}).status, 206);
    EXPECT_EQ(get("/sample/not-listed.rpm").status, 404);
    EXPECT_EQ(get("/sample/%2e%2e/x").status, 404);
    const HttpReply metrics = get("/metrics");
    ASSERT_EQ(metrics.status, 200);
    EXPECT_EQ(metrics.headers.at("content-type"), "text/plain; version=0.0.4");
    const std::vector<std::string> lines = lines_of(metrics.body);
    const auto has = [&](const std::string& line) {
        return std::find(lines.begin(), lines.end(), line) != lines.end();
    };
    EXPECT_TRUE(has("# TYPE rpmirror_serve_requests_total counter")) << metrics.body;
    EXPECT_TRUE(has("rpmirror_serve_requests_total{job=\"sample\"} 3")) << metrics.body;
    EXPECT_TRUE(has("rpmirror_serve_hits_total{job=\"sample\"} 2")) << metrics.body;
    EXPECT_TRUE(has("rpmirror_serve_misses_total{job=\"sample\"} 1")) << metrics.body;
    EXPECT_TRUE(
        has("rpmirror_serve_sent_bytes_total{job=\"sample\"} " + std::to_string(file.size() + 5)))
        << metrics.body;
    EXPECT_TRUE(has("rpmirror_serve_refused_total{job=\"\"} 1")) << metrics.body;
    EXPECT_TRUE(has("rpmirror_serve_errors_total{job=\"sample\"} 0")) << metrics.body;
}

TEST_F(ServeTest, TwentyClientsAtOnceEachGetEveryPackageIntact) {
    sync_job();
    start_server();
    const std::vector<std::string> hrefs{kTinyHref, kSmallHref, kMediumHref, kDocsHref, kDataHref};
    std::vector<std::string> argv{"curl", "-sS", "--fail", "-Z", "--parallel-max", "20"};
    for (int client = 0; client < 20; ++client) {
        for (std::size_t i = 0; i < hrefs.size(); ++i) {
            argv.insert(argv.end(),
                        {"-o", (tmp_ / "got" / std::to_string(client) / hrefs[i]).string(),
                         "--create-dirs", url("/sample/" + hrefs[i])});
        }
    }
    const CommandResult fetched = run_to_end(argv, tmp_ / "logs");
    ASSERT_EQ(fetched.exit_code, 0) << fetched.err << server_log();
    for (int client = 0; client < 20; ++client) {
        for (const std::string& href : hrefs) {
            EXPECT_EQ(read_file(tmp_ / "got" / std::to_string(client) / href),
                      read_file(mirror() / href))
                << client << " " << href;
        }
    }
}

TEST_F(ServeTest, ListenInMainIsTheDefaultAddress) {
    sync_job();
    std::string config = read_file(config_);
    config.insert(config.find("[main]\n") + 7, "listen = 127.0.0.1:0\n");
    TempDir::write_at(config_, config);
    start_server({}, false);
    EXPECT_EQ(get("/sample/repodata/repomd.xml").status, 200) << server_log();
}

TEST_F(ServeTest, BadCommandLinesAndMethods) {
    const CommandResult no_address =
        run_to_end({rpmirror_binary(), "serve", "--config-file", config_.string()}, tmp_ / "logs");
    EXPECT_EQ(no_address.exit_code, 2);
    EXPECT_NE(no_address.err.find("no address to listen on"), std::string::npos) << no_address.err;
    const CommandResult bad_address = run_to_end(
        {rpmirror_binary(), "serve", "--config-file", config_.string(), "--listen", "127.0.0.1"},
        tmp_ / "logs");
    EXPECT_EQ(bad_address.exit_code, 2);
    EXPECT_NE(bad_address.err.find("listen address '127.0.0.1': expected ADDR:PORT"),
              std::string::npos)
        << bad_address.err;
    const CommandResult no_job =
        run_to_end({rpmirror_binary(), "serve", "--config-file", config_.string(), "--job",
                    "nothing", "--listen", "127.0.0.1:0"},
                   tmp_ / "logs");
    EXPECT_EQ(no_job.exit_code, 2);
    EXPECT_NE(no_job.err.find("nothing"), std::string::npos) << no_job.err;

    sync_job();
    start_server();
    const CommandResult post = run_to_end({"curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}",
                                           "-X", "POST", url("/sample/repodata/repomd.xml")},
                                          tmp_ / "logs");
    EXPECT_EQ(post.out, "405");
    server_->signal(SIGTERM);
    EXPECT_EQ(server_->wait(), 0) << "a server stopped by SIGTERM ends well\n" << server_log();
}

// The example of nginx in front (dist/nginx/rpmirror-serve.conf) with this test's port, a
// self-signed certificate, the mirror directory and the server: over TLS and HTTP/2, a package an
// on-demand mirror holds is sent by nginx from the directory; one it does not hold yet and the
// metadata come from rpmirror serve; every byte intact; hidden names are refused.
TEST_F(ServeTest, NginxInFrontSendsHeldPackagesAndPassesTheRestToServe) {
    TempDir::write_at(config_, read_file(config_) + "download-policy = on-demand\n");
    sync_job();
    start_server();
    ASSERT_EQ(get("/sample/" + kTinyHref).status, 200) << server_log();
    ASSERT_TRUE(fs::is_regular_file(mirror() / kTinyHref)) << "held now";
    TempDir::write_at(mirror() / "Packages" / ".hidden.rpm", "not for clients");
    const fs::path pki = tmp_ / "pki";
    fs::create_directories(pki);
    run_checked({"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                 "/CN=127.0.0.1", "-keyout", (pki / "key.pem").string(), "-out",
                 (pki / "cert.pem").string()},
                tmp_ / "logs");
    NginxOptions options;
    options.servers = [&](int port) { return front_config(port, pki); };
    const NginxServer front(mirror_root(), tmp_ / "front", options);
    const std::string https = "https://127.0.0.1:" + std::to_string(front.port());
    // curl over HTTP/2 (by ALPN), trusting the self-signed certificate (-k).
    const auto fetch = [&](const std::string& path, const fs::path& out) {
        return run_to_end({"curl", "-sS", "-k", "--http2", "-o", out.string(), "-w",
                           "%{http_code} %{http_version}", https + path},
                          tmp_ / "logs");
    };

    const CommandResult held = fetch("/sample/" + kTinyHref, tmp_ / "tiny.rpm");
    EXPECT_EQ(held.out, "200 2") << held.err;
    EXPECT_EQ(read_file(tmp_ / "tiny.rpm"), read_file(upstream_ / kTinyHref));
    const std::vector<nlohmann::json> sent = front.access_log(1);
    ASSERT_EQ(sent.size(), 1U);
    EXPECT_EQ(sent[0].at("uri"), "/sample/" + kTinyHref);
    EXPECT_EQ(sent[0].at("status"), 200);
    EXPECT_EQ(sent[0].at("protocol"), "HTTP/2.0");
    EXPECT_EQ(sent[0].at("bytes"), fs::file_size(upstream_ / kTinyHref));

    const CommandResult missed = fetch("/sample/" + kMediumHref, tmp_ / "medium.rpm");
    EXPECT_EQ(missed.out, "200 2") << missed.err << server_log();
    EXPECT_EQ(read_file(tmp_ / "medium.rpm"), read_file(upstream_ / kMediumHref));
    EXPECT_TRUE(wait_until([&] { return served("/sample/" + kMediumHref) == 1; }))
        << "passed to rpmirror serve\n"
        << server_log();
    EXPECT_EQ(read_file(mirror() / kMediumHref), read_file(upstream_ / kMediumHref))
        << "fetched, verified and kept by rpmirror serve";

    const CommandResult repomd = fetch("/sample/repodata/repomd.xml", tmp_ / "repomd.xml");
    EXPECT_EQ(repomd.out, "200 2") << repomd.err;
    EXPECT_EQ(read_file(tmp_ / "repomd.xml"), read_file(mirror() / "repodata" / "repomd.xml"));
    EXPECT_TRUE(wait_until([&] { return served("/sample/repodata/repomd.xml") == 1; }))
        << server_log();

    const CommandResult hidden = fetch("/sample/Packages/.hidden.rpm", tmp_ / "hidden");
    EXPECT_EQ(hidden.out, "404 2") << hidden.err;
    EXPECT_EQ(served("/sample/" + kTinyHref), 1U) << "the held package was sent by nginx alone\n"
                                                  << server_log();
}

// Socket activation as systemd does it (rpmirror-serve.socket): a bound, listening socket passed
// as descriptor 3 with LISTEN_PID and LISTEN_FDS, and no listen address anywhere: the server
// answers on that socket. Variables meant for another process are ignored.
TEST_F(ServeTest, ServesOnASocketSystemdPasses) {
    sync_job();
    const UniqueFd created(::socket(AF_INET, SOCK_STREAM, 0));
    ASSERT_GE(created.get(), 0);
    // Above the descriptors the shell below redirects, and inherited (no close-on-exec).
    const UniqueFd listening(::fcntl(created.get(), F_DUPFD, 10));
    ASSERT_GE(listening.get(), 10);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    ASSERT_EQ(::bind(listening.get(), reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    ASSERT_EQ(::listen(listening.get(), 16), 0);
    ASSERT_EQ(::getsockname(listening.get(), reinterpret_cast<sockaddr*>(&address), &length), 0);
    // As systemd execs a service: the socket at descriptor 3, LISTEN_PID the server's own pid (the
    // shell's, which exec keeps).
    const std::string fd = std::to_string(listening.get());
    start_serve(
        {"bash", "-c", "export LISTEN_PID=$$ LISTEN_FDS=1; exec \"$@\" 3<&" + fd + " " + fd + "<&-",
         "bash", rpmirror_binary(), "serve", "--config-file", config_.string()},
        tmp_ / "activated-logs", server_, base_);
    EXPECT_EQ(base_, "http://127.0.0.1:" + std::to_string(ntohs(address.sin_port)));
    const HttpReply reply = get("/sample/repodata/repomd.xml");
    EXPECT_EQ(reply.status, 200) << server_log();
    EXPECT_EQ(reply.body, read_file(mirror() / "repodata" / "repomd.xml"));

    const CommandResult other =
        run_to_end({"env", "LISTEN_PID=1", "LISTEN_FDS=1", rpmirror_binary(), "serve",
                    "--config-file", config_.string()},
                   tmp_ / "logs");
    EXPECT_EQ(other.exit_code, 2);
    EXPECT_NE(other.err.find("no address to listen on"), std::string::npos) << other.err;

    // Meant for it but wrong: a count that is no number, a descriptor that is no listening
    // socket (3 closed here). A configuration error naming the variable or the descriptor.
    for (const auto& [setting, expected] : std::vector<std::pair<std::string, std::string>>{
             {"LISTEN_FDS=two", "LISTEN_FDS='two' (socket activation)"},
             {"LISTEN_FDS=1", "descriptor 3 (socket activation)"}}) {
        const CommandResult wrong =
            run_to_end({"bash", "-c", "export LISTEN_PID=$$ " + setting + "; exec \"$@\" 3<&-",
                        "bash", rpmirror_binary(), "serve", "--config-file", config_.string()},
                       tmp_ / "logs");
        EXPECT_EQ(wrong.exit_code, 2) << setting;
        EXPECT_NE(wrong.err.find(expected), std::string::npos) << wrong.err;
    }
}

// A client reading the mirror's metadata in a loop (python3: argv URL, stop file, seen file).
constexpr const char* kMetadataClient =
    "# A client of the mirror at argv[1] reading its metadata over and over until the file "
    "argv[2]\n"
    "# exists: repomd.xml, then every record it lists, each checked against the checksum "
    "repomd.xml\n"
    "# gives; every revision read whole is appended to argv[3]. A record of another revision or "
    "an\n"
    "# error ends it with a message and a non-zero status.\n"
    "import hashlib, os, re, sys, urllib.request\n"
    "base, stop, seen = sys.argv[1], sys.argv[2], sys.argv[3]\n"
    "revisions = set()\n"
    "while not os.path.exists(stop):\n"
    "    repomd = urllib.request.urlopen(base + \"repodata/repomd.xml\").read()\n"
    "    revision = re.search(rb\"<revision>([^<]*)</revision>\", repomd).group(1).decode()\n"
    "    for record in re.findall(rb\"<data type=.*?</data>\", repomd, re.S):\n"
    "        checksum = re.search(rb'<checksum type=\"sha256\">([0-9a-f]+)</checksum>', "
    "record).group(1)\n"
    "        href = re.search(rb'<location href=\"([^\"]+)\"', record).group(1).decode()\n"
    "        body = urllib.request.urlopen(base + href).read()\n"
    "        if hashlib.sha256(body).hexdigest() != checksum.decode():\n"
    "            sys.exit(f\"revision {revision}: {href} is not the one its repomd.xml lists\")\n"
    "    if revision not in revisions:\n"
    "        revisions.add(revision)\n"
    "        with open(seen, \"a\") as out:\n"
    "            out.write(revision + \"\\n\")\n";

// Metadata switched while clients read it: four clients read repomd.xml and every record it
// lists in a loop, each record checked against its checksum there, while three syncs publish new
// revisions (a package removed, back, removed); a record of another revision, or a 404, ends a
// client with an error. Each sync waits until every client has read the revision before it.
TEST_F(ServeTest, MetadataSwitchedWhileClientsReadNoClientSeesAMixOfRevisions) {
    sync_job();
    start_server();
    TempDir::write_at(tmp_ / "client.py", kMetadataClient);
    const fs::path stop = tmp_ / "stop";
    constexpr int kClients = 4;
    std::vector<std::unique_ptr<RunningCommand>> clients;
    std::vector<std::optional<int>> ended(kClients);
    for (int i = 0; i < kClients; ++i) {
        clients.push_back(std::make_unique<RunningCommand>(
            std::vector<std::string>{"python3", (tmp_ / "client.py").string(), url("/sample/"),
                                     stop.string(),
                                     (tmp_ / ("seen-" + std::to_string(i))).string()},
            tmp_ / ("client-" + std::to_string(i))));
    }
    // True once every client has read the mirror's current revision whole (or has ended).
    const auto all_read_current = [&] {
        const std::string index = read_file(mirror() / "repodata" / "repomd.xml");
        const std::size_t open = index.find("<revision>") + std::string("<revision>").size();
        const std::string revision = index.substr(open, index.find("</revision>") - open);
        for (int i = 0; i < kClients; ++i) {
            if (!ended[i]) {
                ended[i] = clients[i]->try_wait();
            }
            const fs::path seen = tmp_ / ("seen-" + std::to_string(i));
            if (!ended[i] &&
                (!fs::exists(seen) || read_file(seen).find(revision + "\n") == std::string::npos)) {
                return false;
            }
        }
        return true;
    };
    const fs::path docs = tmp_ / "docs.rpm";
    fs::copy_file(upstream_ / kDocsHref, docs);
    for (int revision = 2; revision <= 4; ++revision) {
        ASSERT_TRUE(wait_until(all_read_current)) << server_log();
        if (revision % 2 == 0) {
            fs::remove(upstream_ / kDocsHref);
        } else {
            fs::copy_file(docs, upstream_ / kDocsHref);
        }
        recreate_repo(upstream_, std::to_string(revision), tmp_ / "logs");
        sync_job();
    }
    ASSERT_TRUE(wait_until(all_read_current)) << server_log();
    TempDir::write_at(stop, "");
    for (int i = 0; i < kClients; ++i) {
        const int status = ended[i] ? *ended[i] : clients[i]->wait();
        EXPECT_EQ(status, 0) << "client " << i << ": " << clients[i]->err();
        EXPECT_EQ(lines_of(read_file(tmp_ / ("seen-" + std::to_string(i)))).size(), 4U)
            << "client " << i << " read every revision";
    }
}

}  // namespace
}  // namespace rpmirror::test
