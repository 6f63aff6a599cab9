// Auditing one mirrored repository against reference metadata (see audit/audit.hpp).
#include "audit/audit.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <set>

#include <fmt/core.h>

#include "audit/report_parts.hpp"
#include "checksum/hasher.hpp"
#include "fs/scratch_dir.hpp"
#include "metadata/metadata.hpp"
#include "plan/plan.hpp"
#include "publish/publish.hpp"
#include "store/local_store.hpp"
#include "store/mirror_root.hpp"
#include "util/text.hpp"

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
            return detail.empty() ? "extra" : "extra (" + detail + ")";
    }
    return "unknown problem";
}

namespace {

constexpr std::string_view kRepomdKey = "repodata/repomd.xml";

// One file the mirror must hold, in the store of root `root_index` (0: the mirror; others:
// --safe-write-path's roots beside it).
struct Check {
    store::ExpectedFile file;
    std::size_t root_index = 0;
    std::filesystem::path relative_path;  // as reported
    bool is_metadata = false;
};

// The audit, written once over store::MirrorStore (see audit/audit.hpp).
class Auditor {
  public:
    Auditor(std::string_view repo_id, const audit_parts::StoreAudit& audit, RepoAuditReport& report)
        : audit_(audit),
          report_(report),
          reference_(audit.reference ? *audit.reference : audit.mirror) {
        report_.repo_id = repo_id;
        report_.repo_dir = audit.report_dir;
        report_.reference_root = audit.report_reference;
        roots_.push_back(audit.report_dir);
    }

