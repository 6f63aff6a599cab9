// The fixture of the `rpmirror serve` end-to-end tests: an upstream nginx serving a copy of the
// sample repository, a job of rpmirror.conf mirroring it with the real `rpmirror sync`, the real
// `rpmirror serve` in the background, and curl as a client.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "integration/sync/sync_fixture.hpp"

namespace rpmirror::test {

// One response as curl saw it.
struct HttpReply {
    int status = 0;
    std::map<std::string, std::string> headers;  // names lowercased; the last of each kept
    std::string body;
    long downloaded = -1;  // body bytes received (curl's size_download)
};

class ServeFixture : public SyncFixture {
  protected:
    void SetUp() override {
        SyncFixture::SetUp();
        upstream_ = copy_repo(test_repo("sample-repo"), tmp_ / "upstream");
        config_ = TempDir::write_at(tmp_ / "etc" / "rpmirror.conf",
                                    "[main]\ndestination = " + mirror_root().string() +
                                        "\n\n[sample]\nbaseurl = " + serve(upstream_).url("/") +
                                        "\ndownload-metadata = 1\n");
    }

    std::filesystem::path mirror_root() const { return tmp_ / "mirror"; }
    std::filesystem::path mirror() const { return mirror_root() / "sample"; }

    // `rpmirror sync --config-file` of the fixture's configuration; fails the test unless it ends
    // well.
    void sync_job() {
        const CommandResult result =
            run_to_end(rpmirror_sync_argv({"--config-file", config_.string()}), tmp_ / "logs");
        expect_no_sanitizer_report(result.err);
        ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    }

    // Starts `rpmirror serve` on a free loopback port (--listen, unless `listen_option` is false:
    // then the configuration's `listen =`) with `extra` arguments and waits for the address it
    // prints.
    void start_server(const std::vector<std::string>& extra = {}, bool listen_option = true) {
        std::vector<std::string> argv;
        if (!server_env_.empty()) {
            argv.push_back("env");
            argv.insert(argv.end(), server_env_.begin(), server_env_.end());
        }
        argv.insert(argv.end(), {rpmirror_binary(), "serve", "--config-file", config_.string()});
        if (listen_option) {
            argv.insert(argv.end(), {"--listen", "127.0.0.1:0"});
        }
        argv.insert(argv.end(), extra.begin(), extra.end());
        // Logs of their own: a restarted server's address is never read from the last one's.
        server_ = std::make_unique<RunningCommand>(
            argv, tmp_ / ("serve-logs-" + std::to_string(++servers_started_)));
        const std::string marker = "listening on http://";
        ASSERT_TRUE(wait_until([&] {
            return server_->err().find(marker) != std::string::npos || server_->try_wait();
        })) << server_->err();
        const std::string err = server_->err();
        const std::size_t at = err.find(marker);
        ASSERT_NE(at, std::string::npos) << err;
        const std::size_t end = err.find('/', at + marker.size());
        base_ = "http://" + err.substr(at + marker.size(), end - at - marker.size());
    }

    // The server's URL of `path` ("/sample/repodata/repomd.xml").
    std::string url(const std::string& path) const { return base_ + path; }

    // `curl` of `path` sent as it is (--path-as-is) with `headers`; HEAD iff `head`.
    HttpReply get(const std::string& path, const std::vector<std::string>& headers = {},
                  bool head = false) {
        const auto work = tmp_ / ("curl-" + std::to_string(++requests_));
        std::filesystem::create_directories(work);
        std::vector<std::string> argv{"curl",
                                      "-sS",
                                      "--path-as-is",
                                      "-w",
                                      "%{size_download}",
                                      "-D",
                                      (work / "headers").string(),
                                      "-o",
                                      (work / "body").string()};
        for (const std::string& header : headers) {
            argv.insert(argv.end(), {"-H", header});
        }
        if (head) {
            argv.push_back("-I");
        }
        argv.push_back(url(path));
        const CommandResult result = run_to_end(argv, work / "logs");
        EXPECT_EQ(result.exit_code, 0) << path << ": " << result.err;
        HttpReply reply;
        reply.downloaded = std::stol(result.out.empty() ? "-1" : result.out);
        for (const std::string& line : lines_of(read_file(work / "headers"))) {
            if (line.starts_with("HTTP/")) {
                reply.status = std::stoi(line.substr(line.find(' ') + 1, 3));
                reply.headers.clear();
                continue;
            }
            const std::size_t colon = line.find(':');
            if (colon == std::string::npos) {
                continue;
            }
            std::string name = line.substr(0, colon);
            std::transform(name.begin(), name.end(), name.begin(),
                           [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
            std::string value = line.substr(colon + 1);
            value.erase(0, value.find_first_not_of(' '));
            while (!value.empty() && (value.back() == '\r' || value.back() == ' ')) {
                value.pop_back();
            }
            reply.headers[name] = value;
        }
        if (!head && std::filesystem::exists(work / "body")) {
            reply.body = read_file(work / "body");
        }
        return reply;
    }

    std::string server_log() const { return server_ ? server_->err() : std::string(); }

    std::filesystem::path upstream_;
    std::filesystem::path config_;
    std::unique_ptr<RunningCommand> server_;
    std::vector<std::string> server_env_;  // "NAME=value" set for the server (start_server)
    int servers_started_ = 0;
    std::string base_;
    int requests_ = 0;
};

}  // namespace rpmirror::test
