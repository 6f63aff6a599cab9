// The images of an installation tree, audited as `verify` audits a repository's files (see
// rpmirror/audit.hpp: audit_tree_images).
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/core.h>

#include "fs/durable.hpp"
#include "metadata/treeinfo.hpp"
#include "rpmirror/audit.hpp"

namespace rpmirror {

RepoAuditReport audit_tree_images(std::string_view tree_id, const std::filesystem::path& tree_dir,
                                  bool use_checksum_cache, unsigned threads) {
    const auto started = std::chrono::steady_clock::now();
    RepoAuditReport report;
    report.repo_id = std::string(tree_id);
    report.repo_dir = tree_dir;
    report.reference_root = tree_dir;
    const std::filesystem::path treeinfo_path = tree_dir / std::string(kTreeinfoName);
    auto text = fs::read_file(treeinfo_path);
    if (!text) {
        report.error = std::move(text.error());
        return report;
    }
    auto tree = parse_treeinfo(*text, treeinfo_path.string());
    if (!tree) {
        report.error = std::move(tree.error());
        return report;
    }
    report.images = tree->files.size();
    // Present as regular files (lstat: a symlink is never followed), then hashed together.
    std::vector<VerifyRequest> requests;
    std::vector<const TreeInfo::File*> requested;
    for (const TreeInfo::File& file : tree->files) {
        AuditProblem problem;
        problem.path = file.path;
        problem.root = tree_dir;
        problem.destination = file.path;
        problem.checksum_type = file.type;
        problem.expected_digest = file.digest;
        struct stat st {};
        const std::filesystem::path path = tree_dir / file.path;
        if (::lstat(path.c_str(), &st) != 0) {
            problem.kind = errno == ENOENT || errno == ENOTDIR ? ProblemKind::Missing
                                                               : ProblemKind::Unreadable;
            if (problem.kind == ProblemKind::Unreadable) {
                problem.detail = std::generic_category().message(errno);
            }
            report.problems.push_back(std::move(problem));
            continue;
        }
        if (!S_ISREG(st.st_mode)) {
            problem.kind = ProblemKind::NotRegularFile;
            problem.detail = S_ISLNK(st.st_mode) ? "symlink" : "not a regular file";
            report.problems.push_back(std::move(problem));
            continue;
        }
        requests.push_back({path, file.type, file.digest, std::nullopt});
        requested.push_back(&file);
    }
    VerifyOptions options;
    options.hash.use_cache = use_checksum_cache;
    options.threads = threads;
    const std::vector<VerifyResult> results = verify_files(requests, options);
    for (std::size_t i = 0; i < results.size(); ++i) {
        const VerifyResult& result = results[i];
        const TreeInfo::File& file = *requested[i];
        if (result.from_cache) {
            ++report.from_cache;
        } else if (result.status == VerifyStatus::Ok ||
                   result.status == VerifyStatus::DigestMismatch) {
            report.bytes_hashed += result.actual_size;
        }
        if (result.status == VerifyStatus::Ok) {
            ++report.verified;
            report.intact.push_back({file.path, false});
            continue;
        }
        AuditProblem problem;
        problem.path = file.path;
        problem.root = tree_dir;
        problem.destination = file.path;
        problem.checksum_type = file.type;
        problem.expected_digest = file.digest;
        problem.actual_digest = result.actual_digest;
        problem.actual_size = result.actual_size;
        switch (result.status) {
            case VerifyStatus::DigestMismatch:
                problem.kind = ProblemKind::ChecksumMismatch;
                break;
            case VerifyStatus::Missing:
                problem.kind = ProblemKind::Missing;
                break;
            default:
                problem.kind = ProblemKind::Unreadable;
                problem.detail = result.error ? result.error->to_string() : "cannot be read";
                break;
        }
        report.problems.push_back(std::move(problem));
    }
    std::sort(report.problems.begin(), report.problems.end(),
              [](const AuditProblem& a, const AuditProblem& b) { return a.path < b.path; });
    report.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return report;
}

}  // namespace rpmirror