    Result<void> run() {
        auto scratch = ScratchDir::create("rpmirror-verify");
        if (!scratch) {
            return tl::unexpected(std::move(scratch.error()));
        }
        scratch_.emplace(std::move(*scratch));
        const bool separate_reference = audit_.reference != nullptr;
        auto repomd_bytes = reference_.read(kRepomdKey);
        std::set<std::string> listed;  // package keys (store/mirror_store.hpp)
        if (!repomd_bytes && repomd_bytes.error().code == ErrorCode::NotFound &&
            !separate_reference) {
            // Nothing published (a sync without --download-metadata): what the state recorded,
            // iff the store records checksums.
            auto recorded = audit_.mirror.recorded();
            if (!recorded) {
                return tl::unexpected(std::move(recorded.error()));
            }
            if (recorded->files.empty()) {
                return make_error(ErrorCode::NotFound,
                                  "no repository metadata here (repomd.xml missing)",
                                  reference_.describe(kRepomdKey));
            }
            for (store::ExpectedFile& file : recorded->files) {
                const bool is_metadata = file.key.starts_with("repodata/");
                if (!is_metadata) {
                    ++report_.packages;
                    listed.insert(file.key);
                }
                const std::filesystem::path relative(file.key);
                checks_.push_back({std::move(file), 0, relative, is_metadata});
            }
            run_checks();
            return report_extra(listed);
        }
        if (!repomd_bytes) {
            return tl::unexpected(std::move(repomd_bytes.error()));
        }
        auto repomd = parse_repomd(*repomd_bytes, reference_.describe(kRepomdKey));
        if (!repomd) {
            return tl::unexpected(std::move(repomd.error()));
        }
        const RepomdRecord* primary = repomd->find("primary");
        if (primary == nullptr) {
            return make_error(ErrorCode::BadInput, "lists no primary metadata",
                              reference_.describe(kRepomdKey));
        }

        // The mirror's own metadata: every record the reference lists.
        std::optional<std::filesystem::path> local_primary;
        bool has_repodata = !separate_reference;
        if (separate_reference) {
            auto holds = audit_.mirror.holds_below("repodata");
            if (!holds) {
                return tl::unexpected(std::move(holds.error()));
            }
            has_repodata = *holds;
        }
        if (has_repodata) {
            // A filtered mirror publishes metadata of its own (what its recorded selection
            // keeps of upstream's): judged against what it published from upstream's current
            // metadata, never record by record against upstream's.
            std::optional<Repomd> own;
            if (separate_reference) {
                auto filtered = filtered_metadata(*repomd_bytes);
                if (!filtered) {
                    return tl::unexpected(std::move(filtered.error()));
                }
                own = std::move(*filtered);
                if (!own) {
                    compare_repomd(*repomd_bytes);
                }
            }
            for (const RepomdRecord& record : own ? own->records : repomd->records) {
                add_metadata_check(record, record.type == "primary" ? &local_primary : nullptr);
            }
            run_checks();
        }

        // The package list: primary.xml, verified before it is trusted.
        auto primary_relative = safe_relative_path(primary->location_href, "primary metadata");
        if (!primary_relative) {
            return tl::unexpected(std::move(primary_relative.error()));
        }
        const std::string primary_key = primary_relative->generic_string();
        if (!separate_reference) {
            for (const AuditProblem& problem : report_.problems) {
                if (local_primary && problem.path == *local_primary) {
                    return make_error(ErrorCode::Corrupt,
                                      "primary metadata " + problem.describe() +
                                          "; the package list cannot be trusted, packages not "
                                          "audited",
                                      reference_.describe(primary_key));
                }
            }
        }
        auto primary_path = fetch_record(*primary, primary_key);
        if (!primary_path) {
            Error error = std::move(primary_path.error());
            error.message += "; the package list cannot be trusted, packages not audited";
            return tl::unexpected(std::move(error));
        }
        RepoPackageSource source;
        source.primary_path = *primary_path;
        source.primary_name = reference_.describe(primary_key);
        source.primary_open_size = primary->open_size;
        if (const RepomdRecord* modules = repomd->find("modules");
            modules != nullptr && audit_.selection.newest_only) {
            // Module streams decide what --newest-only kept: verified before they are trusted.
            auto modules_relative = safe_relative_path(modules->location_href, "module metadata");
            if (!modules_relative) {
                return tl::unexpected(std::move(modules_relative.error()));
            }
            const std::string modules_key = modules_relative->generic_string();
            auto fetched = fetch_record(*modules, modules_key);
            if (!fetched) {
                Error error = std::move(fetched.error());
                error.message +=
                    "; the newest packages of module streams cannot be chosen, "
                    "packages not audited";
                return tl::unexpected(std::move(error));
            }
            source.modules_path = *fetched;
            source.modules_name = reference_.describe(modules_key);
        }
        auto packages = audit_parts::read_packages(source, audit_.selection, report_);
        if (!packages) {
            return tl::unexpected(std::move(packages.error()));
        }
        const PackageIndex& index = *packages->index;

        // The packages, at the safe paths the planner gives them (a bucket has no symlinks, but
        // an href must still name a key inside the repository: the sync refuses any other).
        PathPolicy policy;
        policy.safe_write_path = audit_.safe_write_path;
        const std::filesystem::path plan_root =
            audit_.plan_root.empty() ? scratch_->path() / "plan" : audit_.plan_root;
        auto plan = plan_sync(index, packages->selection, plan_root, policy, report_.repo_id);
        if (!plan) {
            return tl::unexpected(std::move(plan.error()));
        }
        roots_ = plan->roots;
        roots_[0] = audit_.report_dir;
        report_.packages = plan->targets.size();
        for (const PackageTarget& target : plan->targets) {
            const PackageView package = index[target.position];
            checks_.push_back({{target.destination.generic_string(), package.checksum_type,
                                text::to_lower(package.checksum_hex()),
                                // Old createrepo output lists no size: the checksum alone decides.
                                package.package_size == kUnknownSize
                                    ? std::nullopt
                                    : std::optional<std::uint64_t>(package.package_size)},
                               target.root_index,
                               target.relative_path,
                               false});
            if (target.root_index == 0) {
                listed.insert(target.relative_path.generic_string());
            }
        }
        run_checks();
        return report_extra(listed);
    }

  private:
    Result<void> report_extra(const std::set<std::string>& listed) {
        if (!audit_.report_extra) {
            return {};
        }
        auto extra = store::unlisted_packages(audit_.mirror, listed);
        if (!extra) {
            return tl::unexpected(std::move(extra.error()));
        }
        auto partials = audit_.mirror.list_partials();
        if (!partials) {
            return tl::unexpected(std::move(partials.error()));
        }
        for (const auto* files : {&*extra, &*partials}) {
            for (const auto& [key, file] : *files) {
                AuditProblem problem;
                problem.kind = ProblemKind::Extra;
                problem.path = key;
                problem.actual_size = file.size;
                problem.root = audit_.report_dir;
                problem.destination = key;
                if (files == &*partials) {
                    problem.detail = "a partial download a sync left";
                }
                report_.problems.push_back(std::move(problem));
            }
        }
        return {};
    }

    // The metadata record `key` as a local file (a copy from a bucket), verified against
    // `record` before it is parsed.
    Result<std::filesystem::path> fetch_record(const RepomdRecord& record, const std::string& key) {
        auto local = reference_.local_copy(key, scratch_->path());
        if (!local) {
            return local;
        }
        if (auto verified = verify_metadata_file(*local, record); !verified) {
            Error error = std::move(verified.error());
            error.subject = reference_.describe(key);
            return tl::unexpected(std::move(error));
        }
        return local;
    }

