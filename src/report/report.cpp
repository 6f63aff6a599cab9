// Summaries, problem lines, the JSON report and the terminal progress bar.
#include "rpmirror/report/report.hpp"

#include <unistd.h>

#include <fmt/core.h>
#include <fmt/printf.h>

#include <nlohmann/json.hpp>

#include "report/report.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace rpmirror {

std::string format_dnf_number(double number) {
    constexpr std::string_view kSymbols = " kMGTPEZY";
    std::size_t depth = 0;
    const bool is_integer = number == static_cast<double>(static_cast<std::int64_t>(number));
    bool divided = false;
    while (number > 999 && depth + 1 < kSymbols.size()) {
        ++depth;
        number /= 1024.0;
        divided = true;
    }
    const char symbol = kSymbols[depth];
    if (is_integer && !divided) {
        return fmt::format("{} {}", static_cast<std::int64_t>(number), symbol);
    }
    // Python's "%.1f" and "%.0f" round half to even on the binary value, as printf does.
    return number < 9.95 ? fmt::format("{} {}", fmt::sprintf("%.1f", number), symbol)
                         : fmt::format("{} {}", fmt::sprintf("%.0f", number), symbol);
}

std::string format_dnf_package_line(const PackageEvent& event) {
    constexpr std::size_t kWidth = 80;  // dnf's width when stdout is not a terminal
    const auto status_line = [](std::string_view status, std::string_view file,
                                std::string_view message) {
        std::string line = fmt::format("[{}] {}: ", status, file);
        const std::size_t left = line.size() + 1 < kWidth ? kWidth - line.size() - 1 : 0;
        line += message;
        if (message.size() < left) {
            line.append(left - message.size(), ' ');
        }
        return line;
    };
    switch (event.kind) {
        case PackageEvent::Kind::AlreadyPresent:
            return status_line("SKIPPED", event.file_name, "Already downloaded");
        case PackageEvent::Kind::Linked:
            return status_line("LINKED", event.file_name, "Linked from another repository");
        case PackageEvent::Kind::MirrorFailed:
            return status_line(
                "MIRROR", event.file_name,
                event.http_status > 0
                    ? fmt::format("Status code: {} for {}", event.http_status, event.url)
                    : fmt::format("{} for {}", event.reason, event.url));
        case PackageEvent::Kind::Failed:
            return status_line("FAILED", event.file_name,
                               event.mirrors_exhausted
                                   ? "No more mirrors to try - All mirrors were already tried "
                                     "without success"
                                   : event.reason);
        case PackageEvent::Kind::Downloaded:
            break;
    }
    const std::string text =
        event.total > 1 ? fmt::format("({}/{}): {}", event.done, event.total, event.file_name)
                        : event.file_name;
    const double seconds = std::max(event.seconds, 0.001);
    const auto whole_seconds = static_cast<std::int64_t>(seconds);
    const std::string tail =
        fmt::format(" {:>5}B/s | {:>5}B {:>9}    ",
                    format_dnf_number(static_cast<double>(event.bytes) / seconds),
                    format_dnf_number(static_cast<double>(event.bytes)),
                    fmt::format("{:02}:{:02}", whole_seconds / 60, whole_seconds % 60));
    // dnf counts the newline that ends its message.
    const std::size_t left = tail.size() + 1 < kWidth ? kWidth - tail.size() - 1 : 0;
    // '%-*.*s': the text cut or padded to `left` columns.
    std::string line = text.substr(0, left);
    line.append(left - line.size(), ' ');
    return line + tail;
}

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
    // Every selected package is accounted for: one a stopped or failing run never started
    // (interrupted, the disk full) is counted, not left out.
    const std::size_t accounted =
        report.downloaded + report.kept + report.linked + report.failures.size();
    const std::string not_started = report.selected > accounted
                                        ? fmt::format(", not started {} of {} selected",
                                                      report.selected - accounted, report.selected)
                                        : std::string();
    return fmt::format(
        "{}: downloaded {} files / {} in {:.1f} s at {:.1f} MB/s, kept {}, replaced {}, resumed "
        "{}, deleted {}, failed {}{}{}{}{}",
        report.repo_id, report.downloaded, text::megabytes(report.bytes_downloaded), report.seconds,
        rate, report.kept, report.replaced, report.resumed, report.deleted.size(),
        report.failures.size(), not_started,
        !report.metadata_published ? ""
        : report.partial           ? ", metadata published without the failed packages (partial)"
                                   : ", metadata published",
        report.zck_records == 0
            ? std::string()
            : fmt::format(", zchunk: {} record(s) by delta, {} fetched, {} not downloaded",
                          report.zck_records, text::megabytes(report.zck_bytes_fetched),
                          text::megabytes(report.zck_bytes_saved)),
        report.linked == 0
            ? std::string()
            : fmt::format("; {} packages linked from other repositories ({:.1f} MiB not "
                          "downloaded)",
                          report.linked, static_cast<double>(report.linked_bytes) / 1048576.0));
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

