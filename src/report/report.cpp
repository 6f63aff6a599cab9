// Summaries, problem lines, the JSON report and the terminal progress bar.
#include "rpmirror/report.hpp"

#include <unistd.h>

#include <fmt/core.h>

#include <nlohmann/json.hpp>

namespace rpmirror {

namespace {

std::string megabytes(std::uint64_t bytes) {
    return fmt::format("{:.1f} MB", static_cast<double>(bytes) / 1e6);
}

}  // namespace

std::string format_summary(const RepoSyncReport& report) {
    if (report.error) {
        return fmt::format("{}: FAILED: {}", report.repo_id, report.error->to_string());
    }
    if (report.noop) {
        return fmt::format("{}: up to date ({} packages unchanged, nothing downloaded){}",
                           report.repo_id, report.kept,
                           report.deleted.empty()
                               ? std::string()
                               : fmt::format(", deleted {}", report.deleted.size()));
    }
    if (!report.urls.empty() || report.selected == 0) {
        return fmt::format("{}: {} of {} packages selected", report.repo_id, report.selected,
                           report.upstream_packages);
    }
    const double rate = report.seconds > 0
                            ? static_cast<double>(report.bytes_downloaded) / 1e6 / report.seconds
                            : 0.0;
    return fmt::format(
        "{}: downloaded {} files / {} in {:.1f} s at {:.1f} MB/s, kept {}, replaced {}, resumed "
        "{}, deleted {}, failed {}{}",
        report.repo_id, report.downloaded, megabytes(report.bytes_downloaded), report.seconds, rate,
        report.kept, report.replaced, report.resumed, report.deleted.size(), report.failures.size(),
        report.metadata_published ? ", metadata published" : "");
}

std::vector<std::string> format_problems(const RepoSyncReport& report) {
    std::vector<std::string> lines;
    for (const PackageFailure& failure : report.failures) {
        lines.push_back(fmt::format("{}: {}: {}", report.repo_id, failure.package, failure.reason));
        for (const std::string& attempt : failure.attempts) {
            lines.push_back("    tried " + attempt);
        }
    }
    for (const std::string& warning : report.warnings) {
        lines.push_back(fmt::format("{}: warning: {}", report.repo_id, warning));
    }
    return lines;
}

std::string format_json_report(std::span<const RepoSyncReport> reports, int exit_code) {
    nlohmann::json repositories = nlohmann::json::array();
    for (const RepoSyncReport& report : reports) {
        nlohmann::json failures = nlohmann::json::array();
        for (const PackageFailure& failure : report.failures) {
            failures.push_back({{"package", failure.package},
                                {"reason", failure.reason},
                                {"attempts", failure.attempts}});
        }
        nlohmann::json deleted = nlohmann::json::array();
        for (const auto& path : report.deleted) {
            deleted.push_back(path.string());
        }
        nlohmann::json entry = {
            {"repo", report.repo_id},
            {"directory", report.repo_dir.string()},
            {"ok", report.ok()},
            {"error", report.error ? nlohmann::json(report.error->to_string()) : nlohmann::json()},
            {"error_kind",
             report.error ? nlohmann::json(error_code_name(report.error->code)) : nlohmann::json()},
            {"noop", report.noop},
            {"upstream_packages", report.upstream_packages},
            {"selected", report.selected},
            {"downloaded", report.downloaded},
            {"bytes_downloaded", report.bytes_downloaded},
            {"kept", report.kept},
            {"replaced", report.replaced},
            {"resumed", report.resumed},
            {"retries", report.retries},
            {"deleted", std::move(deleted)},
            {"failed", report.failures.size()},
            {"failures", std::move(failures)},
            {"signatures_checked", report.signatures_checked},
            {"metadata_published", report.metadata_published},
            {"warnings", report.warnings},
            {"seconds", report.seconds},
        };
        if (!report.urls.empty()) {
            entry["urls"] = report.urls;
        }
        repositories.push_back(std::move(entry));
    }
    return nlohmann::json{{"exit_code", exit_code}, {"repositories", std::move(repositories)}}.dump(
               2) +
           "\n";
}

TerminalProgress::TerminalProgress(int fd, std::string label) : fd_(fd), label_(std::move(label)) {}

void TerminalProgress::file_finished(std::size_t, const FileResult&) {
    ++files_done_;
    draw();
}

void TerminalProgress::progress(std::uint64_t bytes_done, std::uint64_t bytes_total) {
    bytes_done_ = bytes_done;
    bytes_total_ = bytes_total;
    draw();
}

void TerminalProgress::draw() {
    const auto now = std::chrono::steady_clock::now();
    if (drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) {
        return;
    }
    last_draw_ = now;
    const double seconds = std::chrono::duration<double>(now - started_).count();
    const double rate = seconds > 0 ? static_cast<double>(bytes_done_) / seconds : 0.0;
    const double fraction =
        bytes_total_ > 0 ? static_cast<double>(bytes_done_) / static_cast<double>(bytes_total_)
                         : 0.0;
    constexpr int kWidth = 24;
    const int filled = static_cast<int>(fraction * kWidth);
    const double eta =
        rate > 0 ? static_cast<double>(bytes_total_ - std::min(bytes_done_, bytes_total_)) / rate
                 : 0.0;
    const std::string line =
        fmt::format("\r{} [{}{}] {:3.0f}% {} / {} files {} {:.1f} MB/s ETA {:.0f}s\x1b[K", label_,
                    std::string(static_cast<std::size_t>(filled), '#'),
                    std::string(static_cast<std::size_t>(kWidth - filled), ' '), fraction * 100,
                    megabytes(bytes_done_), files_done_, "done", rate / 1e6, eta);
    (void)!::write(fd_, line.data(), line.size());
    drawn_ = true;
}

void TerminalProgress::finish() {
    if (drawn_) {
        const std::string erase = "\r\x1b[K";
        (void)!::write(fd_, erase.data(), erase.size());
        drawn_ = false;
    }
}

}  // namespace rpmirror
