// The fixture of the `rpmirror serve` end-to-end tests: an upstream nginx serving a copy of the
// sample repository, a job of rpmirror.conf mirroring it with the real `rpmirror sync`, the real
// `rpmirror serve` in the background, and curl as a client.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "integration/serve/serve_client.hpp"
#include "integration/sync/sync_fixture.hpp"

namespace rpmirror::test {

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

    // The fixture's job with `lines` added ("download-policy = on-demand\n").
    void add_to_job(const std::string& lines) {
        TempDir::write_at(config_, read_file(config_) + lines);
    }

    // How many times the upstream nginx was asked for `href`, up to now.
    std::size_t upstream_requests(const std::string& href) {
        const std::vector<std::string> uris = uris_since(*servers_.front(), 0);
        return static_cast<std::size_t>(std::count(uris.begin(), uris.end(), "/" + href));
    }
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
        start_serve(argv, tmp_ / ("serve-logs-" + std::to_string(++servers_started_)), server_,
                    base_);
    }

    // The server's URL of `path` ("/sample/repodata/repomd.xml").
    std::string url(const std::string& path) const { return base_ + path; }

    // `curl` of `path` sent as it is (--path-as-is) with `headers`; HEAD iff `head`.
    HttpReply get(const std::string& path, const std::vector<std::string>& headers = {},
                  bool head = false) {
        return http_request(url(path), tmp_ / ("curl-" + std::to_string(++requests_)), headers,
                            head);
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
