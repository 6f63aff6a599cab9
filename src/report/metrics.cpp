// The Prometheus metrics file of sync runs (text exposition format 0.0.4).
#include "report/metrics.hpp"

#include <sys/file.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/core.h>

#include "fs/beneath.hpp"
#include "fs/durable.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror {

namespace {

struct Family {
    std::string_view name;
    std::string_view help;
    bool by_result;  // also labelled result="downloaded|kept|deleted|failed"
};

constexpr std::string_view kLastRun = "rpmirror_job_last_run_timestamp_seconds";
constexpr std::string_view kLastSuccess = "rpmirror_job_last_success_timestamp_seconds";
constexpr std::string_view kDuration = "rpmirror_job_duration_seconds";
constexpr std::string_view kSuccess = "rpmirror_job_success";
constexpr std::string_view kUpToDate = "rpmirror_job_up_to_date";
constexpr std::string_view kDownloadedBytes = "rpmirror_job_downloaded_bytes";
constexpr std::string_view kPackages = "rpmirror_job_packages";
constexpr std::string_view kSelected = "rpmirror_job_selected_packages";

constexpr std::array<Family, 8> kFamilies{{
    {kLastRun, "Unix time the last run of the job ended.", false},
    {kLastSuccess, "Unix time the last successful run of the job ended (0: never).", false},
    {kDuration, "Duration of the last run of the job, in seconds.", false},
    {kSuccess, "1 if the last run of the job succeeded, else 0.", false},
    {kUpToDate, "1 if the last run of the job succeeded and changed nothing, else 0.", false},
    {kDownloadedBytes, "Bytes downloaded by the last run of the job.", false},
    {kPackages, "Packages of the last run of the job, by result.", true},
    {kSelected, "Packages the filters of the job selected in its last run.", false},
}};

constexpr std::array<std::string_view, 4> kResults{"downloaded", "kept", "deleted", "failed"};

// One job's samples: series ("NAME" or "NAME|RESULT") -> value as written.
using JobSamples = std::map<std::string, std::string, std::less<>>;

std::string series_key(std::string_view name, std::string_view result = {}) {
    return result.empty() ? std::string(name) : fmt::format("{}|{}", name, result);
}

const Family* find_family(std::string_view name) {
    const auto found = std::find_if(kFamilies.begin(), kFamilies.end(),
                                    [&](const Family& family) { return family.name == name; });
    return found == kFamilies.end() ? nullptr : &*found;
}

}  // namespace

std::string escape_label_value(std::string_view value) {
    std::string escaped;
    escaped.reserve(value.size());
    for (const char character : value) {
        switch (character) {
            case '\\':
                escaped += "\\\\";
                break;
            case '"':
                escaped += "\\\"";
                break;
            case '\n':
                escaped += "\\n";
                break;
            default:
                escaped += character;
        }
    }
    return escaped;
}

namespace {

// A sample line `NAME{LABEL="VALUE",...} VALUE [TIMESTAMP]`, parsed.
struct Sample {
    std::string name;
    std::map<std::string, std::string, std::less<>> labels;
    std::string value;
};

// Parses one line of a metrics file; nullopt iff it is not a sample with labels.
std::optional<Sample> parse_sample(std::string_view line) {
    Sample sample;
    const std::size_t brace = line.find('{');
    if (brace == std::string_view::npos || brace == 0) {
        return std::nullopt;
    }
    sample.name = std::string(line.substr(0, brace));
    std::size_t at = brace + 1;
    for (;;) {
        while (at < line.size() && (line[at] == ' ' || line[at] == ',')) {
            ++at;
        }
        if (at >= line.size()) {
            return std::nullopt;
        }
        if (line[at] == '}') {
            ++at;
            break;
        }
        const std::size_t equals = line.find("=\"", at);
        if (equals == std::string_view::npos) {
            return std::nullopt;
        }
        std::string key(line.substr(at, equals - at));
        std::string value;
        at = equals + 2;
        for (;; ++at) {
            if (at >= line.size()) {
                return std::nullopt;
            }
            if (line[at] == '"') {
                ++at;
                break;
            }
            if (line[at] == '\\' && at + 1 < line.size()) {
                ++at;
                value += line[at] == 'n' ? '\n' : line[at];
            } else {
                value += line[at];
            }
        }
        sample.labels.emplace(std::move(key), std::move(value));
    }
    while (at < line.size() && line[at] == ' ') {
        ++at;
    }
    const std::size_t end = line.find(' ', at);
    sample.value = std::string(line.substr(at, end == std::string_view::npos ? end : end - at));
    if (sample.value.empty()) {
        return std::nullopt;
    }
    return sample;
}

// The rpmirror_job_* samples of a previous metrics file, by job.
std::map<std::string, JobSamples, std::less<>> parse_previous(std::string_view text) {
    std::map<std::string, JobSamples, std::less<>> jobs;
    while (!text.empty()) {
        const std::size_t newline = text.find('\n');
        const std::string_view line = text.substr(0, newline);
        text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
        if (line.empty() || line.front() == '#') {
            continue;
        }
        auto sample = parse_sample(line);
        if (!sample) {
            continue;
        }
        const Family* family = find_family(sample->name);
        const auto job = sample->labels.find("job");
        if (family == nullptr || job == sample->labels.end()) {
            continue;
        }
        std::string result;
        if (family->by_result) {
            const auto label = sample->labels.find("result");
            if (label == sample->labels.end() ||
                std::find(kResults.begin(), kResults.end(), label->second) == kResults.end()) {
                continue;
            }
            result = label->second;
        }
        jobs[job->second][series_key(family->name, result)] = sample->value;
    }
    return jobs;
}

std::string unix_seconds(std::chrono::system_clock::time_point time) {
    const auto millis =
        std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch()).count();
    return fmt::format("{}.{:03}", millis / 1000, millis % 1000);
}

