// The download engine against a real nginx on loopback (started by the test): a whole
// repository in parallel, HTTP/2 (h2c) multiplexing, and Range resume, asserted through nginx's
// access log.
#include <gtest/gtest.h>

#include <curl/curl.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <set>
#include <span>

#include "download_test_support.hpp"
#include "support/nginx.hpp"

namespace rpmirror {
namespace {

using test::content_bytes;
using test::make_request;
using test::read_all;

// Returns the first failure of `report`, for assertion messages.
std::string first_failure(const DownloadReport& report) {
    std::string all;
    for (const auto& file : report.files) {
        all += std::string(file_status_name(file.status)) + ":";
        for (const auto& attempt : file.attempts) {
            all += " [" + attempt.url + " " + attempt.outcome + "]";
        }
        all += "\n";
    }
    return all;
}

class NginxDownloadTest : public ::testing::Test {
  protected:
    void SetUp() override {
        if (!test::nginx_available()) {
            GTEST_FAIL() << test::kNginxMissing;
        }
        std::filesystem::create_directories(dir_.path() / "srv");
    }

    // Creates `count` packages of varied sizes under srv/Packages/<letter>/.
    std::vector<std::pair<std::string, std::string>> make_repository(int count) {
        std::vector<std::pair<std::string, std::string>> files;
        for (int index = 0; index < count; ++index) {
            const std::string href = std::string("Packages/") + static_cast<char>('a' + index % 5) +
                                     "/pkg-" + std::to_string(index) + ".rpm";
            const std::size_t size = 1000 + (static_cast<std::size_t>(index) * 37'003) % 400'000;
            std::string body = content_bytes(size, 100 + static_cast<std::uint64_t>(index));
            const auto path = dir_.path() / "srv" / href;
            std::filesystem::create_directories(path.parent_path());
            std::ofstream(path, std::ios::binary) << body;
            files.emplace_back(href, std::move(body));
        }
        return files;
    }

    // One request per file of `files` (href, body), on `mirrors`.
    static std::vector<DownloadRequest> requests_for(
        const std::shared_ptr<MirrorList>& mirrors,
        const std::vector<std::pair<std::string, std::string>>& files) {
        std::vector<DownloadRequest> requests;
        for (const auto& [href, body] : files) {
            requests.push_back(make_request(mirrors, href, body));
        }
        return requests;
    }

    // Writes a self-signed certificate for 127.0.0.1 and its key (PEM).
    static void make_certificate(const std::filesystem::path& certificate,
                                 const std::filesystem::path& key) {
        const std::string command =
            "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 -addext "
            "subjectAltName=IP:127.0.0.1 -keyout " +
            key.string() + " -out " + certificate.string() + " > /dev/null 2>&1";
        ASSERT_EQ(std::system(command.c_str()), 0);  // NOLINT(cert-env33-c)
    }

    test::TempDir dir_;
};

TEST_F(NginxDownloadTest, DownloadsARepositoryInParallel) {
    const auto files = make_repository(40);
    test::NginxServer nginx(dir_.path() / "srv", dir_.path() / "nginx");
    auto mirrors = std::make_shared<MirrorList>(std::vector<std::string>{nginx.url("/")});
    const std::vector<DownloadRequest> requests = requests_for(mirrors, files);
    DownloadOptions options;
    options.max_parallel = 4;
    Downloader downloader(options);
    auto report = downloader.run(dir_.path() / "dest", requests);
    ASSERT_TRUE(report.has_value());
    ASSERT_TRUE(report->ok()) << first_failure(*report);
    EXPECT_EQ(report->downloaded, files.size());
    for (const auto& [href, body] : files) {
        ASSERT_EQ(read_all(dir_.path() / "dest" / href), body) << href;
    }
    const auto log = nginx.access_log(files.size());
    ASSERT_EQ(log.size(), files.size());
    std::set<std::string> uris;
    std::set<long> connections;
    for (const auto& entry : log) {
        EXPECT_EQ(entry["method"], "GET");
        EXPECT_EQ(entry["status"], 200);
        EXPECT_EQ(entry["range"], "");
        EXPECT_EQ(entry["protocol"], "HTTP/1.1");
        uris.insert(entry["uri"].get<std::string>());
        connections.insert(entry["connection"].get<long>());
    }
    EXPECT_EQ(uris.size(), files.size());  // each file requested exactly once
    EXPECT_LE(connections.size(), 4U);     // keep-alive, at most max_parallel connections
}

// Records a run's events, and whether two ever overlapped.
class RecordingProgress : public ProgressSink {
  public:
    void run_started(std::size_t files, std::uint64_t bytes) override {
        enter();
        ++runs;
        started_files = files;
        started_bytes = bytes;
        finished.assign(files, 0);
        leave();
    }
    void progress(std::uint64_t bytes_done, std::uint64_t bytes_total) override {
        enter();
        last_done = bytes_done;
        last_total = bytes_total;
        leave();
    }
    void file_finished(std::size_t request_index, const FileResult& result) override {
        enter();
        if (request_index < finished.size() && result.status == FileStatus::Downloaded) {
            ++finished[request_index];
        }
        leave();
    }

