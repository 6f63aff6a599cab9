// `rpmirror serve`: an HTTP server over the mirrors of an rpmirror.conf (every enabled job, or
// those named). Each job's published repository is served at /<job name>/ through the job's
// store (a directory or a bucket prefix): repodata/repomd.xml, the records it lists, its
// signature and the packages primary lists, and nothing else (404). GET and HEAD, one byte range
// (206/416), ETag and Last-Modified with If-None-Match, If-Modified-Since and If-Range (304).
// A sync's new publication is picked up when repomd.xml changes; the revision it replaced stays
// servable for a grace period.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "rpmirror/jobs/jobs_config.hpp"
#include "rpmirror/util/error.hpp"

namespace rpmirror {

struct ServeRequest {
    std::filesystem::path config_file = kDefaultJobsConfigFile;
    std::vector<std::string> job_patterns;  // --job (fnmatch globs); empty: the enabled jobs
    // --listen ADDR:PORT ("127.0.0.1:8080", "[::1]:8080", "0.0.0.0:0" for any free port); empty:
    // [main] listen.
    std::vector<std::string> listen;
    // How long the files of a revision a publication replaced are still served.
    std::chrono::seconds grace{600};
    // --cache-max-size: the bound of every on-demand job's held packages, in bytes, instead of
    // its job key cache-max-size; nullopt: each job's own (0: none).
    std::optional<std::uint64_t> cache_max_size;
    // The keys of `job`'s live mirror its kept snapshots hold: cache-max-size never removes
    // those. Asked at each removal pass, from a server thread; null: nothing is protected.
    std::function<Result<std::unordered_set<std::string>>(const JobConfig& job)> snapshot_keys;
};

// What the server tells as it runs. Called from the server's threads, one call at a time.
class ServeEvents {
  public:
    virtual ~ServeEvents() = default;
    // Serving `job` from `location` (its destination).
    virtual void serving(std::string_view job, std::string_view location) = 0;
    // Listening at `address` ("127.0.0.1:38211": the port bound when 0 was asked).
    virtual void listening(std::string_view address) = 0;
    // A complete message about something that did not stop the server (a configuration warning,
    // a job with nothing published yet, a reload that failed).
    virtual void warning(std::string_view message) = 0;
    // One access log line per request: `CLIENT "METHOD PATH" STATUS BYTES[ reason]`.
    virtual void access(std::string_view line) = 0;
};

// Loads the configuration, opens each selected job's store and serves until `stop` is requested.
// Returns Error{BadInput} naming the file or option iff the configuration cannot be loaded, no job
// is selected, a job is invalid or no listen address is given, or iff an address does not parse;
// Error{Io} naming the address iff it cannot be listened on. Nothing is served unless all the
// addresses are listened on.
Result<void> run_server(const ServeRequest& request, ServeEvents& events, std::stop_token stop);

}  // namespace rpmirror
