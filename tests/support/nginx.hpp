// nginx serving a directory on a free 127.0.0.1 port, for tests and benchmarks: started as a
// child process (`nginx -p <dir> -c <generated conf> -g 'daemon off;'`, no master process),
// stopped in the destructor. Its access log is JSON lines that tests read. Header-only.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "support/http_server.hpp"

namespace rpmirror::test {

// Returns the nginx binary: the first executable `nginx` on PATH, else in /usr/sbin (where
// Debian's nginx packages put it, not on a normal user's PATH), /usr/local/sbin or /sbin; empty
// iff there is none.
inline std::filesystem::path nginx_binary() {
    std::vector<std::filesystem::path> dirs;
    if (const char* path = std::getenv("PATH")) {  // NOLINT(concurrency-mt-unsafe)
        std::string_view rest = path;
        while (!rest.empty()) {
            const std::size_t colon = rest.find(':');
            const std::string_view dir = rest.substr(0, colon);
            if (!dir.empty()) {
                dirs.emplace_back(dir);
            }
            rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
        }
    }
    for (const char* dir : {"/usr/sbin", "/usr/local/sbin", "/sbin"}) {
        dirs.emplace_back(dir);
    }
    for (const std::filesystem::path& dir : dirs) {
        const std::filesystem::path candidate = dir / "nginx";
        std::error_code error;
        if (std::filesystem::is_regular_file(candidate, error) &&
            ::access(candidate.c_str(), X_OK) == 0) {
            return candidate;
        }
    }
    return {};
}

// Returns true iff nginx_binary() finds nginx.
inline bool nginx_available() {
    return !nginx_binary().empty();
}

// The failure message of a test that needs nginx and finds none. Not a skip: scripts/deps installs
// nginx, so a missing nginx is a broken test environment, never a reason to pass.
inline constexpr const char* kNginxMissing =
    "nginx not found on PATH, in /usr/sbin, /usr/local/sbin or /sbin; "
    "scripts/deps installs it (Debian package nginx-light)";

struct NginxOptions {
    bool http2 = false;  // listen with `http2` (h2c without TLS: prior knowledge only)
    // With both set: HTTPS with this certificate and key (PEM files); http2 then means h2 by ALPN.
    std::filesystem::path tls_certificate;
    std::filesystem::path tls_key;
    // With TLS: require a client certificate signed by this CA (PEM), else answer 400.
    std::filesystem::path tls_client_ca;
    // Directives added verbatim inside the server block (e.g. a `location` that redirects).
    std::string extra_server_config;
    // When set: the http block's own server blocks, made for the port picked, in place of the
    // generated server (the other options are then unused; url() says http).
    std::function<std::string(int port)> servers;
};

class NginxServer {
  public:
    // Serves `root`; config, logs and temp dirs go to `work_dir`. Throws std::runtime_error iff
    // nginx does not come up (after retrying other ports on a bind conflict).
    NginxServer(const std::filesystem::path& root, const std::filesystem::path& work_dir,
                NginxOptions options = {})
        : work_dir_(work_dir), tls_(!options.tls_certificate.empty()) {
        const std::filesystem::path binary = nginx_binary();
        if (binary.empty()) {
            throw std::runtime_error(kNginxMissing);
        }
        std::filesystem::create_directories(work_dir / "tmp");
        for (int round = 0; round < 5; ++round) {
            port_ = pick_free_port();
            write_config(root, options);
            std::filesystem::remove(work_dir / "nginx.pid");
            process_ = ChildProcess({binary.string(), "-p", work_dir.string(), "-c",
                                     (work_dir / "nginx.conf").string(), "-e",
                                     (work_dir / "error.log").string(), "-g", "daemon off;"});
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
            while (std::chrono::steady_clock::now() < deadline) {
                // Up iff the port answers *and* it is this nginx that listens there: another
                // server may have taken the port between pick_free_port and nginx's bind, and
                // answer for it. nginx writes its pid file only once its sockets are bound.
                if (wrote_pid_file() && can_connect(port_)) {
                    return;
                }
                if (process_.exited()) {
                    break;  // most likely the port was taken in between: try another one
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            }
            process_.stop();
        }
        throw std::runtime_error("nginx did not start; see " + (work_dir / "error.log").string());
    }

    int port() const { return port_; }
    std::string url(const std::string& path = "") const {
        return std::string(tls_ ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_) +
               path;
    }

    // Returns the access log entries ({"method","uri","status","range","bytes","protocol",
    // "connection","agent","end","duration"}: "end" the time the response ended, seconds since
    // the epoch with milliseconds; "duration" its seconds from its first byte read, so a request
    // began at end - duration), waiting (up to 10 s) until there are at least `at_least`: nginx
    // logs a request after its last byte was sent, which may be just after the client saw it.
    std::vector<nlohmann::json> access_log(std::size_t at_least = 0) const {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        for (;;) {
            auto entries = read_json_lines(work_dir_ / "access.log");
            if (entries.size() >= at_least || std::chrono::steady_clock::now() > deadline) {
                return entries;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
    }

  private:
    // True iff nginx.pid holds this nginx's pid.
    bool wrote_pid_file() const {
        std::ifstream file(work_dir_ / "nginx.pid");
        pid_t pid = 0;
        return file >> pid && pid == process_.pid();
    }

    void write_config(const std::filesystem::path& root, const NginxOptions& options) const {
        const std::string dir = work_dir_.string();
        std::ofstream conf(work_dir_ / "nginx.conf");
        conf << "master_process off;\n"
             << "worker_processes 1;\n"
             << "pid " << dir << "/nginx.pid;\n"
             << "error_log " << dir << "/error.log warn;\n"
             << "events { worker_connections 1024; }\n"
             << "http {\n"
             << "  default_type application/octet-stream;\n"
             << "  log_format json escape=json '{\"method\":\"$request_method\",\"uri\":\"$uri\","
                "\"status\":$status,\"range\":\"$http_range\",\"bytes\":$body_bytes_sent,"
                "\"protocol\":\"$server_protocol\",\"connection\":$connection,"
                "\"agent\":\"$http_user_agent\",\"end\":$msec,\"duration\":$request_time}';\n"
             << "  access_log " << dir << "/access.log json;\n"
             << "  sendfile on;\n"
             << "  keepalive_requests 100000;\n"
             << "  client_body_temp_path " << dir << "/tmp/body;\n"
             << "  proxy_temp_path " << dir << "/tmp/proxy;\n"
             << "  fastcgi_temp_path " << dir << "/tmp/fastcgi;\n"
             << "  uwsgi_temp_path " << dir << "/tmp/uwsgi;\n"
             << "  scgi_temp_path " << dir << "/tmp/scgi;\n";
        if (options.servers) {
            conf << options.servers(port_) << "\n}\n";
            return;
        }
        conf << "  server {\n"
             << "    listen 127.0.0.1:" << port_ << (tls_ ? " ssl" : "")
             << (options.http2 ? " http2" : "") << ";\n";
        if (tls_) {
            conf << "    ssl_certificate " << options.tls_certificate.string() << ";\n"
                 << "    ssl_certificate_key " << options.tls_key.string() << ";\n";
            if (!options.tls_client_ca.empty()) {
                conf << "    ssl_client_certificate " << options.tls_client_ca.string() << ";\n"
                     << "    ssl_verify_client on;\n";
            }
        }
        conf << options.extra_server_config << "\n";
        conf << "    root " << root.string() << ";\n"
             << "  }\n"
             << "}\n";
    }

    std::filesystem::path work_dir_;
    bool tls_ = false;
    ChildProcess process_;
    int port_ = 0;
};

}  // namespace rpmirror::test
