// `rpmirror serve` started in the background and curl as its client: what the serve tests over a
// directory (serve_fixture.hpp) and over a bucket (tests/integration/s3) share.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "integration/sync/sync_harness.hpp"

namespace rpmirror::test {

// One response as curl saw it.
struct HttpReply {
    int status = 0;
    std::map<std::string, std::string> headers;  // names lowercased; the last of each kept
    std::string body;
    long downloaded = -1;  // body bytes received (curl's size_download)
};

// Starts `argv` (an `rpmirror serve` listening on a port it chooses), its output in `log_dir`,
// into `server`, and waits for the address it prints: `base` is then "http://ADDR:PORT". Fails
// the test if the server ends first.
inline void start_serve(const std::vector<std::string>& argv, const std::filesystem::path& log_dir,
                        std::unique_ptr<RunningCommand>& server, std::string& base) {
    server = std::make_unique<RunningCommand>(argv, log_dir);
    const std::string marker = "listening on http://";
    ASSERT_TRUE(wait_until([&] {
        return server->err().find(marker) != std::string::npos || server->try_wait();
    })) << server->err();
    const std::string err = server->err();
    const std::size_t at = err.find(marker);
    ASSERT_NE(at, std::string::npos) << err;
    const std::size_t end = err.find('/', at + marker.size());
    base = "http://" + err.substr(at + marker.size(), end - at - marker.size());
}

// `curl` of `url` sent as it is (--path-as-is) with `headers`, HEAD iff `head`; its files in
// `work` (a new directory). Fails the test iff curl fails.
inline HttpReply http_request(const std::string& url, const std::filesystem::path& work,
                              const std::vector<std::string>& headers = {}, bool head = false) {
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
    argv.push_back(url);
    const CommandResult result = run_to_end(argv, work / "logs");
    EXPECT_EQ(result.exit_code, 0) << url << ": " << result.err;
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

}  // namespace rpmirror::test
