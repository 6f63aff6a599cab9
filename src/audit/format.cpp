// What `rpmirror verify` prints: problem lines, summaries and the JSON report.
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "audit/audit.hpp"
#include "checksum/hasher.hpp"
#include "rpmirror/report/report.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace rpmirror {

namespace {

std::string plural(std::size_t count, std::string_view noun) {
    return fmt::format("{} {}{}", count, noun, count == 1 ? "" : "s");
}

nlohmann::json optional_number(const std::optional<std::uint64_t>& value) {
    return value ? nlohmann::json(*value) : nlohmann::json();
}

nlohmann::json audit_json(const RepoAuditReport& report) {
    nlohmann::json problems = nlohmann::json::array();
    for (const AuditProblem& problem : report.problems) {
        nlohmann::json entry = {
            {"path", problem.path.string()},
            {"kind", problem_kind_name(problem.kind)},
            {"metadata", problem.is_metadata},
            {"message", problem.describe()},
            {"expected_size", optional_number(problem.expected_size)},
            {"actual_size", optional_number(problem.actual_size)},
        };
        if (problem.kind == ProblemKind::ChecksumMismatch && problem.checksum_type) {
            entry["checksum_type"] = checksum_type_name(*problem.checksum_type);
            entry["expected_digest"] = problem.expected_digest;
            entry["actual_digest"] = problem.actual_digest;
        }
        problems.push_back(std::move(entry));
    }
    return {
        {"repo", report.repo_id},
        {"directory", report.repo_dir.string()},
        {"reference", report.reference_root.string()},
        {"ok", report.ok()},
        {"error", report.error ? nlohmann::json(report.error->to_string()) : nlohmann::json()},
        {"error_kind",
         report.error ? nlohmann::json(error_code_name(report.error->code)) : nlohmann::json()},
        {"packages", report.packages},
        {"metadata_files", report.metadata_files},
        {"images", report.images},
        {"verified", report.verified},
        {"not_held", report.not_held},
        {"from_cache", report.from_cache},
        {"bytes_hashed", report.bytes_hashed},
        {"s3_requests", report.s3_requests},
        {"seconds", report.seconds},
        {"problems", std::move(problems)},
        {"warnings", report.warnings},
    };
}

}  // namespace

std::vector<std::string> format_audit_problems(const RepoAuditReport& report) {
    std::vector<std::string> lines;
    for (const AuditProblem& problem : report.problems) {
        lines.push_back(
            fmt::format("{}: {}: {}", report.repo_id, problem.path.string(), problem.describe()));
    }
    for (const std::string& warning : report.warnings) {
        lines.push_back(fmt::format("{}: warning: {}", report.repo_id, warning));
    }
    if (report.error) {
        lines.push_back(fmt::format("{}: ERROR: {}", report.repo_id, report.error->to_string()));
    }
    return lines;
}

std::string format_audit_summary(const RepoAuditReport& report) {
    const std::string counted =
        report.images > 0 && report.packages == 0 && report.metadata_files == 0
            ? plural(report.images, "image")
            : fmt::format("{} and {}", plural(report.packages, "package"),
                          plural(report.metadata_files, "metadata file"));
    std::string checked = fmt::format(
        "{} checked, {} verified in {:.2f} s ({} from the checksum cache, {} hashed)", counted,
        report.verified, report.seconds, report.from_cache, text::megabytes(report.bytes_hashed));
    if (report.not_held > 0) {
        checked += fmt::format("; {} not held (on demand: fetched when asked for)",
                               plural(report.not_held, "package"));
    }
    if (report.error) {
        return fmt::format("{}: FAILED: could not be audited completely ({} found); {}",
                           report.repo_id, plural(report.problems.size(), "problem"), checked);
    }
    if (report.problems.empty()) {
        return fmt::format("{}: OK: {}", report.repo_id, checked);
    }
    return fmt::format("{}: {}: {}", report.repo_id, plural(report.problems.size(), "problem"),
                       checked);
}

std::string format_repair_summary(const RepoAuditReport& audit, const RepairReport& repair) {
    std::string outcome;
    if (repair.error) {
        outcome = "FAILED: " + repair.error->to_string();
    } else {
        outcome = format_summary(repair.sync);
        const std::string prefix = repair.sync.repo_id + ": ";
        if (outcome.starts_with(prefix)) {
            outcome.erase(0, prefix.size());
        }
    }
    return fmt::format("{}: repair: removed {}; sync: {}", audit.repo_id,
                       plural(repair.removed.size(), "damaged file"), outcome);
}

std::string format_audit_json(std::span<const AuditRunEntry> entries, int exit_code) {
    nlohmann::json repositories = nlohmann::json::array();
    for (const AuditRunEntry& entry : entries) {
        nlohmann::json repository = audit_json(entry.audit);
        if (entry.repair) {
            nlohmann::json removed = nlohmann::json::array();
            for (const auto& path : entry.repair->removed) {
                removed.push_back(path.string());
            }
            nlohmann::json failures = nlohmann::json::array();
            for (const PackageFailure& failure : entry.repair->sync.failures) {
                failures.push_back({{"package", failure.package}, {"reason", failure.reason}});
            }
            const std::optional<Error>& error =
                entry.repair->error ? entry.repair->error : entry.repair->sync.error;
            repository["repair"] = {
                {"ok", entry.repair->ok()},
                {"removed", std::move(removed)},
                {"error", error ? nlohmann::json(error->to_string()) : nlohmann::json()},
                {"downloaded", entry.repair->sync.downloaded},
                {"bytes_downloaded", entry.repair->sync.bytes_downloaded},
                {"metadata_published", entry.repair->sync.metadata_published},
                {"failures", std::move(failures)},
            };
        }
        if (entry.after) {
            repository["after_repair"] = audit_json(*entry.after);
        }
        repositories.push_back(std::move(repository));
    }
    return nlohmann::json{{"exit_code", exit_code}, {"repositories", std::move(repositories)}}.dump(
               2) +
           "\n";
}

}  // namespace rpmirror