namespace {

// The JSON report of a run (format_json_report), as a document.
nlohmann::json json_report(std::span<const RepoSyncReport> reports, int exit_code) {
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
            {"s3_requests", report.s3_requests},
            {"kept", report.kept},
            {"replaced", report.replaced},
            {"resumed", report.resumed},
            {"retries", report.retries},
            {"linked", report.linked},
            {"linked_bytes", report.linked_bytes},
            {"link_fallbacks", report.link_fallbacks},
            {"deleted", std::move(deleted)},
            {"failed", report.failures.size()},
            {"failures", std::move(failures)},
            {"signatures_checked", report.signatures_checked},
            {"metadata_published", report.metadata_published},
            {"partial", report.partial},
            {"left_out", report.left_out},
            {"warnings", report.warnings},
            {"advisories_left_out", report.advisories_left_out},
            {"zck_records", report.zck_records},
            {"zck_bytes_fetched", report.zck_bytes_fetched},
            {"zck_bytes_saved", report.zck_bytes_saved},
            {"zck_fallbacks", report.zck_fallbacks},
            {"seconds", report.seconds},
        };
        if (!report.urls.empty()) {
            entry["urls"] = report.urls;
        }
        if (!report.s3_spool.empty()) {  // an s3:// destination's spool (store/spool.hpp)
            entry["s3_spool"] = report.s3_spool.string();
            entry["s3_spool_in_memory"] = report.s3_spool_in_memory;
        }
        repositories.push_back(std::move(entry));
    }
    return nlohmann::json{{"exit_code", exit_code}, {"repositories", std::move(repositories)}};
}

}  // namespace

std::string format_json_report(std::span<const RepoSyncReport> reports, int exit_code) {
    return json_report(reports, exit_code).dump(2) + "\n";
}

std::string format_jobs_json_report(std::span<const JobOutcome> outcomes, int exit_code) {
    std::vector<RepoSyncReport> reports;
    for (const JobOutcome& outcome : outcomes) {
        reports.push_back(outcome.report);
        if (reports.back().repo_id.empty()) {
            reports.back().repo_id = outcome.job;
        }
        if (!outcome.errors.empty() && !reports.back().error) {
            reports.back().error = Error{ErrorCode::BadInput, outcome.errors.front(), "", 0};
        }
    }
    nlohmann::json json = json_report(reports, exit_code);
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
        json["repositories"][i]["job"] = outcomes[i].job;
        json["repositories"][i]["errors"] = outcomes[i].errors;
    }
    const JobsTally tally = tally_jobs(outcomes);
    json["jobs"] = {{"succeeded", tally.succeeded},
                    {"changed", tally.changed},
                    {"unchanged", tally.unchanged},
                    {"failed", tally.failed}};
    return json.dump(2) + "\n";
}

JobsTally tally_jobs(std::span<const JobOutcome> outcomes) {
    JobsTally tally;
    for (const JobOutcome& outcome : outcomes) {
        if (!outcome.ok()) {
            ++tally.failed;
            continue;
        }
        ++tally.succeeded;
        ++(outcome.changed() ? tally.changed : tally.unchanged);
    }
    return tally;
}

std::string format_jobs_tally(const JobsTally& tally) {
    return fmt::format("jobs: {} succeeded ({} changed, {} unchanged), {} failed", tally.succeeded,
                       tally.changed, tally.unchanged, tally.failed);
}

std::string format_progress_line(std::string_view label, const TransferProgress& progress,
                                 double seconds) {
    const std::uint64_t done = progress.bytes_done;
    const std::uint64_t total = progress.bytes_total;
    const double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0.0;
    const double fraction =
        total > 0 ? static_cast<double>(done) / static_cast<double>(total) : 0.0;
    constexpr int kWidth = 24;
    const int filled = static_cast<int>(std::min(fraction, 1.0) * kWidth);
    const double eta = rate > 0 ? static_cast<double>(total - std::min(done, total)) / rate : 0.0;
    return fmt::format("{} [{}{}] {:3.0f}% ({}/{} files) {} / {} {:.1f} MB/s ETA {:.0f}s", label,
                       std::string(static_cast<std::size_t>(filled), '#'),
                       std::string(static_cast<std::size_t>(kWidth - filled), ' '), fraction * 100,
                       progress.files_done, progress.files_total, text::megabytes(done),
                       text::megabytes(total), rate / 1e6, eta);
}

TerminalProgress::TerminalProgress(int fd, std::string label) : fd_(fd), label_(std::move(label)) {}

void TerminalProgress::update(const TransferProgress& progress) {
    const auto now = std::chrono::steady_clock::now();
    if (drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) {
        return;
    }
    last_draw_ = now;
    const double seconds = std::chrono::duration<double>(now - started_).count();
    const std::string line =
        fmt::format("\r{}\x1b[K", format_progress_line(label_, progress, seconds));
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