// The samples of `outcome`; `previous` are the job's samples of the earlier file (or none).
JobSamples samples_of(const JobOutcome& outcome, const JobSamples* previous) {
    const RepoSyncReport& report = outcome.report;
    auto finished = outcome.finished;
    if (finished.time_since_epoch().count() == 0) {
        finished = outcome.started.time_since_epoch().count() != 0
                       ? outcome.started
                       : std::chrono::system_clock::now();
    }
    const auto started =
        outcome.started.time_since_epoch().count() != 0 ? outcome.started : finished;
    const double seconds = std::max(0.0, std::chrono::duration<double>(finished - started).count());
    JobSamples samples;
    const bool ok = outcome.ok();
    samples[series_key(kLastRun)] = unix_seconds(finished);
    std::string last_success = "0";
    if (ok) {
        last_success = unix_seconds(finished);
    } else if (previous != nullptr) {
        if (const auto found = previous->find(series_key(kLastSuccess)); found != previous->end()) {
            last_success = found->second;
        }
    }
    samples[series_key(kLastSuccess)] = last_success;
    samples[series_key(kDuration)] = fmt::format("{:.3f}", seconds);
    samples[series_key(kSuccess)] = ok ? "1" : "0";
    samples[series_key(kUpToDate)] = ok && !outcome.changed() ? "1" : "0";
    samples[series_key(kDownloadedBytes)] = std::to_string(report.bytes_downloaded);
    samples[series_key(kPackages, "downloaded")] = std::to_string(report.downloaded);
    samples[series_key(kPackages, "kept")] = std::to_string(report.kept);
    samples[series_key(kPackages, "deleted")] = std::to_string(report.deleted.size());
    samples[series_key(kPackages, "failed")] = std::to_string(report.failures.size());
    samples[series_key(kSelected)] = std::to_string(report.selected);
    return samples;
}

}  // namespace

std::string format_metrics(std::string_view previous, std::span<const JobOutcome> outcomes) {
    auto jobs = parse_previous(previous);
    for (const JobOutcome& outcome : outcomes) {
        const auto found = jobs.find(outcome.job);
        JobSamples samples = samples_of(outcome, found == jobs.end() ? nullptr : &found->second);
        jobs[outcome.job] = std::move(samples);
    }
    std::string text;
    for (const Family& family : kFamilies) {
        text +=
            fmt::format("# HELP {} {}\n# TYPE {} gauge\n", family.name, family.help, family.name);
        for (const auto& [job, samples] : jobs) {
            const std::string job_label = escape_label_value(job);
            if (!family.by_result) {
                if (const auto value = samples.find(series_key(family.name));
                    value != samples.end()) {
                    text +=
                        fmt::format("{}{{job=\"{}\"}} {}\n", family.name, job_label, value->second);
                }
                continue;
            }
            for (const std::string_view result : kResults) {
                if (const auto value = samples.find(series_key(family.name, result));
                    value != samples.end()) {
                    text += fmt::format("{}{{job=\"{}\",result=\"{}\"}} {}\n", family.name,
                                        job_label, result, value->second);
                }
            }
        }
    }
    return text;
}

Result<void> write_metrics_file(const std::filesystem::path& file,
                                std::span<const JobOutcome> outcomes) {
    // Runs writing the same file (different --job selections at once) take turns, so each merges
    // what the other wrote and they never share the temporary file. Best effort: a directory that
    // cannot be opened or locked fails below, or is written without the lock.
    const std::filesystem::path directory_path =
        file.has_parent_path() ? file.parent_path() : std::filesystem::path(".");
    const UniqueFd directory = fs::open_directory(directory_path);
    if (directory) {
        while (::flock(directory.get(), LOCK_EX) != 0 && errno == EINTR) {
        }
    }  // released when `directory` is closed
    std::string previous;
    if (auto read = fs::read_file(file)) {
        previous = std::move(*read);
    } else if (read.error().code != ErrorCode::NotFound) {
        return make_error(read.error().code, "cannot read the metrics file", file.string(),
                          read.error().sys_errno);
    }
    if (auto written = fs::replace_file(file, format_metrics(previous, outcomes)); !written) {
        return make_error(written.error().code, "cannot write the metrics file", file.string(),
                          written.error().sys_errno);
    }
    // node_exporter runs as another user: readable by all whatever the umask.
    if (::chmod(file.c_str(), 0644) != 0) {
        return make_errno_error("cannot make the metrics file readable", file.string(), errno);
    }
    return {};
}

}  // namespace rpmirror
