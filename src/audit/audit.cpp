// Auditing one mirrored repository against reference metadata (see rpmirror/audit.hpp).
#include "rpmirror/audit.hpp"

#include <fcntl.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <set>

#include <fmt/core.h>

#include "audit/report_parts.hpp"
#include "fs/beneath.hpp"
#include "fs/durable.hpp"
#include "rpmirror/metadata.hpp"
#include "rpmirror/plan.hpp"
#include "rpmirror/publish.hpp"
#include "store/local_store.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror {

std::string_view problem_kind_name(ProblemKind kind) {
    switch (kind) {
        case ProblemKind::Missing:
            return "missing";
        case ProblemKind::SizeMismatch:
            return "size-mismatch";
        case ProblemKind::ChecksumMismatch:
            return "checksum-mismatch";
        case ProblemKind::NotRegularFile:
            return "not-regular-file";
        case ProblemKind::Unsafe:
            return "unsafe";
        case ProblemKind::Unreadable:
            return "unreadable";
        case ProblemKind::Outdated:
            return "outdated";
        case ProblemKind::Extra:
            return "extra";
    }
    return "unknown";
}

std::string AuditProblem::describe() const {
    switch (kind) {
        case ProblemKind::Missing:
            return "missing";
        case ProblemKind::SizeMismatch:
            return fmt::format("size mismatch (expected {}, found {})", expected_size.value_or(0),
                               actual_size.value_or(0));
        case ProblemKind::ChecksumMismatch:
            return fmt::format("checksum mismatch (expected {} {}, found {})",
                               checksum_type_name(checksum_type.value_or(ChecksumType::Sha256)),
                               expected_digest, actual_digest);
        case ProblemKind::NotRegularFile:
            return "not a regular file (" + detail + ")";
        case ProblemKind::Unsafe:
            return "unsafe: " + detail;
        case ProblemKind::Unreadable:
            return "unreadable: " + detail;
        case ProblemKind::Outdated:
            return "outdated (" + detail + ")";
        case ProblemKind::Extra:
            return "extra";
    }
    return "unknown problem";
}

namespace {

constexpr std::string_view kRepomdPath = "repodata/repomd.xml";

// One file the mirror must hold.
struct Check {
    std::filesystem::path relative_path;  // as reported
    std::size_t root_index = 0;
    std::filesystem::path destination;  // below roots[root_index]
    ChecksumType type = ChecksumType::Sha256;
    std::string digest;
    std::optional<std::uint64_t> size;
    bool is_metadata = false;
};

class Auditor {
  public:
    Auditor(std::string_view repo_id, const std::filesystem::path& repo_dir,
            const AuditOptions& options, RepoAuditReport& report)
        : repo_id_(repo_id), repo_dir_(repo_dir), options_(options), report_(report) {
        report_.repo_id = repo_id;
        report_.repo_dir = repo_dir;
        report_.reference_root = options.reference_root.value_or(repo_dir);
    }