    // A problem about the mirror's repodata/repomd.xml, its kind still to set; counted as one
    // metadata file checked.
    AuditProblem index_problem() {
        ++report_.metadata_files;
        AuditProblem problem;
        problem.path = kRepomdKey;
        problem.is_metadata = true;
        problem.root = audit_.report_dir;
        problem.destination = kRepomdKey;
        return problem;
    }

    // verify --remote of a mirror whose last sync published rewritten metadata (a filtered
    // mirror): nullopt iff it did not. Otherwise its own repomd.xml, parsed, after a problem
    // (outdated) iff that is not the one the sync published or upstream's (`reference_bytes`)
    // is no longer the one it was rewritten from.
    Result<std::optional<Repomd>> filtered_metadata(const std::string& reference_bytes) {
        auto recorded = audit_.mirror.recorded();
        if (!recorded) {
            return tl::unexpected(std::move(recorded.error()));
        }
        if (recorded->published_repomd_sha256.empty()) {
            return std::optional<Repomd>();
        }
        auto local_bytes = audit_.mirror.read(kRepomdKey);
        if (!local_bytes) {
            return tl::unexpected(std::move(local_bytes.error()));
        }
        AuditProblem problem = index_problem();
        problem.kind = ProblemKind::Outdated;
        if (hash_bytes(ChecksumType::Sha256, *local_bytes) != recorded->published_repomd_sha256) {
            problem.detail = "is not the filtered repomd.xml the last sync published";
            report_.problems.push_back(std::move(problem));
        } else if (hash_bytes(ChecksumType::Sha256, reference_bytes) != recorded->repomd_sha256) {
            problem.detail = "filtered from an older repomd.xml than the repository's current one";
            report_.problems.push_back(std::move(problem));
        } else {
            ++report_.verified;
        }
        auto own = parse_repomd(*local_bytes, audit_.mirror.describe(kRepomdKey));
        if (!own) {
            return tl::unexpected(std::move(own.error()));
        }
        return std::optional<Repomd>(std::move(*own));
    }

