// See counters.hpp.
#include "serve/counters.hpp"

#include <fmt/core.h>

#include "report/metrics.hpp"

namespace rpmirror::serve {

namespace {

struct Family {
    const char* name;
    const char* help;
    std::atomic<std::uint64_t> JobCounters::*counter;
    const char* type = "counter";
};

constexpr Family kFamilies[] = {
    {"rpmirror_serve_requests_total", "HTTP requests received", &JobCounters::requests},
    {"rpmirror_serve_hits_total", "requests answered from the mirror (200, 206, 304, 416)",
     &JobCounters::hits},
    {"rpmirror_serve_misses_total", "requests answered 404 (not listed, or listed and not held)",
     &JobCounters::misses},
    {"rpmirror_serve_refused_total", "requests for a path that could leave the mirror (404)",
     &JobCounters::refused},
    {"rpmirror_serve_errors_total", "requests answered with a server error (5xx)",
     &JobCounters::errors},
    {"rpmirror_serve_sent_bytes_total", "response body bytes sent", &JobCounters::bytes},
    {"rpmirror_serve_upstream_fetches_total", "packages fetched from upstream on demand",
     &JobCounters::upstream_fetches},
    {"rpmirror_serve_upstream_failures_total",
     "packages not fetched from upstream, or not matching the metadata",
     &JobCounters::upstream_failures},
    {"rpmirror_serve_upstream_fetch_milliseconds_total", "time spent fetching from upstream",
     &JobCounters::upstream_milliseconds},
    {"rpmirror_serve_evictions_total",
     "packages removed to keep the mirror under cache-max-size (least recently served first)",
     &JobCounters::evictions},
    {"rpmirror_serve_held_bytes", "bytes of packages the mirror holds (jobs with cache-max-size)",
     &JobCounters::held_bytes, "gauge"},
};

}  // namespace

ServeCounters::ServeCounters(const std::vector<std::string>& jobs) {
    jobs_.try_emplace("");
    for (const std::string& name : jobs) {
        jobs_.try_emplace(name);
    }
}

JobCounters& ServeCounters::job(std::string_view name) {
    const auto found = jobs_.find(name);
    return found == jobs_.end() ? jobs_.at("") : found->second;
}

std::string ServeCounters::text() const {
    std::string text;
    for (const Family& family : kFamilies) {
        text += fmt::format("# HELP {} {}\n# TYPE {} {}\n", family.name, family.help, family.name,
                            family.type);
        for (const auto& [name, counters] : jobs_) {
            text += fmt::format("{}{{job=\"{}\"}} {}\n", family.name, escape_label_value(name),
                                (counters.*family.counter).load(std::memory_order_relaxed));
        }
    }
    return text;
}

}  // namespace rpmirror::serve