    int runs = 0;
    std::size_t started_files = 0;
    std::uint64_t started_bytes = 0;
    std::uint64_t last_done = 0;
    std::uint64_t last_total = 0;
    std::vector<int> finished;  // Downloaded events per request index
    std::atomic<bool> overlapped{false};

  private:
    void enter() {
        if (inside_.exchange(true)) {
            overlapped = true;
        }
    }
    void leave() { inside_ = false; }
    std::atomic<bool> inside_{false};
};

// A run split between event loops (DownloadOptions::loops): every file arrives whole and is
// reported under its own request index, the loops together never open more connections than
// max_parallel (asserted from nginx's log), and the progress events come one at a time with the
// bytes of all loops added up.
TEST_F(NginxDownloadTest, SeveralEventLoopsShareTheLimitsAndReportEachFileUnderItsIndex) {
    const auto files = make_repository(40);
    test::NginxServer nginx(dir_.path() / "srv", dir_.path() / "nginx");
    auto mirrors = std::make_shared<MirrorList>(std::vector<std::string>{nginx.url("/")});
    const std::vector<DownloadRequest> requests = requests_for(mirrors, files);
    std::uint64_t total = 0;
    for (const auto& [href, body] : files) {
        total += body.size();
    }
    DownloadOptions options;
    options.max_parallel = 4;
    options.loops = 3;
    Downloader downloader(options);
    RecordingProgress events;
    auto report = downloader.run(dir_.path() / "dest", requests, &events);
    ASSERT_TRUE(report.has_value());
    ASSERT_TRUE(report->ok()) << first_failure(*report);
    EXPECT_EQ(report->downloaded, files.size());
    EXPECT_EQ(report->bytes_received, total);
    for (std::size_t index = 0; index < files.size(); ++index) {
        const auto& [href, body] = files[index];
        ASSERT_EQ(read_all(dir_.path() / "dest" / href), body) << href;
        ASSERT_EQ(report->files[index].status, FileStatus::Downloaded) << href;
        ASSERT_FALSE(report->files[index].attempts.empty()) << href;
        EXPECT_NE(report->files[index].attempts.back().url.find(href), std::string::npos)
            << "the result of request " << index << " is another file's";
        EXPECT_EQ(events.finished[index], 1) << href;
    }
    EXPECT_EQ(events.runs, 1);
    EXPECT_EQ(events.started_files, files.size());
    EXPECT_EQ(events.started_bytes, total);
    EXPECT_EQ(events.last_done, total);
    EXPECT_EQ(events.last_total, total);
    EXPECT_FALSE(events.overlapped) << "progress events of two loops overlapped";
    const auto log = nginx.access_log(files.size());
    ASSERT_EQ(log.size(), files.size());
    std::set<long> connections;
    for (const auto& entry : log) {
        connections.insert(entry["connection"].get<long>());
    }
    EXPECT_GE(connections.size(), 3U) << "each loop has connections of its own";
    EXPECT_LE(connections.size(), 4U) << "the loops together hold at most max_parallel";
}

// A sync's documents (mirrorlist, repomd.xml, its signature) and the transfers after them go over
// one Downloader's connections: each request reuses the connection the one before opened (a new
// connection per document cost a round trip each; 20 ms apiece on a WAN link).
TEST_F(NginxDownloadTest, DocumentsAndTransfersReuseTheDownloadersConnection) {
    const auto files = make_repository(3);
    std::ofstream(dir_.path() / "srv" / "mirror.list") << "http://example.invalid/\n";
    test::NginxServer nginx(dir_.path() / "srv", dir_.path() / "nginx");
    DownloadOptions options;
    options.max_parallel = 1;
    Downloader downloader(options);
    auto list = downloader.fetch_document(nginx.url("/mirror.list"));
    ASSERT_TRUE(list.has_value()) << list.error().to_string();
    EXPECT_EQ(*list, "http://example.invalid/\n");
    auto missing = downloader.fetch_document(nginx.url("/repodata/repomd.xml.asc"));
    ASSERT_FALSE(missing.has_value());
    EXPECT_EQ(missing.error().code, ErrorCode::NotFound);
    auto mirrors = std::make_shared<MirrorList>(std::vector<std::string>{nginx.url("/")});
    auto report = downloader.run(dir_.path() / "dest", requests_for(mirrors, files));
    ASSERT_TRUE(report.has_value());
    ASSERT_TRUE(report->ok()) << first_failure(*report);
    auto again = downloader.fetch_document(nginx.url("/mirror.list"));
    ASSERT_TRUE(again.has_value()) << again.error().to_string();
    const auto log = nginx.access_log(files.size() + 3);
    ASSERT_EQ(log.size(), files.size() + 3);
    std::set<long> connections;
    for (const auto& entry : log) {
        connections.insert(entry["connection"].get<long>());
    }
    EXPECT_EQ(connections.size(), 1U) << "every request on the first one's connection";
}

// Asserts from nginx's log (what the server saw, not the client's clock) that every request of
// `log` began before the first of them ended: no transfer waited for another. Each response
// takes seconds (limit_rate), the requests' starts differ by milliseconds.
void expect_all_began_before_the_first_ended(const std::vector<nlohmann::json>& log) {
    ASSERT_FALSE(log.empty());
    double first_end = 0;
    for (const auto& entry : log) {
        const double end = entry["end"].get<double>();
        first_end = first_end == 0 ? end : std::min(first_end, end);
    }
    for (const auto& entry : log) {
        const double began = entry["end"].get<double>() - entry["duration"].get<double>();
        EXPECT_LT(began, first_end - 0.5) << entry["uri"] << " began " << began
                                          << ", after the first response ended at " << first_end;
    }
}

// Four files over a fresh Downloader (no connection yet): with CURLOPT_PIPEWAIT on plain http,
// libcurl held the others back until the first ended, waiting for a connection that might
// multiplex (HTTP/1.1 is learnt only from a response there). Plain http, and https answering
// HTTP/1.1 (ALPN tells at once; each request is sent once, none restarted).
TEST_F(NginxDownloadTest, NoTransferWaitsForAnotherOnAServerThatDoesNotMultiplex) {
    const auto certificate = dir_.path() / "cert.pem";
    const auto key = dir_.path() / "key.pem";
    ASSERT_NO_FATAL_FAILURE(make_certificate(certificate, key));
    std::vector<std::pair<std::string, std::string>> files;
    for (int index = 0; index < 4; ++index) {
        const std::string href = "Packages/slow-" + std::to_string(index) + ".rpm";
        std::string body = content_bytes(192 * 1024, 300 + static_cast<std::uint64_t>(index));
        std::filesystem::create_directories(dir_.path() / "srv/Packages");
        std::ofstream(dir_.path() / "srv" / href, std::ios::binary) << body;
        files.emplace_back(href, std::move(body));
    }
    for (const bool tls : {false, true}) {
        SCOPED_TRACE(tls ? "https" : "http");
        test::NginxOptions slow;
        slow.extra_server_config = "    limit_rate 64k;\n";  // 192 KiB: 64 KiB at once, then 2 s
        if (tls) {
            slow.tls_certificate = certificate;
            slow.tls_key = key;
        }
        const std::string name = tls ? "https" : "http";
        test::NginxServer nginx(dir_.path() / "srv", dir_.path() / ("nginx-" + name), slow);
        auto mirrors = std::make_shared<MirrorList>(std::vector<std::string>{nginx.url("/")});
        const std::vector<DownloadRequest> requests = requests_for(mirrors, files);
        DownloadOptions options;
        options.max_parallel = 8;
        options.sslcacert = certificate.string();
        Downloader downloader(options);
        auto report = downloader.run(dir_.path() / ("dest-" + name), requests);
        ASSERT_TRUE(report.has_value());
        ASSERT_TRUE(report->ok()) << first_failure(*report);
        const auto log = nginx.access_log(files.size());
        ASSERT_EQ(log.size(), files.size());
        for (const auto& entry : log) {
            EXPECT_EQ(entry["protocol"], "HTTP/1.1");
        }
        expect_all_began_before_the_first_ended(log);
    }
}

TEST_F(NginxDownloadTest, Http2OverTlsMultiplexesTransfersOnOneConnection) {
    const auto certificate = dir_.path() / "cert.pem";
    const auto key = dir_.path() / "key.pem";
    ASSERT_NO_FATAL_FAILURE(make_certificate(certificate, key));
    const auto files = make_repository(24);
    test::NginxOptions tls;
    tls.http2 = true;
    tls.tls_certificate = certificate;
    tls.tls_key = key;
    test::NginxServer nginx(dir_.path() / "srv", dir_.path() / "nginx", tls);
    auto mirrors = std::make_shared<MirrorList>(std::vector<std::string>{nginx.url("/")});
    const std::vector<DownloadRequest> requests = requests_for(mirrors, files);
    // Without the CA, verification (on by default) refuses the self-signed certificate.
    DownloadOptions options;
    options.max_parallel = 8;
    options.retries = 0;
    auto refused = Downloader(options).run(dir_.path() / "refused", std::span(requests.data(), 1));
    ASSERT_TRUE(refused.has_value());
    EXPECT_EQ(refused->failed, 1U);
    EXPECT_TRUE(refused->files[0].attempts.at(0).permanent);

    options.sslcacert = certificate.string();
    for (const unsigned loops : {1U, 2U}) {
        // Every stream of a loop on the loop's first connection (PIPEWAIT): one per loop.
        options.loops = loops;
        Downloader downloader(options);
        const auto dest = dir_.path() / ("dest-" + std::to_string(loops));
        auto report = downloader.run(dest, requests);
        ASSERT_TRUE(report.has_value());
        ASSERT_TRUE(report->ok()) << first_failure(*report);
        const auto log = nginx.access_log(files.size() * loops);
        ASSERT_EQ(log.size(), files.size() * loops);
        std::set<long> connections;
        for (std::size_t entry = files.size() * (loops - 1); entry < log.size(); ++entry) {
            EXPECT_EQ(log[entry]["protocol"], "HTTP/2.0");
            connections.insert(log[entry]["connection"].get<long>());
        }
        EXPECT_EQ(connections.size(), loops) << loops << " loops";
    }
}

TEST_F(NginxDownloadTest, CleartextHttp2WithPriorKnowledge) {
    const auto files = make_repository(12);
    test::NginxOptions h2c;
    h2c.http2 = true;
    test::NginxServer nginx(dir_.path() / "srv", dir_.path() / "nginx", h2c);
    auto mirrors = std::make_shared<MirrorList>(std::vector<std::string>{nginx.url("/")});
    const std::vector<DownloadRequest> requests = requests_for(mirrors, files);
    DownloadOptions options;
    options.max_parallel = 4;
    options.http2_prior_knowledge = true;
    Downloader downloader(options);
    auto report = downloader.run(dir_.path() / "dest", requests);
    ASSERT_TRUE(report.has_value());
    ASSERT_TRUE(report->ok()) << first_failure(*report);
    const auto log = nginx.access_log(files.size());
    ASSERT_EQ(log.size(), files.size());
    std::set<long> connections;
    for (const auto& entry : log) {
        EXPECT_EQ(entry["protocol"], "HTTP/2.0");
        connections.insert(entry["connection"].get<long>());
    }
    if (curl_version_info(CURLVERSION_NOW)->version_num >= 0x080000) {
        EXPECT_EQ(connections.size(), 1U);
    } else {
        EXPECT_EQ(connections.size(), files.size());  // curl#10634 workaround: no reuse
    }
}

TEST_F(NginxDownloadTest, TruncatedPartIsResumedWithRange) {
    const auto files = make_repository(1);
    const auto& [href, body] = files[0];
    const auto dest = dir_.path() / "dest";
    std::filesystem::create_directories((dest / href).parent_path());
    const std::size_t kept = body.size() / 3;
    std::ofstream(dest / "Packages/a" / part_file_name("pkg-0.rpm"), std::ios::binary)
        << body.substr(0, kept);
    test::NginxServer nginx(dir_.path() / "srv", dir_.path() / "nginx");
    auto mirrors = std::make_shared<MirrorList>(std::vector<std::string>{nginx.url("/")});
    Downloader downloader;
    auto report =
        downloader.run(dest, std::vector<DownloadRequest>{make_request(mirrors, href, body)});
    ASSERT_TRUE(report.has_value());
    ASSERT_TRUE(report->ok()) << first_failure(*report);
    EXPECT_EQ(read_all(dest / href), body);
    const auto log = nginx.access_log(1);
    ASSERT_EQ(log.size(), 1U);
    EXPECT_EQ(log[0]["status"], 206);
    EXPECT_EQ(log[0]["range"], "bytes=" + std::to_string(kept) + "-");
    EXPECT_EQ(log[0]["bytes"].get<std::size_t>(), body.size() - kept);
}

}  // namespace
}  // namespace rpmirror
