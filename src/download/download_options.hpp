// How files are downloaded (DownloadOptions: concurrency, retries, timeouts, TLS, proxy,
// authentication): what the downloader (download/download.hpp) takes.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "rpmirror/download/download_options.hpp"
#include "rpmirror/download/ip_resolve.hpp"

namespace rpmirror {

// A connection budget shared by several downloads (the library makes it).
class ConnectionBudget;

struct DownloadOptions {
    // Concurrency. `max_parallel` transfers run at once (1..256); `max_per_host` connections per
    // host (0 = max_parallel). With HTTP/2, transfers to one host share a connection.
    unsigned max_parallel = 16;
    unsigned max_per_host = 0;
    // Cleartext http:// URLs: speak HTTP/2 without upgrade (h2c "prior knowledge"). Off by
    // default: most servers only speak HTTP/1.1 in clear text. https:// uses HTTP/2 whenever the
    // server offers it through ALPN. With libcurl < 8.0, which fails on a reused h2c connection
    // (curl#10634), every h2c transfer gets its own connection.
    bool http2_prior_knowledge = false;

    // Failures. `retries` = attempts a file may make beyond its first one, over all mirrors.
    // Transient failures (connection refused/reset, timeout, 408/429/5xx) back off exponentially
    // from `retry_base_delay` (doubling, with jitter, at most `max_retry_delay`); a Retry-After
    // header is honoured up to `max_retry_after`.
    unsigned retries = 10;
    std::chrono::milliseconds retry_base_delay{500};
    std::chrono::milliseconds max_retry_delay{30'000};
    std::chrono::milliseconds max_retry_after{300'000};
    bool fail_fast = false;  // stop starting transfers after the first file fails for good
    unsigned demote_mirror_after = 3;

    std::chrono::seconds connect_timeout{30};
    std::uint64_t minrate = 1000;             // low-speed abort: below `minrate` bytes/s ...
    std::chrono::seconds low_speed_time{30};  // ... for this long (dnf's `timeout`)
    std::uint64_t throttle = 0;               // bytes/s shared by all transfers; 0 = unlimited
    unsigned max_redirects = 6;

    // TLS, proxy, authentication, identity.
    bool sslverify = true;
    std::string sslcacert;
    std::string sslclientcert;
    std::string sslclientkey;
    std::string proxy;  // "http://host:port", "socks5h://..."; empty = libcurl's default (env)
    std::string proxy_username;
    std::string proxy_password;
    // How to authenticate to the proxy: dnf's proxy_auth_method ("any", "none", "basic",
    // "digest", "negotiate", "ntlm", "digest_ie", "ntlm_wb").
    std::string proxy_auth_method = "any";
    bool proxy_sslverify = true;  // TLS to an https:// proxy
    std::string proxy_sslcacert;
    std::string proxy_sslclientcert;
    std::string proxy_sslclientkey;
    bool sslverifystatus = false;  // require a good OCSP status (stapled) from the server
    std::string username;          // basic auth
    std::string password;
    std::string user_agent;            // empty = "rpmirror/<version>"
    std::vector<std::string> headers;  // extra request headers, "Name: value"
    IpResolve ip_resolve = IpResolve::Any;

    // --remote-time: a downloaded file gets the server's Last-Modified time (whole seconds, atime
    // and mtime, as librepo sets them) before its checksum cache is written; a file the server
    // sends no time for keeps its download time. Files copied from file:// mirrors and complete
    // .part leftovers keep theirs.
    bool preserve_remote_time = false;

    // Where bodies are hashed when the run has one event loop (see `loops`). 0 = in curl's write
    // callback, on the loop thread; N > 0 = N worker threads hash copies of the received blocks
    // (each transfer stays on one worker, in order); the write into the .part is always in the
    // write callback. See doc/benchmarks.md "Download engine" for the measurement behind the
    // default.
    unsigned io_threads = 1;

    // Event loops. A run of many files on a machine of several cores is split between loops of
    // their own (each its own thread, curl multi handle and share of max_parallel and of
    // max_per_host, the files dealt out by size), each writing and hashing its bodies in its
    // own write callback (io_threads does not apply): receiving and writing into the page cache
    // then use every core, where one loop keeps one core busy while the others wait
    // (doc/benchmarks.md "One event loop per core"). 0 = as many as the machine has cores, at most
    // 4; 1 = one loop. One loop is used anyway with fail_fast, a throttle or a budget (whose limits
    // and order span every file), and for fewer than 8 files per loop.
    unsigned loops = 0;

    // One large file over several connections (--connections-per-file, --segment-min-size): a
    // file of known size of at least `segment_min_size` bytes, all of whose mirrors are http(s),
    // is fetched as `connections_per_file` byte ranges at once (1 = off; at most 64; never ranges
    // below 1 MiB), handed to the mirrors in turn, each written at its offset into the one .part.
    // Once every range is in, the file is hashed from disk and published as any other file. A
    // failed range is retried alone (another mirror first, the file's retries per range). A
    // server that answers a range with 200, or with a 206 for other bytes, makes the file fall
    // back to one connection; a segmented file that fails its check is fetched again over one
    // connection from the next mirror. A stopped segmented file keeps the bytes before its first
    // gap for a resume over one connection (a killed one may have gaps: the resume then fails
    // its check and starts over).
    unsigned connections_per_file = 1;
    std::uint64_t segment_min_size = std::uint64_t{64} << 20;

    // A connection budget shared with other Downloaders (possibly on other threads): each
    // transfer attempt then also needs one of its tokens, taken when the attempt starts and
    // given back when it ends, whatever the outcome; max_parallel and max_per_host still apply
    // to this Downloader alone. Null = this Downloader's own limits only.
    std::shared_ptr<ConnectionBudget> budget;
};

}  // namespace rpmirror