    Result<void> run() {
        const std::filesystem::path reference_repomd = report_.reference_root / kRepomdPath;
        auto repomd_bytes = fs::read_file(reference_repomd);
        if (!repomd_bytes) {
            if (repomd_bytes.error().code == ErrorCode::NotFound) {
                repomd_bytes.error().message = "no repository metadata here (repomd.xml missing)";
            }
            return tl::unexpected(std::move(repomd_bytes.error()));
        }
        auto repomd = parse_repomd(*repomd_bytes, reference_repomd.string());
        if (!repomd) {
            return tl::unexpected(std::move(repomd.error()));
        }
        const RepomdRecord* primary = repomd->find("primary");
        if (primary == nullptr) {
            return make_error(ErrorCode::BadInput, "lists no primary metadata",
                              reference_repomd.string());
        }
        roots_.push_back(repo_dir_);

        // The mirror's own metadata: every record the reference lists.
        const bool separate_reference = options_.reference_root.has_value();
        std::optional<std::filesystem::path> local_primary;
        if (!separate_reference || mirror_has_repodata()) {
            if (separate_reference) {
                compare_repomd(*repomd_bytes);
            }
            for (const RepomdRecord& record : repomd->records) {
                add_metadata_check(record, record.type == "primary" ? &local_primary : nullptr);
            }
            run_checks();
        }

        // The package list: primary.xml, verified before it is trusted.
        auto primary_relative = safe_relative_path(primary->location_href, "primary metadata");
        if (!primary_relative) {
            return tl::unexpected(std::move(primary_relative.error()));
        }
        const std::filesystem::path primary_path = report_.reference_root / *primary_relative;
        if (!separate_reference) {
            for (const AuditProblem& problem : report_.problems) {
                if (local_primary && problem.path == *local_primary) {
                    return make_error(ErrorCode::Corrupt,
                                      "primary metadata " + problem.describe() +
                                          "; the package list cannot be trusted, packages not "
                                          "audited",
                                      primary_path.string());
                }
            }
        }
        if (auto verified = verify_metadata_file(primary_path, *primary); !verified) {
            Error error = std::move(verified.error());
            error.message += "; the package list cannot be trusted, packages not audited";
            return tl::unexpected(std::move(error));
        }
        RepoPackageSource source;
        source.primary_path = primary_path;
        source.primary_name = primary_path.string();
        source.primary_open_size = primary->open_size;
        if (const RepomdRecord* modules = repomd->find("modules");
            modules != nullptr && options_.selection.newest_only) {
            // Module streams decide what --newest-only kept: verified before they are trusted.
            auto modules_relative = safe_relative_path(modules->location_href, "module metadata");
            if (!modules_relative) {
                return tl::unexpected(std::move(modules_relative.error()));
            }
            source.modules_path = report_.reference_root / *modules_relative;
            source.modules_name = source.modules_path->string();
            if (auto verified = verify_metadata_file(*source.modules_path, *modules); !verified) {
                Error error = std::move(verified.error());
                error.message +=
                    "; the newest packages of module streams cannot be chosen, "
                    "packages not audited";
                return tl::unexpected(std::move(error));
            }
        }
        auto packages = audit_parts::read_packages(source, options_.selection, report_);
        if (!packages) {
            return tl::unexpected(std::move(packages.error()));
        }
        const PackageIndex* index = &packages->index;
        const Selection& selection = packages->selection;

        // The packages, at the safe paths the planner gives them.
        PathPolicy policy;
        policy.safe_write_path = options_.safe_write_path;
        auto plan = plan_sync(*index, selection, repo_dir_, policy, repo_id_);
        if (!plan) {
            return tl::unexpected(std::move(plan.error()));
        }
        roots_ = plan->roots;
        report_.packages = plan->targets.size();
        std::set<std::string> listed;  // package keys (store/mirror_store.hpp)
        for (const PackageTarget& target : plan->targets) {
            const PackageView package = (*index)[target.position];
            checks_.push_back({target.relative_path, target.root_index, target.destination,
                               package.checksum_type, package.checksum_hex(),
                               // Old createrepo output lists no size: the checksum alone decides.
                               package.package_size == kUnknownSize
                                   ? std::nullopt
                                   : std::optional<std::uint64_t>(package.package_size),
                               false});
            if (target.root_index == 0) {
                listed.insert(target.relative_path.generic_string());
            }
        }
        run_checks();

        if (options_.report_extra) {
            store::LocalStore store(repo_dir_);
            auto extra = store::unlisted_packages(store, listed);
            if (!extra) {
                return tl::unexpected(std::move(extra.error()));
            }
            for (const auto& [key, file] : *extra) {
                const std::filesystem::path path(key);
                AuditProblem problem;
                problem.kind = ProblemKind::Extra;
                problem.path = path;
                problem.root = repo_dir_;
                problem.destination = path;
                report_.problems.push_back(std::move(problem));
            }
        }
        return {};
    }

  private:
    bool mirror_has_repodata() const {
        std::error_code ignored;
        return std::filesystem::is_directory(
            std::filesystem::symlink_status(repo_dir_ / "repodata", ignored));
    }