    // With a separate reference: the mirror's repomd.xml must be the reference's.
    void compare_repomd(const std::string& reference_bytes) {
        AuditProblem problem = index_problem();
        auto local_bytes = audit_.mirror.read(kRepomdKey);
        if (!local_bytes) {
            if (local_bytes.error().code == ErrorCode::NotFound) {
                problem.kind = ProblemKind::Missing;
            } else if (local_bytes.error().code == ErrorCode::Unsafe) {
                problem.kind = ProblemKind::NotRegularFile;
                problem.detail = local_bytes.error().message;
            } else {
                problem.kind = ProblemKind::Unreadable;
                problem.detail = local_bytes.error().to_string();
            }
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
        checks_.push_back({{relative->generic_string(), record.checksum.type,
                            text::to_lower(record.checksum.hex), record.size},
                           0,
                           *relative,
                           true});
    }

    // The store of root `index`, opened on first use.
    Result<store::MirrorStore*> store_of(std::size_t index) {
        if (index == 0) {
            return &audit_.mirror;
        }
        if (!beside_[index]) {
            auto opened = audit_.mirror.beside(roots_[index]);
            if (!opened) {
                return tl::unexpected(std::move(opened.error()));
            }
            beside_[index] = std::move(*opened);
        }
        return beside_[index].get();
    }

    // Checks every pending file in its store (presence, size, then digests on all cores) and
    // records the findings in the report; empties checks_.
    void run_checks() {
        beside_.resize(roots_.size());
        std::vector<store::CheckedFile> findings(checks_.size());
        for (std::size_t root = 0; root < roots_.size(); ++root) {
            std::vector<store::ExpectedFile> files;
            std::vector<std::size_t> positions;
            for (std::size_t index = 0; index < checks_.size(); ++index) {
                if (checks_[index].root_index == root) {
                    files.push_back(checks_[index].file);
                    positions.push_back(index);
                }
            }
            if (files.empty()) {
                continue;
            }
            auto store = store_of(root);
            std::vector<store::CheckedFile> checked;
            if (!store) {
                checked.assign(
                    files.size(),
                    {store::Finding::Unreadable, 0, {}, store.error().to_string(), false, 0, {}});
            } else {
                checked = (*store)->check_files(files, {audit_.threads, audit_.use_cache});
            }
            for (std::size_t slot = 0; slot < positions.size(); ++slot) {
                findings[positions[slot]] = std::move(checked[slot]);
            }
        }
        for (std::size_t index = 0; index < checks_.size(); ++index) {
            record(checks_[index], findings[index]);
        }
        checks_.clear();
    }

    void record(const Check& check, const store::CheckedFile& found) {
        if (check.is_metadata) {
            ++report_.metadata_files;
        }
        report_.bytes_hashed += found.bytes_read;
        if (found.finding == store::Finding::Intact) {
            ++report_.verified;
            report_.from_cache += found.from_cache ? 1 : 0;
            if (check.root_index == 0) {
                report_.intact.push_back({check.file.key, check.is_metadata, found.actual_size,
                                          found.version, check.file.type, check.file.digest});
            }
            return;
        }
        if (audit_.packages_on_demand && !check.is_metadata &&
            found.finding == store::Finding::Missing) {
            ++report_.not_held;
            return;
        }
        AuditProblem problem = audit_parts::problem_of(check.file, found);
        problem.path = check.relative_path;
        problem.is_metadata = check.is_metadata;
        problem.root = roots_[check.root_index];
        problem.destination = check.file.key;
        report_.problems.push_back(std::move(problem));
    }

    const audit_parts::StoreAudit& audit_;
    RepoAuditReport& report_;
    store::MirrorStore& reference_;
    std::vector<std::filesystem::path> roots_;
    std::vector<std::unique_ptr<store::MirrorStore>> beside_;
    std::vector<Check> checks_;
    std::optional<ScratchDir> scratch_;
};

}  // namespace

namespace audit_parts {

AuditProblem problem_of(const store::ExpectedFile& expected, const store::CheckedFile& found) {
    AuditProblem problem;
    problem.expected_size = expected.size;
    problem.checksum_type = expected.type;
    problem.detail = found.detail;
    switch (found.finding) {
        case store::Finding::Intact:
        case store::Finding::Missing:
            problem.kind = ProblemKind::Missing;
            break;
        case store::Finding::NotRegular:
            problem.kind = ProblemKind::NotRegularFile;
            break;
        case store::Finding::Escapes:
            problem.kind = ProblemKind::Unsafe;
            break;
        case store::Finding::SizeMismatch:
            problem.kind = ProblemKind::SizeMismatch;
            problem.actual_size = found.actual_size;
            break;
        case store::Finding::DigestMismatch:
            problem.kind = ProblemKind::ChecksumMismatch;
            problem.actual_size = found.actual_size;
            problem.expected_digest = expected.digest;
            problem.actual_digest = found.actual_digest;
            break;
        case store::Finding::Unreadable:
            problem.kind = ProblemKind::Unreadable;
            break;
    }
    return problem;
}

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

RepoAuditReport audit_store(std::string_view repo_id, const StoreAudit& audit) {
    const auto started = std::chrono::steady_clock::now();
    RepoAuditReport report;
    audit.mirror.refresh();  // what the store holds now (a repair may have run since)
    const std::uint64_t requests_before = audit.mirror.requests();
    Auditor auditor(repo_id, audit, report);
    if (auto audited = auditor.run(); !audited) {
        report.error = std::move(audited.error());
    }
    report.s3_requests = audit.mirror.requests() - requests_before;
    finish(report, started);
    return report;
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

RepoAuditReport audit_repository(std::string_view repo_id, std::string_view destination,
                                 const AuditOptions& options) {
    auto root = store::MirrorRoot::open(destination, {{}, options.s3});
    if (!root) {
        RepoAuditReport report;
        report.repo_id = repo_id;
        report.repo_dir = std::filesystem::path(destination);
        report.reference_root = options.reference_root.value_or(report.repo_dir);
        report.error = std::move(root.error());
        return report;
    }
    const std::unique_ptr<store::MirrorStore> mirror = root->repository("");
    mirror->set_ranged_reads(options.ranged_threshold, options.range_size);
    std::optional<store::LocalStore> reference;
    if (options.reference_root) {
        reference.emplace(*options.reference_root);
    }
    audit_parts::StoreAudit audit{*mirror, reference ? &*reference : nullptr};
    audit.report_dir = root->repository_path("");
    audit.report_reference = options.reference_root.value_or(audit.report_dir);
    audit.plan_root = root->plan_root("").value_or(std::filesystem::path());
    audit.safe_write_path = options.safe_write_path;
    audit.selection = options.selection;
    audit.use_cache = options.use_checksum_cache;
    audit.report_extra = options.report_extra;
    audit.threads = options.threads;
    return audit_parts::audit_store(repo_id, audit);
}

}  // namespace rpmirror