    // With a separate reference: the mirror's repomd.xml must be the reference's.
    void compare_repomd(const std::string& reference_bytes) {
        ++report_.metadata_files;
        AuditProblem problem;
        problem.path = kRepomdPath;
        problem.is_metadata = true;
        problem.root = repo_dir_;
        problem.destination = kRepomdPath;
        UniqueFd root(::open(repo_dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        const fs::Entry entry = root ? fs::lookup_beneath(root.get(), kRepomdPath)
                                     : fs::Entry{fs::EntryKind::Error, {}, errno};
        if (entry.kind != fs::EntryKind::Regular) {
            report_.problems.push_back(problem_for_entry(std::move(problem), entry));
            return;
        }
        auto local_bytes = fs::read_file(repo_dir_ / kRepomdPath);
        if (!local_bytes) {
            problem.kind = ProblemKind::Unreadable;
            problem.detail = local_bytes.error().to_string();
        } else if (*local_bytes != reference_bytes) {
            problem.kind = ProblemKind::Outdated;
            problem.detail = "differs from the repository's current repomd.xml";
        } else {
            ++report_.verified;
            return;
        }
        report_.problems.push_back(std::move(problem));
    }

    void add_metadata_check(const RepomdRecord& record,
                            std::optional<std::filesystem::path>* remember_path) {
        const std::optional<std::filesystem::path> relative =
            audit_parts::record_path(record, report_);
        if (!relative) {
            return;
        }
        if (remember_path != nullptr) {
            *remember_path = *relative;
        }
        checks_.push_back({*relative, 0, *relative, record.checksum.type, record.checksum.hex,
                           record.size, true});
    }

    // A problem with `check`, its kind and actual size still to be filled in.
    AuditProblem problem_for_check(const Check& check) const {
        AuditProblem problem;
        problem.path = check.relative_path;
        problem.is_metadata = check.is_metadata;
        problem.root = roots_[check.root_index];
        problem.destination = check.destination;
        problem.expected_size = check.size;
        problem.checksum_type = check.type;
        return problem;
    }

    AuditProblem problem_for_entry(AuditProblem problem, const fs::Entry& entry) const {
        switch (entry.kind) {
            case fs::EntryKind::Missing:
                problem.kind = ProblemKind::Missing;
                break;
            case fs::EntryKind::Symlink:
                problem.kind = ProblemKind::NotRegularFile;
                problem.detail = "symlink, not followed";
                break;
            case fs::EntryKind::Directory:
            case fs::EntryKind::Other:
                problem.kind = ProblemKind::NotRegularFile;
                problem.detail = fs::file_kind_name(entry.st.st_mode);
                break;
            case fs::EntryKind::Escapes:
                problem.kind = ProblemKind::Unsafe;
                problem.detail = "a symlinked directory on the way leads outside " +
                                 problem.root.string() + "; not followed";
                break;
            case fs::EntryKind::Regular:
            case fs::EntryKind::Error:
                problem.kind = ProblemKind::Unreadable;
                problem.detail = std::strerror(entry.sys_errno);
                break;
        }
        return problem;
    }

    // Looks every pending check up beneath its root, compares sizes, and hashes the rest on all
    // cores. Appends problems and counts to the report; empties checks_.
    void run_checks() {
        std::vector<UniqueFd> root_fds;
        std::vector<int> root_errnos;
        for (const std::filesystem::path& root : roots_) {
            root_fds.emplace_back(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
            root_errnos.push_back(root_fds.back() ? 0 : errno);
        }
        std::vector<VerifyRequest> requests;
        std::vector<const Check*> requested;
        for (const Check& check : checks_) {
            if (check.is_metadata) {
                ++report_.metadata_files;
            }
            AuditProblem problem = problem_for_check(check);
            const int root_fd = root_fds[check.root_index].get();
            const fs::Entry entry = root_fd >= 0 ? fs::lookup_beneath(root_fd, check.destination)
                                                 : fs::Entry{root_errnos[check.root_index] == ENOENT
                                                                 ? fs::EntryKind::Missing
                                                                 : fs::EntryKind::Error,
                                                             {},
                                                             root_errnos[check.root_index]};
            if (entry.kind != fs::EntryKind::Regular) {
                report_.problems.push_back(problem_for_entry(std::move(problem), entry));
                continue;
            }
            const auto actual_size = static_cast<std::uint64_t>(entry.st.st_size);
            if (check.size && *check.size != actual_size) {
                problem.kind = ProblemKind::SizeMismatch;
                problem.actual_size = actual_size;
                report_.problems.push_back(std::move(problem));
                continue;
            }
            requests.push_back({roots_[check.root_index] / check.destination, check.type,
                                check.digest, check.size});
            requested.push_back(&check);
        }
        VerifyOptions verify_options;
        verify_options.threads = options_.threads;
        verify_options.hash.use_cache = options_.use_checksum_cache;
        const std::vector<VerifyResult> results = verify_files(requests, verify_options);
        for (std::size_t index = 0; index < results.size(); ++index) {
            const VerifyResult& result = results[index];
            const Check& check = *requested[index];
            if (!result.from_cache && (result.status == VerifyStatus::Ok ||
                                       result.status == VerifyStatus::DigestMismatch)) {
                report_.bytes_hashed += result.actual_size;
            }
            if (result.status == VerifyStatus::Ok) {
                ++report_.verified;
                report_.from_cache += result.from_cache ? 1 : 0;
                if (check.root_index == 0) {
                    report_.intact.push_back({check.destination, check.is_metadata});
                }
                continue;
            }
            AuditProblem problem = problem_for_check(check);
            problem.actual_size = result.actual_size;
            switch (result.status) {
                case VerifyStatus::DigestMismatch:
                    problem.kind = ProblemKind::ChecksumMismatch;
                    problem.expected_digest = check.digest;
                    std::transform(problem.expected_digest.begin(), problem.expected_digest.end(),
                                   problem.expected_digest.begin(),
                                   [](unsigned char c) { return std::tolower(c); });
                    problem.actual_digest = result.actual_digest;
                    break;
                case VerifyStatus::SizeMismatch:
                    problem.kind = ProblemKind::SizeMismatch;
                    break;
                case VerifyStatus::Missing:
                    problem.kind = ProblemKind::Missing;
                    break;
                case VerifyStatus::Ok:
                case VerifyStatus::IoError:
                    problem.kind = ProblemKind::Unreadable;
                    problem.detail = result.error ? result.error->to_string() : "unknown error";
                    break;
            }
            report_.problems.push_back(std::move(problem));
        }
        checks_.clear();
    }

    std::string repo_id_;
    std::filesystem::path repo_dir_;
    const AuditOptions& options_;
    RepoAuditReport& report_;
    std::vector<std::filesystem::path> roots_;
    std::vector<Check> checks_;
};

}  // namespace

namespace audit_parts {

std::optional<std::filesystem::path> record_path(const RepomdRecord& record,
                                                 RepoAuditReport& report) {
    auto relative =
        safe_relative_path(record.location_href, "repomd.xml record '" + record.type + "'");
    if (!relative) {
        AuditProblem problem;
        problem.kind = ProblemKind::Unsafe;
        problem.path = record.location_href;
        problem.is_metadata = true;
        problem.detail = relative.error().to_string();
        report.problems.push_back(std::move(problem));
        return std::nullopt;
    }
    if (record.location_base && !record.location_base->empty()) {
        report.warnings.push_back(fmt::format(
            "repomd.xml record '{}' lives at {} (xml:base); its copy in the mirror is not checked",
            record.type, record.location_base->c_str()));
        return std::nullopt;
    }
    return *relative;
}

Result<RepoPackages> read_packages(const RepoPackageSource& source,
                                   const SelectionOptions& selection, RepoAuditReport& report) {
    auto packages = read_repo_packages(source, selection);
    if (!packages) {
        return packages;
    }
    for (const IndexIssue& issue : packages->skipped) {
        report.warnings.push_back(issue.message);
    }
    report.warnings.insert(report.warnings.end(), packages->warnings.begin(),
                           packages->warnings.end());
    return packages;
}

void finish(RepoAuditReport& report, std::chrono::steady_clock::time_point started) {
    std::stable_sort(report.problems.begin(), report.problems.end(),
                     [](const AuditProblem& left, const AuditProblem& right) {
                         if (left.is_metadata != right.is_metadata) {
                             return left.is_metadata;
                         }
                         return left.path < right.path;
                     });
    report.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

}  // namespace audit_parts

RepoAuditReport audit_repository(std::string_view repo_id, const std::filesystem::path& repo_dir,
                                 const AuditOptions& options) {
    const auto started = std::chrono::steady_clock::now();
    RepoAuditReport report;
    Auditor auditor(repo_id, repo_dir, options, report);
    if (auto audited = auditor.run(); !audited) {
        report.error = std::move(audited.error());
    }
    audit_parts::finish(report, started);
    return report;
}

}  // namespace rpmirror
